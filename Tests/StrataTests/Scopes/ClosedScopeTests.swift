import Foundation
import Strata
import Testing

/// What one task saw in a race between resolving and closing.
private enum ClosedScopeRaceOutcome: Sendable {
  case resolved(ScopeTestResource)
  case refused
  case unexpected(String)
  case closed
}

/// A closed scope resolves nothing and makes no children, and closing never loses an instance.
@Suite struct ClosedScopeTests {
  // MARK: Using a closed scope

  @Test func resolvingFromAClosedScopeIsScopeClosed() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("transient") }
    }
    let request = try container.makeScope(.request, name: "r1")
    _ = try request.resolve(ScopeTestService.self)

    try request.close()

    #expect(request.isClosed)
    let error = try #require(scopeResolutionError { _ = try request.resolve(ScopeTestService.self) })
    #expect(error.code == .scopeClosed)
    #expect(scopeTestIsKey(error.key, of: ScopeTestService.self))
    #expect(error.hint?.contains(#"root → request("r1")"#) == true, "\(error)")
  }

  @Test func everyKindOfResolveFromAClosedScopeIsScopeClosed() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in ScopeTestService("") }
      registry.register(ScopeTestService.self, name: ScopeTestSlot.first) { _ in ScopeTestService("") }
      registry.register(ScopeTestDependency.self) { (_, origin: String) in ScopeTestDependency(origin: origin)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(ScopeTestService.self)
    try request.close()

    let errors = [
      scopeResolutionError { _ = try request.resolve(ScopeTestService.self) },
      scopeResolutionError { _ = try request.resolve(ScopeTestService.self, name: ScopeTestSlot.first) },
      scopeResolutionError { _ = try request.resolve(ScopeTestDependency.self, arguments: "x") },
      scopeResolutionError { _ = try request.resolveIfRegistered(ScopeTestService.self) },
      scopeResolutionError { _ = try request.resolveAll(ScopeTestService.self) },
    ]

    #expect(errors.map { $0?.code } == Array(repeating: .scopeClosed, count: 5))
  }

  @Test func aClosedContainerDoesNotHandOutItsSingletons() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .singleton) { _ in ScopeTestService("") }
    }
    _ = try container.resolve(ScopeTestService.self)

    try container.close()

    #expect(scopeResolutionError { _ = try container.resolve(ScopeTestService.self) }?.code == .scopeClosed)
  }

  @Test func makingAChildOfAClosedScopeIsScopeClosed() throws {
    let container = Container()
    let session = try container.makeScope(.session, name: "s1")
    try session.close()

    let plain = try #require(scopeResolutionError { _ = try session.makeScope(.request) })
    let withRegistrations = scopeResolutionError {
      _ = try session.makeScope(.request) { registry in
        registry.register(ScopeTestService.self) { _ in ScopeTestService("") }
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

    let error = scopeResolutionError {
      try request.register { registry in
        registry.register(ScopeTestService.self) { _ in ScopeTestService("") }
      }
    }

    #expect(error?.code == .scopeClosed)
  }

  @Test func makeScopeWithABuildThatThrowsRethrowsAndLeavesTheParentClean() throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.session)) { _ in
        ScopeTestResource("session", log: log)
      }
    }

    #expect(throws: ScopeTestDisposalFailure(label: "build")) {
      _ = try container.makeScope(.session) { registry in
        registry.register(ScopeTestService.self) { _ in ScopeTestService("") }
        throw ScopeTestDisposalFailure(label: "build")
      }
    }

    try container.close()
    #expect(log.entries.isEmpty)
  }

  @Test func aClosedChildIsNoLongerKeptAliveByItsParent() throws {
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.request)) { _ in ScopeTestResource("") }
    }
    weak var closedChild: Scope?
    do {
      let request = try container.makeScope(.request)
      _ = try request.resolve(ScopeTestResource.self)
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
        registry.register(ScopeTestService.self) { _ in ScopeTestService("session") }
      }.makeScope(.request)
      session = request?.parent
      child = request

      #expect(session != nil, "a scope holds its parent")
      #expect(try request?.resolve(ScopeTestService.self).label == "session")
      request = nil
    }

    #expect(child == nil)
    #expect(session == nil, "a freed scope gives its parent back")
  }

  @Test func childrenClosedThroughTheirParentAreFreedWithIt() throws {
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.request)) { _ in ScopeTestResource("") }
    }
    weak var session: Scope?
    weak var request: Scope?
    do {
      let open = try container.makeScope(.session)
      let child = try open.makeScope(.request)
      _ = try child.resolve(ScopeTestResource.self)  // owns a disposable: linked into `open`
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
      registry.register(ScopeTestService.self) { _ in ScopeTestService("") }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let nested = try request.makeScope(.scopeTestTenant)

    try session.close()

    #expect(session.isClosed)
    #expect(request.isClosed)
    #expect(nested.isClosed)
    #expect(!container.isClosed)
    #expect(scopeResolutionError { _ = try request.resolve(ScopeTestService.self) }?.code == .scopeClosed)
    #expect(scopeResolutionError { _ = try nested.makeScope(.request) }?.code == .scopeClosed)
    #expect(try container.resolve(ScopeTestService.self).label == "")
  }

  @Test func aChildOfAClosedParentResolvesNothingWhetherOrNotItOwnedAnything() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("transient") }
      registry.register(ScopeTestService.self, name: ScopeTestSlot.first, lifetime: .singleton) { _ in
        ScopeTestService("singleton")
      }
      registry.register(ScopeTestService.self, name: ScopeTestSlot.second, lifetime: .scoped) { _ in
        ScopeTestService("scoped")
      }
      registry.register(ScopeTestResource.self, lifetime: .scoped(.request)) { _ in ScopeTestResource("") }
    }
    let session = try container.makeScope(.session)
    let plainRequest = try session.makeScope(.request, name: "plain")
    let owningRequest = try session.makeScope(.request, name: "owning")
    _ = try owningRequest.resolve(ScopeTestResource.self)

    try session.close()

    for request in [plainRequest, owningRequest] {
      #expect(request.isClosed)
      let codes = [
        scopeResolutionError { _ = try request.resolve(ScopeTestService.self) }?.code,
        scopeResolutionError { _ = try request.resolve(ScopeTestService.self, name: ScopeTestSlot.first) }?
          .code,
        scopeResolutionError { _ = try request.resolve(ScopeTestService.self, name: ScopeTestSlot.second) }?
          .code,
        scopeResolutionError { _ = try request.resolve(ScopeTestResource.self) }?.code,
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
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in ScopeTestService("") }
    }
    let session = try container.makeScope(.session)
    let first = try session.makeScope(.request)
    let second = try session.makeScope(.request)
    let third = try session.makeScope(.request)

    try second.close()

    #expect(!session.isClosed)
    #expect(!first.isClosed)
    #expect(!third.isClosed)
    _ = try first.resolve(ScopeTestService.self)
    _ = try third.resolve(ScopeTestService.self)
    let later = try session.makeScope(.request)
    _ = try later.resolve(ScopeTestService.self)

    try session.close()
    #expect([first, third, later].allSatisfy { $0.isClosed })
  }

  // MARK: Closing while creating

  @Test func aScopedInstanceWhoseScopeClosesWhileItIsMadeIsDisposedAndTheResolveFails() throws {
    let disposed = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.request)) { resolver in
        try resolver.currentScope.close()
        return ScopeTestResource("orphan", disposed: disposed)
      }
    }
    let request = try container.makeScope(.request)

    let error = scopeResolutionError { _ = try request.resolve(ScopeTestResource.self) }

    #expect(error?.code == .scopeClosed)
    #expect(disposed.value == 1, "an instance made for a closed scope is disposed, not leaked")
    #expect(request.isClosed)
  }

  @Test func aChildSingletonWhoseScopeClosesWhileItIsMadeIsDisposedAndTheResolveFails() throws {
    let disposed = ScopeTestCounter()
    let container = Container()
    let tenant = try container.makeScope(.scopeTestTenant) { registry in
      registry.register(ScopeTestResource.self, lifetime: .singleton) { resolver in
        try resolver.currentScope.close()
        return ScopeTestResource("orphan", disposed: disposed)
      }
    }

    let error = scopeResolutionError { _ = try tenant.resolve(ScopeTestResource.self) }

    #expect(error?.code == .scopeClosed)
    #expect(disposed.value == 1)
  }

  // MARK: Racing resolve and close

  @Test(.timeLimit(.minutes(1)))
  func aResolveRacingCloseGetsAnInstanceTheCloseDisposesOrScopeClosed() async throws {
    let created = ScopeTestCounter()
    let disposed = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.request)) { _ in
        usleep(40)  // long enough for the close to land while the factory runs
        return ScopeTestResource("resource \(created.increment())", disposed: disposed)
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
            try? scopeTestCloseSynchronously(request)
          } else {
            try? await request.close()
          }
          return .closed
        }
        for _ in 0..<4 {
          group.addTask {
            do {
              return .resolved(try request.resolve(ScopeTestResource.self))
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
      var instances: [ScopeTestResource] = []
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
