import Strata
import Testing

/// Who owns a disposable instance: which scope disposes it, and what keeps it alive.
@Suite struct DisposalOwnershipTests {
  @Test func rootSingletonsAreDisposedWhenTheContainerClosesNotWithTheScopeThatAskedFirst() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .singleton) { _ in
        TrackedResource("lazy", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.second, lifetime: .eagerSingleton) { _ in
        TrackedResource("eager", log: log)
      }
    }
    let request = try container.makeScope(.request)
    let lazy = try request.resolve(TrackedResource.self, name: Ordinal.first)

    try request.close()
    #expect(lazy.disposeCount == 0)
    #expect(log.elements.isEmpty)

    try container.close()
    #expect(log.elements == ["dispose lazy", "dispose eager"])
    #expect(lazy.disposeCount == 1)
  }

  @Test func aSingletonRegisteredInAChildIsDisposedWithThatChild() throws {
    let log = Collector<String>()
    let container = Container()
    let tenant = try container.makeScope(.customTenant) { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { _ in
        TrackedResource("tenant", log: log)
      }
    }
    let request = try tenant.makeScope(.request)
    let resource = try request.resolve(TrackedResource.self)

    try request.close()
    #expect(resource.disposeCount == 0)

    try tenant.close()
    #expect(resource.disposeCount == 1)
    try container.close()
    #expect(log.elements == ["dispose tenant"])
  }

  @Test func aForwardedSingletonIsDisposedOnceWithTheContainer() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { _ in
        TrackedResource("shared", log: log)
      }
      .forwarding(to: (any Disposable).self)
    }
    let request = try container.makeScope(.request)

    let forwarded = try request.resolve((any Disposable).self)
    let direct = try container.resolve(TrackedResource.self)
    #expect((forwarded as? TrackedResource) === direct)

    try request.close()
    #expect(direct.disposeCount == 0)
    try container.close()
    #expect(direct.disposeCount == 1)
    #expect(log.elements == ["dispose shared"])
  }

  @Test func anEagerSingletonRegisteredInAChildIsDisposedWithThatChild() throws {
    let log = Collector<String>()
    let container = Container()
    let tenant = try container.makeScope(.customTenant) { registry in
      registry.register(TrackedResource.self, lifetime: .eagerSingleton) { _ in
        TrackedResource("eager tenant", log: log)
      }
    }

    try tenant.close()

    #expect(log.elements == ["dispose eager tenant"])
    try container.close()
    #expect(log.elements == ["dispose eager tenant"])
  }

  @Test func aSessionScopedInstanceResolvedFromARequestBelongsToTheSession() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.session)) { _ in TrackedResource("cart")
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let cart = try request.resolve(TrackedResource.self)

    try request.close()
    #expect(cart.disposeCount == 0)

    try session.close()
    #expect(cart.disposeCount == 1)
  }

  @Test func disposableTransientsFromTheRootAreNeverTrackedAndFreeWhenDropped() throws {
    let created = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self) { _ in
        TrackedResource("transient \(created.increment())", disposed: disposed)
      }
    }

    var references: [WeakBox<TrackedResource>] = []
    references.reserveCapacity(1000)
    for _ in 0..<1000 {
      let resource = try container.resolve(TrackedResource.self)
      references.append(WeakBox(resource))
    }

    #expect(created.value == 1000)
    #expect(references.allSatisfy { $0.object == nil }, "the container must not keep transients alive")
    try container.close()
    #expect(disposed.value == 0, "transients belong to their callers; no scope disposes them")
  }

  @Test func transientGraphAndWeakInstancesResolvedInARequestAreNeitherKeptNorDisposed() throws {
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first) { _ in
        TrackedResource("transient", disposed: disposed)
      }
      registry.register(TrackedResource.self, name: Ordinal.second, lifetime: .graph) { _ in
        TrackedResource("graph", disposed: disposed)
      }
      registry.register(TrackedResource.self, name: Ordinal.third, lifetime: .weak) { _ in
        TrackedResource("weak", disposed: disposed)
      }
    }
    let request = try container.makeScope(.request)

    var references: [WeakBox<TrackedResource>] = []
    for _ in 0..<100 {
      for slot in [Ordinal.first, .second, .third] {
        references.append(WeakBox(try request.resolve(TrackedResource.self, name: slot)))
      }
    }

    #expect(references.allSatisfy { $0.object == nil })
    try request.close()
    try container.close()
    #expect(disposed.value == 0)
  }

  @Test func aScopeKeepsItsScopedInstancesAliveAndNothingKeepsThemOnceTheClosedScopeIsGone() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("kept")
      }
    }
    let reference: WeakBox<TrackedResource>
    do {
      let request = try container.makeScope(.request)
      reference = WeakBox(try request.resolve(TrackedResource.self))
      #expect(reference.object != nil, "the request scope holds its scoped instance")
      #expect(reference.object?.disposeCount == 0)

      try request.close()
      #expect(reference.object?.disposeCount ?? 1 == 1)
    }

    #expect(reference.object == nil, "neither the container nor anything else keeps it")
    try container.close()
  }
}
