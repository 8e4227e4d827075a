import Strata
import Testing

// Service types at the edges of "any type": `Optional`, `Any`, metatypes and function types. A key
// is the type as written, and a shared lifetime makes one instance even when that instance is
// `nil`.

@Suite struct OddServiceTypeTests {
  @Test func anOptionalSingletonThatIsNilIsMadeOnce() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Int?.self, lifetime: .singleton) { _ in
        runs.increment()
        return nil
      }
    }
    #expect(try container.resolve(Int?.self) == nil)
    #expect(try container.resolve(Int?.self) == nil)
    #expect(runs.value == 1)
  }

  @Test func anOptionalScopedServiceThatIsNilIsMadeOncePerScope() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Int?.self, lifetime: .scoped) { _ in
        runs.increment()
        return nil
      }
    }
    let request = try container.makeScope(.request)
    #expect(try request.resolve(Int?.self) == nil)
    #expect(try request.resolve(Int?.self) == nil)
    #expect(runs.value == 1)
  }

  @Test func resolveIfRegisteredTellsARegisteredNilFromNothingRegistered() throws {
    let container = try Container { registry in
      registry.register(Int?.self) { _ in nil }
      registry.register(String?.self, instance: nil)
    }
    let registered = try #require(try container.resolveIfRegistered(Int?.self))
    #expect(registered == nil)
    let instance = try #require(try container.resolveIfRegistered(String?.self))
    #expect(instance == nil)
    #expect(try container.resolveIfRegistered(Double?.self) == nil)
    #expect(try container.resolveAll(String?.self).count == 1)
  }

  @Test func metatypesAndFunctionsAreServicesLikeAnyOther() throws {
    let container = try Container { registry in
      registry.register(Any.Type.self, uncheckedInstance: Int.self)
      registry.register((@Sendable (Int) -> Int).self, lifetime: .singleton) { _ in { $0 * 2 } }
    }
    #expect(try container.resolve(Any.Type.self) == Int.self)
    #expect(try container.resolve((@Sendable (Int) -> Int).self)(21) == 42)
  }

  @Test func anAnySingletonIsMadeOnce() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Any.self, lifetime: .unchecked(.singleton)) { _ in
        runs.increment()
        return 7
      }
    }
    #expect(try container.resolve(Any.self) as? Int == 7)
    #expect(try container.resolve(Any.self) as? Int == 7)
    #expect(runs.value == 1)
  }

  @Test func aWeakRegistrationOfAFunctionIsInvalid() throws {
    let container = try Container { registry in
      registry.register((@Sendable () -> Int).self, lifetime: .weak) { _ in { 1 } }
    }
    let error = resolutionError { _ = try container.resolve((@Sendable () -> Int).self) }
    #expect(error?.code == .invalidRegistration)
  }

  @Test func neverAndVoidServicesFollowTheirLifetimes() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Never.self, lifetime: .singleton) { _ in throw FixtureError(code: 1) }
      registry.register(Void.self, lifetime: .singleton) { _ in runs.increment() }
      registry.register(Void.self, name: Ordinal.first, lifetime: .scoped) { _ in runs.increment() }
      registry.register(Void.self, name: Ordinal.second, lifetime: .weak) { _ in () }
    }
    let never = resolutionError { _ = try container.resolve(Never.self) }
    #expect(never?.code == .factoryFailed)
    #expect(never?.underlying as? FixtureError == FixtureError(code: 1))
    try container.resolve(Void.self)
    try container.resolve(Void.self)
    let request = try container.makeScope(.request)
    try request.resolve(Void.self, name: Ordinal.first)
    try request.resolve(Void.self, name: Ordinal.first)
    #expect(runs.value == 2)
    let weak = resolutionError { try container.resolve(Void.self, name: Ordinal.second) }
    #expect(weak?.code == .invalidRegistration)
    #expect(try container.resolveIfRegistered(Never.self, name: Ordinal.third) == nil)
    try request.close()
  }
}
