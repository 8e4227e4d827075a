import Strata
import Testing

// `onActivated` at its edges: a hook that resolves its own service, a hook that throws, and the
// hooks of eager singletons and weak registrations.

private final class SelfAware: @unchecked Sendable {  // `seen` is written by the hook, before sharing
  var seen: SelfAware?
  init() {}
}

@Suite struct ActivationHookEdgeTests {
  /// "For graph, singleton and scoped lifetimes the new instance is already shared when the hook
  /// runs, so a dependency that asks for it again (on the same thread) receives it."
  @Test(arguments: [Lifetime.singleton, .eagerSingleton, .scoped, .graph])
  func aHookResolvingItsOwnSharedServiceGetsTheInstanceItActivates(lifetime: Lifetime) throws {
    let container = try Container { registry in
      registry.register(SelfAware.self, lifetime: .unchecked(lifetime)) { _ in SelfAware() }
        .onActivated { resolver, made in made.seen = try resolver.resolve(SelfAware.self) }
    }
    let made = try container.resolve(SelfAware.self)
    #expect(made.seen === made)
  }

  /// A transient or weak instance is not shared while its hook runs: asking for it again is a
  /// cycle, reported as one rather than recursing or deadlocking.
  @Test(arguments: [Lifetime.transient, .weak])
  func aHookResolvingItsOwnUnsharedServiceIsACycle(lifetime: Lifetime) throws {
    let container = try Container { registry in
      registry.register(SelfAware.self, lifetime: .unchecked(lifetime)) { _ in SelfAware() }
        .onActivated { resolver, made in made.seen = try resolver.resolve(SelfAware.self) }
    }
    let error = resolutionError { _ = try container.resolve(SelfAware.self) }
    #expect(error?.code == .cycle)
    #expect(error?.cycle.map(identifiers) == identifiers(of: SelfAware.self, SelfAware.self))
  }

  @Test func aTransientWhoseHookThrowsIsDisposedAndTheHooksErrorReported() throws {
    let made = Collector<TrackedResource>()
    let container = try Container { registry in
      registry.register(TrackedResource.self) { _ in
        let resource = TrackedResource("t")
        made.append(resource)
        return resource
      }
      .onActivated { _, _ in throw FixtureError(code: 3) }
    }
    let error = resolutionError { _ = try container.resolve(TrackedResource.self) }
    #expect(error?.code == .activationFailed)
    #expect(error?.underlying as? FixtureError == FixtureError(code: 3))
    #expect(made.elements.map(\.disposeCount) == [1])
  }

  @Test func anEagerSingletonsHookRunsWhenItsBatchIsRegistered() throws {
    let runs = Counter()
    _ = try Container { registry in
      registry.register(Widget.self, lifetime: .eagerSingleton) { _ in Widget(id: 1) }
        .onActivated { _, _ in runs.increment() }
    }
    #expect(runs.value == 1)
  }

  @Test func anEagerSingletonWhoseHookThrowsFailsTheContainerAndIsDisposed() throws {
    let made = Collector<TrackedResource>()
    let error = resolutionError {
      _ = try Container { registry in
        registry.register(TrackedResource.self, lifetime: .eagerSingleton) { _ in
          let resource = TrackedResource("e")
          made.append(resource)
          return resource
        }
        .onActivated { _, _ in throw FixtureError(code: 9) }
      }
    }
    #expect(error?.code == .activationFailed)
    #expect(made.elements.map(\.disposeCount) == [1])
  }

  @Test func aWeakHookRunsForEachNewInstanceOnly() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .weak) { _ in Widget(id: 1) }
        .onActivated { _, _ in runs.increment() }
    }
    var held: Widget? = try container.resolve(Widget.self)
    _ = try container.resolve(Widget.self)
    #expect(runs.value == 1)
    #expect(held != nil)
    held = nil
    _ = try container.resolve(Widget.self)
    #expect(runs.value == 2)
  }
}
