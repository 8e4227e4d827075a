import Strata
import StrataModules
import Testing

// A replacement whose key the base does not register replaces nothing, even when the replacement
// itself registered that key before (listed beside its composition, or installed earlier).

private struct AppModule: Module {
  func register(in registry: Registrar) {
    registry.register(Database.self) { _ in Database() }
  }
}

private let mailerLine = #line + 3
private struct MailerDouble: Module {
  func register(in registry: Registrar) {
    registry.register(Mailer.self) { _ in Mailer() }
  }
}

private struct ClockDouble: Module {
  func register(in registry: Registrar) {
    registry.register(Clock.self) { _ in Clock() }.overriding()
  }
}

@Suite struct StaleReplacementTests {
  private let staleText = """
    staleOverride: the override of `Mailer` replaces nothing
      MailerDouble at StrataModulesTests/StaleReplacementTests.swift:\(mailerLine)
      hint: no other module and no enclosing scope registers it; remove the override (a stale test \
    double?) or register the service it stands in for
    """

  @Test func aReplacementListedBesideItsCompositionOverridesOnlyItself() throws {
    let error = try #require(throws: ModuleError.self) {
      try Container(modules: [MailerDouble(), AppModule().overridden(by: MailerDouble())])
    }
    #expect(error.description == staleText)
  }

  @Test func aReplacementRequiredByItsBaseOverridesOnlyItself() throws {
    struct NeedsTheDouble: Module {
      var requires: [any Module] { [MailerDouble()] }
      func register(in registry: Registrar) {}
    }
    let error = try #require(throws: ModuleError.self) {
      try Container(modules: [NeedsTheDouble().overridden(by: MailerDouble())])
    }
    #expect(error.description == staleText)
  }

  @Test func aReplacementInstalledEarlierOrInAnAncestorOverridesOnlyItself() throws {
    let container = try Container(modules: [MailerDouble()])
    let again = try #require(throws: ModuleError.self) {
      try container.install(AppModule().overridden(by: MailerDouble()))
    }
    #expect(again.description == staleText)
    let session = try #require(throws: ModuleError.self) {
      try container.makeScope(.session, modules: [AppModule().overridden(by: MailerDouble())])
    }
    #expect(session.description == staleText)
    // Nothing of the failed installations is registered or installed.
    #expect(try container.resolveAll(Mailer.self).count == 1)
    #expect(container.installedModules == [ModuleID(MailerDouble.self)])
  }

  @Test func anOverridingRegistrationOfAKeyOnlyItsOwnModuleRegistersIsStale() throws {
    struct SelfOverriding: Module {
      func register(in registry: Registrar) {
        registry.register(Clock.self) { _ in Clock() }
        registry.register(Clock.self) { _ in Clock() }.overriding()
      }
    }
    let error = try #require(throws: ModuleError.self) { try Container(modules: [SelfOverriding()]) }
    #expect(error.code == .staleOverride)
    #expect(error.modules == [ModuleID(SelfOverriding.self)])
  }

  @Test func aReplacementThatAlsoReplacesAnotherModuleIsNotStale() throws {
    struct ClockModule: Module {
      func register(in registry: Registrar) {
        registry.register(Clock.self) { _ in Clock() }
      }
    }
    let container = try Container(modules: [ClockDouble(), ClockModule().overridden(by: ClockDouble())])
    #expect(try container.resolveAll(Clock.self).count == 1)
  }
}
