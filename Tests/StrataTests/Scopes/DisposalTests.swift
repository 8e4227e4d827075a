import Strata
import Testing

/// A weak reference, to prove that nobody keeps an instance alive.
private struct DisposalTestWeakResource {
  weak var object: ScopeTestResource?

  init(_ object: ScopeTestResource) {
    self.object = object
  }
}

/// Closing scopes: what is disposed, in which order, how often, and who owns what.
@Suite struct DisposalTests {
  private static let slots: [ScopeTestSlot] = [.first, .second, .third]

  /// A container with three request-scoped resources named `.first`, `.second`, `.third`, logged as
  /// `dispose first`, … ; those in `failing` throw from `dispose()`.
  private static func makeContainer(log: ScopeTestLog, failing: Set<ScopeTestSlot> = []) throws -> Container {
    try Container { registry in
      for slot in slots {
        registry.register(ScopeTestResource.self, name: slot, lifetime: .scoped(.request)) { _ in
          ScopeTestResource("\(slot)", log: log, fails: failing.contains(slot))
        }
      }
    }
  }

  // MARK: Order and exactly once

  @Test func closingAScopeDisposesItsInstancesInReverseCreationOrder() throws {
    let log = ScopeTestLog()
    let container = try Self.makeContainer(log: log)
    let request = try container.makeScope(.request)

    let second = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.second)
    let first = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)
    let third = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.third)
    #expect(log.entries.isEmpty)

    try request.close()

    #expect(log.entries == ["dispose third", "dispose first", "dispose second"])
    #expect([first, second, third].map(\.disposeCount) == [1, 1, 1])
    #expect(request.isClosed)
  }

  @Test func dependenciesCreatedFirstAreDisposedLast() throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.first, lifetime: .scoped(.request)) { _ in
        ScopeTestResource("connection", log: log)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.second, lifetime: .scoped(.request)) {
        resolver in
        _ = try resolver.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)
        return ScopeTestResource("transaction", log: log)
      }
    }
    let request = try container.makeScope(.request)

    _ = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.second)
    try request.close()

    #expect(log.entries == ["dispose transaction", "dispose connection"])
  }

  @Test func closingTwiceDisposesNothingMore() throws {
    let log = ScopeTestLog()
    let container = try Self.makeContainer(log: log)
    let request = try container.makeScope(.request)
    let first = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)
    let second = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.second)

    try request.close()
    try request.close()
    try container.close()

    #expect(log.entries == ["dispose second", "dispose first"])
    #expect(first.disposeCount == 1)
    #expect(second.disposeCount == 1)
  }

  @Test func closingAnEmptyScopeDisposesNothing() throws {
    let log = ScopeTestLog()
    let container = try Self.makeContainer(log: log)
    let request = try container.makeScope(.request)

    try request.close()

    #expect(request.isClosed)
    #expect(log.entries.isEmpty)
  }

  // MARK: Children before parents

  @Test func closingAParentClosesItsLiveChildrenFirst() throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.session)) { _ in
        ScopeTestResource("session", log: log)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.first, lifetime: .scoped(.request)) {
        resolver in
        ScopeTestResource("request \(resolver.currentScope.name ?? "?")", log: log)
      }
    }
    let session = try container.makeScope(.session)
    let sessionResource = try session.resolve(ScopeTestResource.self)
    let one = try session.makeScope(.request, name: "1")
    let two = try session.makeScope(.request, name: "2")
    _ = try one.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)
    _ = try two.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)

    try session.close()

    let entries = log.entries
    #expect(entries.count == 3)
    #expect(Set(entries.prefix(2)) == ["dispose request 1", "dispose request 2"])
    #expect(entries.last == "dispose session")
    #expect(one.isClosed)
    #expect(two.isClosed)
    #expect(sessionResource.disposeCount == 1)
  }

  @Test func closingTheContainerClosesTheWholeTreeBottomUp() throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.first, lifetime: .singleton) { _ in
        ScopeTestResource("root singleton", log: log)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.second, lifetime: .scoped(.session)) {
        _ in
        ScopeTestResource("session", log: log)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.third, lifetime: .scoped(.request)) { _ in
        ScopeTestResource("request", log: log)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    // Created root-first, so that only "children first" explains a bottom-up order.
    _ = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)
    _ = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.second)
    _ = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.third)

    try container.close()

    #expect(log.entries == ["dispose request", "dispose session", "dispose root singleton"])
    #expect(session.isClosed)
    #expect(request.isClosed)
  }

  @Test func aChildClosedBeforeItsParentIsNotDisposedAgain() throws {
    let log = ScopeTestLog()
    let container = try Self.makeContainer(log: log)
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let resource = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)

    try request.close()
    try session.close()
    try container.close()

    #expect(resource.disposeCount == 1)
    #expect(log.entries == ["dispose first"])
  }

  // MARK: Errors are collected

  @Test func aFailingDisposerIsCollectedAndTheRemainingDisposersStillRun() throws {
    let log = ScopeTestLog()
    let container = try Self.makeContainer(log: log, failing: [.first, .third])
    let request = try container.makeScope(.request)
    let resources = try Self.slots.map { try request.resolve(ScopeTestResource.self, name: $0) }

    let error = try #require(scopeResolutionError { try request.close() })

    #expect(error.code == .disposalFailed)
    #expect(error.disposalErrors.count == 2)
    let underlying = scopeTestUnderlying(error.disposalErrors).compactMap { $0 as? ScopeTestDisposalFailure }
    #expect(
      underlying == [ScopeTestDisposalFailure(label: "third"), ScopeTestDisposalFailure(label: "first")])
    #expect(error.disposalErrors.allSatisfy { $0 is DisposalError })
    #expect(log.entries == ["dispose third", "dispose second", "dispose first"])
    #expect(resources.map(\.disposeCount) == [1, 1, 1])
    #expect(request.isClosed)
    #expect(error.description.contains("third"))
  }

  @Test func disposalErrorsNameTheServiceTheyCameFrom() throws {
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.request)) { _ in
        ScopeTestResource("only", fails: true)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(ScopeTestResource.self)

    let error = try #require(scopeResolutionError { try request.close() })

    let disposalError = try #require(error.disposalErrors.first as? DisposalError)
    #expect(scopeTestIsKey(disposalError.key, of: ScopeTestResource.self))
    #expect(disposalError.underlying as? ScopeTestDisposalFailure == ScopeTestDisposalFailure(label: "only"))
    #expect(scopeTestIsKey(error.key, of: ScopeTestResource.self))
  }

  @Test func theErrorsOfChildrenAndParentMakeOneAggregate() throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.first, lifetime: .scoped(.session)) { _ in
        ScopeTestResource("session", log: log, fails: true)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.second, lifetime: .scoped(.request)) {
        _ in
        ScopeTestResource("request", log: log, fails: true)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.third, lifetime: .scoped(.session)) { _ in
        ScopeTestResource("session, fine", log: log)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    _ = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)
    _ = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.third)
    _ = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.second)

    let error = try #require(scopeResolutionError { try session.close() })

    #expect(error.code == .disposalFailed)
    let labels = scopeTestUnderlying(error.disposalErrors).compactMap {
      ($0 as? ScopeTestDisposalFailure)?.label
    }
    #expect(labels == ["request", "session"])
    #expect(error.disposalErrors.count == 2)
    #expect(log.entries == ["dispose request", "dispose session, fine", "dispose session"])
  }

  // MARK: Ownership

  @Test func rootSingletonsAreDisposedWhenTheContainerClosesNotWithTheScopeThatAskedFirst() throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.first, lifetime: .singleton) { _ in
        ScopeTestResource("lazy", log: log)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.second, lifetime: .eagerSingleton) { _ in
        ScopeTestResource("eager", log: log)
      }
    }
    let request = try container.makeScope(.request)
    let lazy = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)

    try request.close()
    #expect(lazy.disposeCount == 0)
    #expect(log.entries.isEmpty)

    try container.close()
    #expect(log.entries == ["dispose lazy", "dispose eager"])
    #expect(lazy.disposeCount == 1)
  }

  @Test func aSingletonRegisteredInAChildIsDisposedWithThatChild() throws {
    let log = ScopeTestLog()
    let container = Container()
    let tenant = try container.makeScope(.scopeTestTenant) { registry in
      registry.register(ScopeTestResource.self, lifetime: .singleton) { _ in
        ScopeTestResource("tenant", log: log)
      }
    }
    let request = try tenant.makeScope(.request)
    let resource = try request.resolve(ScopeTestResource.self)

    try request.close()
    #expect(resource.disposeCount == 0)

    try tenant.close()
    #expect(resource.disposeCount == 1)
    try container.close()
    #expect(log.entries == ["dispose tenant"])
  }

  @Test func aForwardedSingletonIsDisposedOnceWithTheContainer() throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .singleton) { _ in
        ScopeTestResource("shared", log: log)
      }
      .forwarding(to: (any Disposable).self)
    }
    let request = try container.makeScope(.request)

    let forwarded = try request.resolve((any Disposable).self)
    let direct = try container.resolve(ScopeTestResource.self)
    #expect((forwarded as? ScopeTestResource) === direct)

    try request.close()
    #expect(direct.disposeCount == 0)
    try container.close()
    #expect(direct.disposeCount == 1)
    #expect(log.entries == ["dispose shared"])
  }

  @Test func anEagerSingletonRegisteredInAChildIsDisposedWithThatChild() throws {
    let log = ScopeTestLog()
    let container = Container()
    let tenant = try container.makeScope(.scopeTestTenant) { registry in
      registry.register(ScopeTestResource.self, lifetime: .eagerSingleton) { _ in
        ScopeTestResource("eager tenant", log: log)
      }
    }

    try tenant.close()

    #expect(log.entries == ["dispose eager tenant"])
    try container.close()
    #expect(log.entries == ["dispose eager tenant"])
  }

  @Test func aSessionScopedInstanceResolvedFromARequestBelongsToTheSession() throws {
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.session)) { _ in ScopeTestResource("cart")
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let cart = try request.resolve(ScopeTestResource.self)

    try request.close()
    #expect(cart.disposeCount == 0)

    try session.close()
    #expect(cart.disposeCount == 1)
  }

  @Test func disposableTransientsFromTheRootAreNeverTrackedAndFreeWhenDropped() throws {
    let created = ScopeTestCounter()
    let disposed = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self) { _ in
        ScopeTestResource("transient \(created.increment())", disposed: disposed)
      }
    }

    var references: [DisposalTestWeakResource] = []
    references.reserveCapacity(1000)
    for _ in 0..<1000 {
      let resource = try container.resolve(ScopeTestResource.self)
      references.append(DisposalTestWeakResource(resource))
    }

    #expect(created.value == 1000)
    #expect(references.allSatisfy { $0.object == nil }, "the container must not keep transients alive")
    try container.close()
    #expect(disposed.value == 0, "transients belong to their callers; no scope disposes them")
  }

  @Test func transientGraphAndWeakInstancesResolvedInARequestAreNeitherKeptNorDisposed() throws {
    let disposed = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.first) { _ in
        ScopeTestResource("transient", disposed: disposed)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.second, lifetime: .graph) { _ in
        ScopeTestResource("graph", disposed: disposed)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.third, lifetime: .weak) { _ in
        ScopeTestResource("weak", disposed: disposed)
      }
    }
    let request = try container.makeScope(.request)

    var references: [DisposalTestWeakResource] = []
    for _ in 0..<100 {
      for slot in Self.slots {
        references.append(DisposalTestWeakResource(try request.resolve(ScopeTestResource.self, name: slot)))
      }
    }

    #expect(references.allSatisfy { $0.object == nil })
    try request.close()
    try container.close()
    #expect(disposed.value == 0)
  }

  @Test func aScopeKeepsItsScopedInstancesAliveAndNothingKeepsThemOnceTheClosedScopeIsGone() throws {
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.request)) { _ in
        ScopeTestResource("kept")
      }
    }
    let reference: DisposalTestWeakResource
    do {
      let request = try container.makeScope(.request)
      reference = DisposalTestWeakResource(try request.resolve(ScopeTestResource.self))
      #expect(reference.object != nil, "the request scope holds its scoped instance")
      #expect(reference.object?.disposeCount == 0)

      try request.close()
      #expect(reference.object?.disposeCount ?? 1 == 1)
    }

    #expect(reference.object == nil, "neither the container nor anything else keeps it")
    try container.close()
  }

  // MARK: Asynchronous disposal

  @Test func aSynchronousCloseReportsAsyncDisposalRequiredAndStillDisposesTheOthers() async throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, lifetime: .scoped(.request)) { _ in
        ScopeTestResource("sync", log: log)
      }
      registry.register(ScopeTestAsyncResource.self, lifetime: .scoped(.request)) { _ in
        ScopeTestAsyncResource("pool", log: log)
      }
    }
    let request = try container.makeScope(.request)
    let sync = try request.resolve(ScopeTestResource.self)
    let pool = try request.resolve(ScopeTestAsyncResource.self)

    let error = try #require(scopeResolutionError { try request.close() })

    #expect(error.code == .disposalFailed)
    #expect(error.disposalErrors.count == 1)
    let disposalError = try #require(error.disposalErrors.first as? DisposalError)
    #expect(disposalError.underlying is AsyncDisposalRequired)
    #expect(scopeTestIsKey(disposalError.key, of: ScopeTestAsyncResource.self))
    #expect(sync.disposeCount == 1)
    #expect(request.isClosed)
    // The asynchronous disposer still runs, once, in the background.
    #expect(await scopeTestEventually { pool.disposeCount == 1 })
    try await Task.sleep(for: .milliseconds(20))
    #expect(pool.disposeCount == 1)
  }

  @Test func anAwaitedCloseAwaitsAsyncDisposersInReverseCreationOrderExactlyOnce() async throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.first, lifetime: .scoped(.request)) { _ in
        ScopeTestResource("first", log: log)
      }
      registry.register(ScopeTestAsyncResource.self, lifetime: .scoped(.request)) { _ in
        ScopeTestAsyncResource("pool", log: log)
      }
      registry.register(ScopeTestResource.self, name: ScopeTestSlot.third, lifetime: .scoped(.request)) { _ in
        ScopeTestResource("third", log: log)
      }
    }
    let request = try container.makeScope(.request)
    let first = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.first)
    let pool = try request.resolve(ScopeTestAsyncResource.self)
    let third = try request.resolve(ScopeTestResource.self, name: ScopeTestSlot.third)

    try await request.close()

    #expect(log.entries == ["dispose third", "async dispose pool", "dispose first"])
    #expect(pool.disposeCount == 1)
    try await request.close()
    try scopeTestCloseSynchronously(request)
    #expect([first.disposeCount, pool.disposeCount, third.disposeCount] == [1, 1, 1])
    #expect(log.entries.count == 3)
  }

  @Test func anAwaitedCloseOfAParentAwaitsItsChildrenFirst() async throws {
    let log = ScopeTestLog()
    let container = try Container { registry in
      registry.register(ScopeTestAsyncResource.self, name: ScopeTestSlot.first, lifetime: .scoped(.session)) {
        _ in
        ScopeTestAsyncResource("session", log: log)
      }
      registry.register(ScopeTestAsyncResource.self, name: ScopeTestSlot.second, lifetime: .scoped(.request))
      {
        _ in
        ScopeTestAsyncResource("request", log: log)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    _ = try request.resolve(ScopeTestAsyncResource.self, name: ScopeTestSlot.first)
    _ = try request.resolve(ScopeTestAsyncResource.self, name: ScopeTestSlot.second)

    try await session.close()

    #expect(log.entries == ["async dispose request", "async dispose session"])
    #expect(request.isClosed)
  }

  @Test func anAwaitedCloseCollectsDisposerErrorsToo() async throws {
    let log = ScopeTestLog()
    let container = try Self.makeContainer(log: log, failing: [.second])
    let request = try container.makeScope(.request)
    for slot in Self.slots { _ = try request.resolve(ScopeTestResource.self, name: slot) }

    let error = await scopeAsyncResolutionError { try await request.close() }

    #expect(error?.code == .disposalFailed)
    #expect(
      scopeTestUnderlying(error?.disposalErrors ?? []).compactMap { $0 as? ScopeTestDisposalFailure } == [
        ScopeTestDisposalFailure(label: "second")
      ])
    #expect(log.entries == ["dispose third", "dispose second", "dispose first"])
  }
}
