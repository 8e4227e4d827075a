import Strata
import Testing

/// A service or argument type that prints as a registered one (two modules' `Config`): the
/// `notRegistered` hint names both with their modules, instead of reading as if they were one.
@Suite struct LookalikeTypeTests {
  enum Billing {
    struct Config: Sendable { let id: Int }
  }

  enum Shipping {
    struct Config: Sendable { let id: Int }
  }

  @Test func argumentTypesThatPrintAlikeAreQualified() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { (_, config: Billing.Config) in Widget(id: config.id) }
    }
    #expect(try container.resolve(Widget.self, arguments: Billing.Config(id: 1)).id == 1)
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, arguments: Shipping.Config(id: 2))
    }
    #expect(error.code == .notRegistered)
    #expect(
      error.hint
        == "`Widget` is registered with arguments (StrataTests.LookalikeTypeTests.Billing.Config), "
        + "resolved with (StrataTests.LookalikeTypeTests.Shipping.Config)")
  }

  @Test func argumentTypesThatPrintDifferentlyStayShort() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { (_, config: Billing.Config) in Widget(id: config.id) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, arguments: 2)
    }
    #expect(error.hint == "`Widget` is registered with arguments (Config), resolved with (Int)")
  }

  @Test func aServiceTypeThatPrintsAsARegisteredOneIsQualified() throws {
    let container = try Container { registry in
      registry.register(Billing.Config.self) { _ in Billing.Config(id: 1) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Shipping.Config.self)
    }
    #expect(error.code == .notRegistered)
    #expect(
      error.hint
        == "`StrataTests.LookalikeTypeTests.Billing.Config` is registered, another type named "
        + "`Config`; `StrataTests.LookalikeTypeTests.Shipping.Config` is not: resolve the registered "
        + "type, or register this one")
  }
}
