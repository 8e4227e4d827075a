import Strata
import Testing

/// A `Registrar` or `RegistrationHandle` kept past the closure that received it can no longer
/// change what was published. Using it must not be silently ignored: resolving the key concerned
/// throws `invalidRegistration`, naming the late call.
@Suite struct LateRegistrationTests {
  /// A registrar smuggled out of the closure that received it.
  final class Escaped<Value>: @unchecked Sendable {  // used on one thread only
    var value: Value?
  }

  @Test func aRegistrarUsedAfterPublishingMakesTheKeyThrowInsteadOfNotRegistered() throws {
    let escaped = Escaped<Registrar>()
    let container = try Container { registry in escaped.value = registry }
    let registrar = try #require(escaped.value)

    let lateLine = #line + 1
    registrar.register(Widget.self) { _ in Widget(id: 1) }

    let error = try #require(resolutionError { _ = try container.resolve(Widget.self) })
    #expect(error.code == .invalidRegistration)
    #expect(error.registeredAt?.line == lateLine)
    #expect(error.hint?.contains("after its batch was published") == true)
    #expect(error.hint?.contains("`Widget`") == true)
  }

  @Test func aLateRegistrationOfAnExistingKeyDoesNotLeaveTheOldOneSilentlyInPlace() throws {
    let escaped = Escaped<Registrar>()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      escaped.value = registry
    }
    #expect(try container.resolve(Widget.self).id == 1)

    try #require(escaped.value).register(Widget.self) { _ in Widget(id: 2) }

    let error = try #require(resolutionError { _ = try container.resolve(Widget.self) })
    #expect(error.code == .invalidRegistration)
  }

  @Test func aLateRegistrationWithArgumentsThrowsForExactlyThoseArguments() throws {
    let escaped = Escaped<Registrar>()
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, name: String) in Greeting(text: "hi \(name)") }
      escaped.value = registry
    }

    try #require(escaped.value).register(Greeting.self) { (_, name: String, times: Int) in
      Greeting(text: String(repeating: name, count: times))
    }

    let error = try #require(
      resolutionError { _ = try container.resolve(Greeting.self, arguments: "a", 2) })
    #expect(error.code == .invalidRegistration)
    // The registration with other argument types is untouched.
    #expect(try container.resolve(Greeting.self, arguments: "Ada").text == "hi Ada")
  }

  @Test func aHookAddedAfterPublishingNeverRunsAndTheKeyThrows() throws {
    let escaped = Escaped<RegistrationHandle<Widget>>()
    let factoryRuns = Counter()
    let hookRuns = Counter()
    let container = try Container { registry in
      escaped.value = registry.register(Widget.self, lifetime: .singleton) { _ in
        Widget(id: factoryRuns.increment())
      }
    }

    try #require(escaped.value).onActivated { _, _ in hookRuns.increment() }

    let error = try #require(resolutionError { _ = try container.resolve(Widget.self) })
    #expect(error.code == .invalidRegistration)
    #expect(error.hint?.contains("An `onActivated` hook") == true)
    #expect(factoryRuns.value == 0)
    #expect(hookRuns.value == 0)
  }

  @Test func aForwardAddedAfterPublishingThrowsInvalidRegistrationNotNotRegistered() throws {
    let escaped = Escaped<RegistrationHandle<InMemoryDatabase>>()
    let container = try Container { registry in
      escaped.value = registry.register(InMemoryDatabase.self, lifetime: .singleton) { _ in
        InMemoryDatabase()
      }
    }

    let lateLine = #line + 1
    try #require(escaped.value).forwarding(to: (any Database).self)

    let error = try #require(resolutionError { _ = try container.resolve((any Database).self) })
    #expect(error.code == .invalidRegistration)
    #expect(error.registeredAt?.line == lateLine)
    #expect(error.hint?.contains("A forward to `Database`") == true, "\(error)")
    // The forwarded registration itself keeps working.
    _ = try container.resolve(InMemoryDatabase.self)
  }

  @Test func aLateRegistrationWithDeclaredDependenciesThrowsToo() throws {
    let escaped = Escaped<Registrar>()
    let container = try Container { registry in escaped.value = registry }

    try #require(escaped.value).register(Widget.self, dependsOn: []) { _ in Widget(id: 1) }

    let error = try #require(resolutionError { _ = try container.resolve(Widget.self) })
    #expect(error.code == .invalidRegistration)
  }

  @Test func anOverrideFlagAddedAfterPublishingMakesTheKeyThrow() throws {
    let escaped = Escaped<RegistrationHandle<Widget>>()
    let container = try Container { registry in
      escaped.value = registry.register(Widget.self) { _ in Widget(id: 1) }
    }

    try #require(escaped.value).overriding()

    let error = try #require(resolutionError { _ = try container.resolve(Widget.self) })
    #expect(error.code == .invalidRegistration)
    #expect(error.hint?.contains("`.overriding()`") == true)
  }

  @Test func aRegistrarOfAFailedBatchPublishesNothingLater() throws {
    let escaped = Escaped<Registrar>()
    let container = Container()
    #expect(throws: FixtureError(code: 1)) {
      try container.register { registry in
        escaped.value = registry
        throw FixtureError(code: 1)
      }
    }

    try #require(escaped.value).register(Widget.self) { _ in Widget(id: 1) }

    let error = try #require(resolutionError { _ = try container.resolve(Widget.self) })
    #expect(error.code == .notRegistered)
  }

  @Test func aRegistrarOfAClosedScopeIsHarmless() throws {
    let escaped = Escaped<Registrar>()
    let container = Container()
    let session = try container.makeScope(.session)
    try session.register { registry in escaped.value = registry }
    try session.close()

    try #require(escaped.value).register(Widget.self) { _ in Widget(id: 1) }

    let error = try #require(resolutionError { _ = try session.resolve(Widget.self) })
    #expect(error.code == .scopeClosed)
  }

  @Test func refiningAHandleInsideItsClosureStillWorks() throws {
    let hookRuns = Counter()
    let container = try Container { registry in
      let handle = registry.register(InMemoryDatabase.self, lifetime: .singleton) { _ in
        InMemoryDatabase()
      }
      handle.onActivated { _, _ in hookRuns.increment() }
      handle.forwarding(to: (any Database).self)
    }

    _ = try container.resolve((any Database).self)
    #expect(hookRuns.value == 1)
  }
}
