import Foundation
import Strata
import Testing

/// Scopes under concurrent use: instances made once, children made and closed safely.
@Suite struct ScopeConcurrencyTests {
  /// Resolves `LabeledService` from `scopes[index % scopes.count]` in `count` tasks; returns the
  /// identities of the instances, and the errors as text.
  private static func resolveConcurrently(
    _ count: Int, from scopes: [Scope]
  ) async -> (instances: Set<ObjectIdentifier>, errors: [String]) {
    await withTaskGroup(of: Result<ObjectIdentifier, any Error>.self) { group in
      for index in 0..<count {
        let scope = scopes[index % scopes.count]
        group.addTask {
          Result { ObjectIdentifier(try scope.resolve(LabeledService.self)) }
        }
      }
      var instances: Set<ObjectIdentifier> = []
      var errors: [String] = []
      for await result in group {
        switch result {
        case .success(let id): instances.insert(id)
        case .failure(let error): errors.append("\(error)")
        }
      }
      return (instances, errors)
    }
  }

  @Test(.timeLimit(.minutes(1)))
  func aThousandTasksResolvingOneScopedServiceInOneScopeGetOneInstance() async throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped) { _ in
        usleep(500)
        return LabeledService("run \(runs.increment())")
      }
    }
    let request = try container.makeScope(.request)

    let (instances, errors) = await Self.resolveConcurrently(1000, from: [request])

    #expect(errors.isEmpty, "\(errors.prefix(3))")
    #expect(instances.count == 1)
    #expect(runs.value == 1)
    #expect(try instances.first == ObjectIdentifier(request.resolve(LabeledService.self)))
  }

  @Test(.timeLimit(.minutes(1)))
  func tasksResolvingASessionScopedServiceFromManyRequestsShareOneInstance() async throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.session)) { _ in
        usleep(500)
        return LabeledService("run \(runs.increment())")
      }
    }
    let session = try container.makeScope(.session)
    let requests = try (0..<50).map { _ in try session.makeScope(.request) }

    let (instances, errors) = await Self.resolveConcurrently(1000, from: requests)

    #expect(errors.isEmpty, "\(errors.prefix(3))")
    #expect(instances.count == 1)
    #expect(runs.value == 1)
  }

  @Test(.timeLimit(.minutes(1)))
  func aRequestScopedServiceIsMadeOncePerRequestUnderContention() async throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in
        LabeledService("run \(runs.increment())")
      }
    }
    let requests = try (0..<20).map { _ in try container.makeScope(.request) }

    let (instances, errors) = await Self.resolveConcurrently(1000, from: requests)

    #expect(errors.isEmpty, "\(errors.prefix(3))")
    #expect(instances.count == 20)
    #expect(runs.value == 20)
  }

  @Test(.timeLimit(.minutes(1)))
  func aRootSingletonResolvedConcurrentlyFromManyScopesIsMadeOnce() async throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .singleton) { _ in
        pause(microseconds: 2_000)  // keep the factory running while other tasks arrive
        return LabeledService("run \(runs.increment())")
      }
    }
    let session = try container.makeScope(.session)
    let scopes = try [container, session] + (0..<10).map { _ in try session.makeScope(.request) }

    let (instances, errors) = await Self.resolveConcurrently(1000, from: scopes)

    #expect(errors.isEmpty, "\(errors.prefix(3))")
    #expect(instances.count == 1)
    #expect(runs.value == 1)
    #expect(try instances.first == ObjectIdentifier(container.resolve(LabeledService.self)))
  }

  @Test(.timeLimit(.minutes(1)))
  func makingUsingAndClosingRequestScopesConcurrentlyDisposesEachInstanceOnce() async throws {
    let created = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("request \(created.increment())", disposed: disposed)
      }
    }
    let session = try container.makeScope(.session)

    let failures = await withTaskGroup(of: String?.self) { group in
      for _ in 0..<500 {
        group.addTask {
          do {
            let request = try session.makeScope(.request)
            let first = try request.resolve(TrackedResource.self)
            guard try request.resolve(TrackedResource.self) === first else { return "two instances" }
            try await request.close()
            return first.disposeCount == 1 ? nil : "disposed \(first.disposeCount) times"
          } catch {
            return "\(error)"
          }
        }
      }
      var failures: [String] = []
      for await failure in group {
        if let failure { failures.append(failure) }
      }
      return failures
    }

    #expect(failures.isEmpty, "\(failures.prefix(3))")
    #expect(created.value == 500)
    #expect(disposed.value == 500)
    try await session.close()
    #expect(disposed.value == 500, "closed children are not disposed again by their parent")
  }

  @Test(.timeLimit(.minutes(1)))
  func closingAParentWhileChildrenAreBeingMadeLeavesNoChildOpen() async throws {
    let container = Container()

    for _ in 0..<50 {
      let session = try container.makeScope(.session)
      let children = await withTaskGroup(of: Scope?.self) { group in
        for _ in 0..<8 {
          group.addTask {
            do {
              return try session.makeScope(.request)
            } catch let error as ResolutionError {
              #expect(error.code == .scopeClosed)
              return nil
            } catch {
              Issue.record("unexpected error: \(error)")
              return nil
            }
          }
        }
        group.addTask {
          await Task.yield()
          try? await session.close()
          return nil
        }
        var children: [Scope] = []
        for await child in group {
          if let child { children.append(child) }
        }
        return children
      }

      #expect(session.isClosed)
      #expect(children.allSatisfy { $0.isClosed }, "a child made before the close is closed with its parent")
    }
  }

  @Test(.timeLimit(.minutes(1)))
  func concurrentAmbientScopesStayApart() async throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in LabeledService("") }
    }

    let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
      for _ in 0..<200 {
        group.addTask {
          try await container.withScope(.request) { scope in
            let before = try scope.resolve(LabeledService.self)
            await Task.yield()
            guard let current = Scope.current, current === scope else { return false }
            return try current.resolve(LabeledService.self) === before
          }
        }
      }
      var outcomes: [Bool] = []
      for try await outcome in group { outcomes.append(outcome) }
      return outcomes
    }

    #expect(outcomes == Array(repeating: true, count: 200))
  }

  @Test(.timeLimit(.minutes(1)))
  func closingChildrenAndTheirParentConcurrentlyDisposesEachInstanceOnce() async throws {
    let created = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("request \(created.increment())", disposed: disposed)
      }
    }

    for _ in 0..<20 {
      let session = try container.makeScope(.session)
      let requests = try (0..<10).map { _ in try session.makeScope(.request) }
      let resources = try requests.map { try $0.resolve(TrackedResource.self) }

      await withTaskGroup(of: Void.self) { group in
        for request in requests {
          group.addTask { try? await request.close() }
        }
        group.addTask { try? closeSynchronously(session) }
        for await _ in group {}
      }

      #expect(resources.allSatisfy { $0.disposeCount == 1 }, "\(resources.map(\.disposeCount))")
      #expect(requests.allSatisfy { $0.isClosed })
    }
    #expect(created.value == 200)
    #expect(disposed.value == 200)
  }

  /// A parent keeps each child that owns something to dispose until one of the two closes it;
  /// whichever close wins, the parent lets go exactly once, so every scope is freed afterwards.
  @Test(.timeLimit(.minutes(1)))
  func scopesClosedInARaceWithTheirParentAreAllFreed() async throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("") }
    }
    let freed = Locked<[WeakBox<Scope>]>([])

    for _ in 0..<20 {
      try await {
        let session = try container.makeScope(.session)
        let requests = try (0..<10).map { _ in try session.makeScope(.request) }
        for request in requests { _ = try request.resolve(TrackedResource.self) }
        freed.withLock { $0 += ([session] + requests).map { WeakBox($0) } }

        await withTaskGroup(of: Void.self) { group in
          for request in requests {
            group.addTask { try? await request.close() }
          }
          group.addTask { try? await session.close() }
          for await _ in group {}
        }
      }()
    }

    let alive = freed.withLock { scopes in scopes.filter { $0.object != nil }.count }
    #expect(alive == 0, "\(alive) of 220 closed scopes are still alive")
  }
}
