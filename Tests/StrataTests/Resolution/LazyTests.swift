import Strata
import Testing

@Suite struct LazyTests {
  @Test func lazyResolvesOnFirstReadAndKeepsTheInstance() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: runs.increment()) }
    }

    let lazy = container.lazy(Widget.self)
    #expect(!lazy.isResolved)
    #expect(runs.value == 0)

    let first = try lazy.value
    #expect(lazy.isResolved)
    #expect(runs.value == 1)

    let second = try lazy.value
    #expect(first === second, "a Lazy keeps what it resolved, even for a transient registration")
    #expect(runs.value == 1)
  }

  @Test func separateLazinessesResolveSeparately() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: runs.increment()) }
    }
    let one = container.lazy(Widget.self)
    let other = container.lazy(Widget.self)
    #expect(try one.value !== (try other.value))
    #expect(runs.value == 2)
  }

  @Test func failedLazyTriesAgainOnTheNextRead() throws {
    let container = Container()
    let lazy = container.lazy(Widget.self)

    let error = try #require(throws: ResolutionError.self) { try lazy.value }
    #expect(error.code == .notRegistered)
    #expect(!lazy.isResolved)

    try container.register { registry in
      registry.register(Widget.self) { _ in Widget(id: 3) }
    }
    #expect(try lazy.value.id == 3)
    #expect(lazy.isResolved)
  }

  @Test func lazyFromAFactoryResolvesLater() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: runs.increment()) }
      registry.register(WidgetConsumer.self) { resolver in
        WidgetConsumer(lazyWidget: resolver.lazy(Widget.self), makeWidget: resolver.provider(Widget.self))
      }
    }

    let consumer = try container.resolve(WidgetConsumer.self)
    #expect(runs.value == 0)
    #expect(try consumer.lazyWidget.value.id == 1)
    #expect(try consumer.makeWidget().id == 2)
    #expect(runs.value == 2)
  }

  @Test func resolvingLazyDirectlyBuildsOne() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: runs.increment()) }
    }

    let lazy = try container.resolve(Lazy<Widget>.self)
    #expect(runs.value == 0)
    #expect(try lazy.value.id == 1)

    let optional = try container.resolveIfRegistered(Lazy<Widget>.self)
    #expect(optional != nil)
    #expect(runs.value == 1)
  }
  @Test func aLazyKeepsItsValueExactlyAsLongAsItselfAndHoldsValueTypes() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 7) }
      registry.register(Int.self) { _ in 42 }
      registry.register(String.self) { _ in String(repeating: "x", count: 40) }
    }
    weak var released: Widget?
    do {
      let lazy = container.lazy(Widget.self)
      let widget = try lazy.value
      released = widget
      #expect(try lazy.value === widget)
    }
    #expect(released == nil, "the value a Lazy resolved is freed with the Lazy")
    let number = container.lazy(Int.self)
    let text = container.lazy(String.self)
    #expect(try number.value == 42 && number.value == 42)
    #expect(try text.value.count == 40 && text.value == String(repeating: "x", count: 40))
  }
}

/// `resolveIfRegistered` of a `Lazy<T>` or `Provider<T>` answers for `T`.
@Suite struct ResolveIfRegisteredDeferredTests {
  private final class Tracer: Sendable {}

  @Test func aLazyOrProviderOfAnUnregisteredServiceIsNil() throws {
    let container = Container()
    #expect(try container.resolveIfRegistered(Lazy<Tracer>.self) == nil)
    #expect(try container.resolveIfRegistered(Provider<Tracer>.self) == nil)
  }

  @Test func aLazyOrProviderOfARegisteredServiceIsThere() throws {
    let container = try Container { registry in registry.register(Tracer.self) { _ in Tracer() } }
    let request = try container.makeScope(.request)
    #expect(try request.resolveIfRegistered(Lazy<Tracer>.self)?.value != nil)
    #expect(try request.resolveIfRegistered(Provider<Tracer>.self)?.get() != nil)
  }
}
