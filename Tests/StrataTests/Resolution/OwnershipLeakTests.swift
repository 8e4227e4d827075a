import Strata
import Testing

/// Nothing keeps its owner alive: a `Lazy` or `Provider` does not hold its scope, so a scope, a
/// container and what they made are freed once closed and dropped (or dropped without a close).
@Suite struct OwnershipLeakTests {
  @Test func aRequestWhoseScopedServiceHoldsAProviderAndALazyIsFreed() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(ProviderHolder.self, lifetime: .scoped(.request), ProviderHolder.init)
    }
    var scopes: [WeakBox<Scope>] = []
    var holders: [WeakBox<ProviderHolder>] = []
    for _ in 0..<20 {
      let request = try container.makeScope(.request)
      let holder = try request.resolve(ProviderHolder.self)
      #expect(try holder.lazy.value.id == 1)
      #expect(try holder.provider().id == 1)
      scopes.append(WeakBox(request))
      holders.append(WeakBox(holder))
      try request.close()
    }
    #expect(scopes.allSatisfy { $0.object == nil }, "a request scope outlived its close")
    #expect(holders.allSatisfy { $0.object == nil }, "a scoped instance outlived its scope")
  }

  @Test func aContainerWhoseSingletonHoldsALazyIsFreedWhenDropped() throws {
    var container: Container? = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: 2) }
      registry.register(LazyHoldingSingleton.self, lifetime: .singleton, LazyHoldingSingleton.init)
    }
    let singleton = WeakBox(try container?.resolve(LazyHoldingSingleton.self))
    #expect(try singleton.object?.neighbour.value.id == 2)
    let weakContainer = WeakBox(container)
    container = nil
    #expect(weakContainer.object == nil, "a container dropped without close() was not freed")
    #expect(singleton.object == nil)
  }

  @Test func aDroppedContainerReleasesWhatItsValueTypeSingletonsHold() throws {
    var container: Container? = try Container { registry in
      registry.register(WidgetHolder.self, lifetime: .singleton) { _ in WidgetHolder(widget: Widget(id: 5)) }
      registry.register(WidgetHolder.self, name: Ordinal.first, instance: WidgetHolder(widget: Widget(id: 6)))
    }
    let made = WeakBox(try container?.resolve(WidgetHolder.self).widget)
    let registered = WeakBox(try container?.resolve(WidgetHolder.self, name: Ordinal.first).widget)
    #expect(made.object?.id == 5)
    #expect(registered.object?.id == 6)

    container = nil

    #expect(made.object == nil, "a struct singleton was not destroyed with its container")
    #expect(registered.object == nil, "a registered struct instance was not destroyed with its container")
  }

  @Test func aClosedAndDroppedContainerIsFreedWithItsSingletons() throws {
    var container: Container? = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: 2) }
      registry.register(LazyHoldingSingleton.self, lifetime: .singleton, LazyHoldingSingleton.init)
    }
    let singleton = WeakBox(try container?.resolve(LazyHoldingSingleton.self))
    try container?.close()
    let weakContainer = WeakBox(container)
    container = nil
    #expect(weakContainer.object == nil)
    #expect(singleton.object == nil)
  }

  @Test func aLazyOrProviderUsedAfterItsScopeIsGoneThrowsScopeClosed() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 3) }
    }
    var request: Scope? = try container.makeScope(.request)
    let lazy = try #require(request?.lazy(Widget.self))
    let provider = try #require(request?.provider(Widget.self))
    try request?.close()
    request = nil
    let lazyError = try #require(throws: ResolutionError.self) { try lazy.value }
    #expect(lazyError.code == .scopeClosed)
    #expect(lazyError.hint?.contains("freed") == true)
    let providerError = try #require(throws: ResolutionError.self) { try provider() }
    #expect(providerError.code == .scopeClosed)
  }

  @Test func aLazyKeepsWhatItResolvedAfterItsScopeIsGone() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 4) }
    }
    var request: Scope? = try container.makeScope(.request)
    let lazy = try #require(request?.lazy(Widget.self))
    #expect(try lazy.value.id == 4)
    request = nil
    #expect(try lazy.value.id == 4)
  }
}

/// A value-type singleton holding a class instance, whose release shows the value was destroyed.
private struct WidgetHolder: Sendable {
  let widget: Widget
}
