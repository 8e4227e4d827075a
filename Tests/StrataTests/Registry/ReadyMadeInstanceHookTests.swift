import Strata
import Testing

// An activation hook on a ready-made instance: Strata never makes that instance, so the hook
// would never run. The batch fails instead of dropping the hook silently.

private final class Configured: @unchecked Sendable {  // written by the hook only, before sharing
  var logger: Widget?
  init() {}
}

@Suite struct ReadyMadeInstanceHookTests {
  @Test func aHookOnARegisteredInstanceMakesTheContainerThrowInvalidRegistration() throws {
    let runs = Counter()
    let line = #line + 3
    let error = resolutionError {
      _ = try Container { registry in
        registry.register(instance: Configured())
          .onActivated { resolver, configured in
            runs.increment()
            configured.logger = try resolver.resolve(Widget.self)
          }
        registry.register(Widget.self) { _ in Widget(id: 1) }
      }
    }
    #expect(error?.code == .invalidRegistration)
    #expect(error.map { isPlainKey($0.key, of: Configured.self) } == true)
    #expect(error?.registeredAt?.line == line)
    #expect(error?.registrations.count == 1)
    #expect(error?.hint?.contains("onActivated") == true)
    #expect(runs.value == 0)
  }

  @Test func aHookOnAnUncheckedInstanceInALaterBatchPublishesNothing() throws {
    let container = Container()
    let error = resolutionError {
      try container.register { registry in
        registry.register(Widget.self) { _ in Widget(id: 2) }
        registry.register(Configured.self, name: Ordinal.first, uncheckedInstance: Configured())
          .onActivated { _, _ in }
      }
    }
    #expect(error?.code == .invalidRegistration)
    #expect(try container.resolveIfRegistered(Widget.self) == nil)
    #expect(try container.resolveIfRegistered(Configured.self, name: Ordinal.first) == nil)
  }

  @Test func aHookOnAFactoryRegistrationStillRuns() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Configured.self, lifetime: .unchecked(.singleton)) { _ in Configured() }
        .onActivated { _, _ in runs.increment() }
    }
    _ = try container.resolve(Configured.self)
    #expect(runs.value == 1)
  }
}
