import Foundation
import Strata
import Testing

/// What one task saw in a race between resolving and closing.
private enum ClosedScopeRaceOutcome: Sendable {
  case resolved(TrackedResource)
  case refused
  case unexpected(String)
  case closed
}

/// A closed scope resolves nothing and makes no children, and closing never loses an instance.
@Suite struct ClosedScopeTests {
  // MARK: Using a closed scope

  @Test func resolvingFromAClosedScopeIsScopeClosed() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { _ in LabeledService("transient") }
    }
    let request = try container.makeScope(.request, name: "r1")
    _ = try request.resolve(LabeledService.self)

    try request.close()

    #expect(request.isClosed)
    let error = try #require(resolutionError { _ = try request.resolve(LabeledService.self) })
    #expect(error.code == .scopeClosed)
    #expect(isPlainKey(error.key, of: LabeledService.self))
    #expect(error.hint?.contains(#"root → request("r1")"#) == true, "\(error)")
  }

  @Test func everyKindOfResolveFromAClosedScopeIsScopeClosed() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in LabeledService("") }
      registry.register(LabeledService.self, name: Ordinal.first) { _ in LabeledService("") }
      registry.register(Dependency.self) { (_, origin: String) in Dependency(origin: origin)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(LabeledService.self)
    try request.close()

    let errors = [
      resolutionError { _ = try request.resolve(LabeledService.self) },
      resolutionError { _ = try request.resolve(LabeledService.self, name: Ordinal.first) },
      resolutionError { _ = try request.resolve(Dependency.self, arguments: "x") },
      resolutionError { _ = try request.resolveIfRegistered(LabeledService.self) },
      resolutionError { _ = try request.resolveAll(LabeledService.self) },
    ]

    #expect(errors.map { $0?.code } == Array(repeating: .scopeClosed, count: 5))
  }

  @Test func aClosedContainerDoesNotHandOutItsSingletons() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .singleton) { _ in LabeledService("") }
    }
    _ = try container.resolve(LabeledService.self)

    try container.close()

    #expect(resolutionError { _ = try container.resolve(LabeledService.self) }?.code == .scopeClosed)
  }

  @Test func makingAChildOfAClosedScopeIsScopeClosed() throws {
    let container = Container()
    let session = try container.makeScope(.session, name: "s1")
    try session.close()

    let plain = try #require(resolutionError { _ = try session.makeScope(.request) })
    let withRegistrations = resolutionError {
      _ = try session.makeScope(.request) { registry in
        registry.register(LabeledService.self) { _ in LabeledService("") }
      }
    }

    #expect(plain.code == .scopeClosed)
    #expect(plain.hint?.contains(#"session("s1")"#) == true, "\(plain)")
    #expect(withRegistrations?.code == .scopeClosed)
  }

  @Test func registeringInAClosedScopeIsScopeClosed() throws {
    let container = Container()
    let request = try container.makeScope(.request)
    try request.close()

    let error = resolutionError {
      try request.register { registry in
        registry.register(LabeledService.self) { _ in LabeledService("") }
      }
    }

    #expect(error?.code == .scopeClosed)
    // Says what was attempted: a registration, not a resolve.
    #expect(error?.message == "the scope was closed; `LabeledService` cannot be registered in it")
    #expect(error?.hint?.contains("is closed; register (or install modules) before closing it") == true)
  }

  @Test func makeScopeWithABuildThatThrowsRethrowsAndLeavesTheParentClean() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.session)) { _ in
        TrackedResource("session", log: log)
      }
    }

    #expect(throws: DisposalFailure(label: "build")) {
      _ = try container.makeScope(.session) { registry in
        registry.register(LabeledService.self) { _ in LabeledService("") }
        throw DisposalFailure(label: "build")
      }
    }

    try container.close()
    #expect(log.elements.isEmpty)
  }

  @Test func aClosedChildIsNoLongerKeptAliveByItsParent() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("") }
    }
    weak var closedChild: Scope?
    do {
      let request = try container.makeScope(.request)
      _ = try request.resolve(TrackedResource.self)
      try request.close()
      closedChild = request
    }

    #expect(closedChild == nil, "a closed request scope must not pile up in a long-lived container")
  }

  @Test func aChildKeepsItsParentAliveAndLetsItGoWhenFreed() throws {
    let container = Container()
    weak var session: Scope?
    weak var child: Scope?
    do {
      var request: Scope? = try container.makeScope(.session) { registry in
        registry.register(LabeledService.self) { _ in LabeledService("session") }
      }.makeScope(.request)
      session = request?.parent
      child = request

      #expect(session != nil, "a scope holds its parent")
      #expect(try request?.resolve(LabeledService.self).label == "session")
      request = nil
    }

    #expect(child == nil)
    #expect(session == nil, "a freed scope gives its parent back")
  }

  @Test func childrenClosedThroughTheirParentAreFreedWithIt() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("") }
    }
    weak var session: Scope?
    weak var request: Scope?
    do {
      let open = try container.makeScope(.session)
      let child = try open.makeScope(.request)
      _ = try child.resolve(TrackedResource.self)  // owns a disposable: linked into `open`
      session = open
      request = child
      try open.close()
    }

    #expect(request == nil, "closing the parent let go of the child it was keeping to close")
    #expect(session == nil)
  }

  // MARK: Closing cascades down, not up

  @Test func closingAParentClosesItsChildrenAndTheirChildren() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { _ in LabeledService("") }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let nested = try request.makeScope(.customTenant)

    try session.close()

    #expect(session.isClosed)
    #expect(request.isClosed)
    #expect(nested.isClosed)
    #expect(!container.isClosed)
    #expect(resolutionError { _ = try request.resolve(LabeledService.self) }?.code == .scopeClosed)
    #expect(resolutionError { _ = try nested.makeScope(.request) }?.code == .scopeClosed)
    #expect(try container.resolve(LabeledService.self).label == "")
  }

  @Test func aChildOfAClosedParentResolvesNothingWhetherOrNotItOwnedAnything() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { _ in LabeledService("transient") }
      registry.register(LabeledService.self, name: Ordinal.first, lifetime: .singleton) { _ in
        LabeledService("singleton")
      }
      registry.register(LabeledService.self, name: Ordinal.second, lifetime: .scoped) { _ in
        LabeledService("scoped")
      }
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("") }
    }
    let session = try container.makeScope(.session)
    let plainRequest = try session.makeScope(.request, name: "plain")
    let owningRequest = try session.makeScope(.request, name: "owning")
    _ = try owningRequest.resolve(TrackedResource.self)

    try session.close()

    for request in [plainRequest, owningRequest] {
      #expect(request.isClosed)
      let codes = [
        resolutionError { _ = try request.resolve(LabeledService.self) }?.code,
        resolutionError { _ = try request.resolve(LabeledService.self, name: Ordinal.first) }?
          .code,
        resolutionError { _ = try request.resolve(LabeledService.self, name: Ordinal.second) }?
          .code,
        resolutionError { _ = try request.resolve(TrackedResource.self) }?.code,
      ]
      #expect(codes == Array(repeating: .scopeClosed, count: 4), "\(request.description): \(codes)")
    }
  }

  @Test func closingTheContainerClosesEveryScope() throws {
    let container = Container()
    let sessions = try (0..<3).map { try container.makeScope(.session, name: "\($0)") }
    let requests = try sessions.map { try $0.makeScope(.request) }

    try container.close()

    #expect(container.isClosed)
    #expect(sessions.allSatisfy { $0.isClosed })
    #expect(requests.allSatisfy { $0.isClosed })
  }

  @Test func closingAChildLeavesItsParentAndSiblingsOpen() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in LabeledService("") }
    }
    let session = try container.makeScope(.session)
    let first = try session.makeScope(.request)
    let second = try session.makeScope(.request)
    let third = try session.makeScope(.request)

    try second.close()

    #expect(!session.isClosed)
    #expect(!first.isClosed)
    #expect(!third.isClosed)
    _ = try first.resolve(LabeledService.self)
    _ = try third.resolve(LabeledService.self)
    let later = try session.makeScope(.request)
    _ = try later.resolve(LabeledService.self)

    try session.close()
    #expect([first, third, later].allSatisfy { $0.isClosed })
  }

  // MARK: Closing while creating

  @Test func aScopedInstanceWhoseScopeClosesWhileItIsMadeIsDisposedAndTheResolveFails() throws {
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { resolver in
        try resolver.currentScope.close()
        return TrackedResource("orphan", disposed: disposed)
      }
    }
    let request = try container.makeScope(.request)

    let error = resolutionError { _ = try request.resolve(TrackedResource.self) }

    #expect(error?.code == .scopeClosed)
    #expect(disposed.value == 1, "an instance made for a closed scope is disposed, not leaked")
    #expect(request.isClosed)
  }

  @Test func aChildSingletonWhoseScopeClosesWhileItIsMadeIsDisposedAndTheResolveFails() throws {
    let disposed = Counter()
    let container = Container()
    let tenant = try container.makeScope(.customTenant) { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { resolver in
        try resolver.currentScope.close()
        return TrackedResource("orphan", disposed: disposed)
      }
    }

    let error = resolutionError { _ = try tenant.resolve(TrackedResource.self) }

    #expect(error?.code == .scopeClosed)
    #expect(disposed.value == 1)
  }

  // MARK: Racing resolve and close

  @Test(.timeLimit(.minutes(1)))
  func aResolveRacingCloseGetsAnInstanceTheCloseDisposesOrScopeClosed() async throws {
    let created = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        usleep(40)  // long enough for the close to land while the factory runs
        return TrackedResource("resource \(created.increment())", disposed: disposed)
      }
    }
    var resolvedCount = 0
    var refusedCount = 0

    for iteration in 0..<300 {
      let request = try container.makeScope(.request)
      let outcomes = await withTaskGroup(of: ClosedScopeRaceOutcome.self) { group in
        // The closer starts first and waits 0 to 100 µs, so that across iterations it lands
        // before, during and after the factory run.
        group.addTask {
          usleep(UInt32(iteration % 6) * 20)
          if iteration.isMultiple(of: 2) {
            try? closeSynchronously(request)
          } else {
            try? await request.close()
          }
          return .closed
        }
        for _ in 0..<4 {
          group.addTask {
            do {
              return .resolved(try request.resolve(TrackedResource.self))
            } catch let error as ResolutionError where error.code == .scopeClosed {
              return .refused
            } catch {
              return .unexpected("\(error)")
            }
          }
        }
        var outcomes: [ClosedScopeRaceOutcome] = []
        for await outcome in group { outcomes.append(outcome) }
        return outcomes
      }

      #expect(request.isClosed)
      var instances: [TrackedResource] = []
      for outcome in outcomes {
        switch outcome {
        case .resolved(let instance): instances.append(instance)
        case .refused: refusedCount += 1
        case .unexpected(let description): Issue.record("unexpected error: \(description)")
        case .closed: break
        }
      }
      resolvedCount += instances.count
      #expect(Set(instances.map(ObjectIdentifier.init)).count <= 1, "one scoped instance per request")
      #expect(instances.allSatisfy { $0.disposeCount == 1 }, "every instance handed out is disposed once")
    }

    #expect(created.value == disposed.value, "created \(created.value), disposed \(disposed.value)")
    #expect(resolvedCount + refusedCount == 300 * 4)
  }
}
