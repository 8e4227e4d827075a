import Strata
import StrataModules
import Testing

private let greetingLine = #line + 4
private struct GreetingModule: Module {
  var requires: [any Module] { [] }
  func register(in registry: Registrar) {
    registry.register((any Greeter).self) { _ in FriendlyGreeter() }
  }
}

private let rivalLine = #line + 3
private struct RivalGreetingModule: Module {
  func register(in registry: Registrar) {
    registry.register((any Greeter).self) { _ in GruffGreeter() }
  }
}

private struct GruffOverrideModule: Module {
  func register(in registry: Registrar) {
    registry.register((any Greeter).self) { _ in GruffGreeter() }.overriding()
  }
}

/// Replacements for `Modules.override`-style composition: no override flag of their own.
private struct GruffReplacementModule: Module {
  func register(in registry: Registrar) {
    registry.register((any Greeter).self) { _ in GruffGreeter() }
  }
}

private struct CountingGreeterOverrideModule: Module {
  func register(in registry: Registrar) {
    registry.register((any Greeter).self) { _ in FriendlyGreeter() }.overriding()
  }
}

private let staleLine = #line + 3
private struct StaleDoubleModule: Module {
  func register(in registry: Registrar) {
    registry.register(Counter.self) { _ in Counter() }.overriding()
  }
}

private struct TwoGreetersModule: Module {
  func register(in registry: Registrar) {
    registry.register((any Greeter).self) { _ in FriendlyGreeter() }
    registry.register((any Greeter).self) { _ in FriendlyGreeter() }
  }
}

@Suite struct OverrideTests {
  @Test func twoModulesRegisteringOneKeyIsAnErrorNamingBothModulesAndSites() throws {
    let container = Container()
    let error = try #require(throws: ModuleError.self) {
      try container.install(GreetingModule(), RivalGreetingModule())
    }

    #expect(error.code == .duplicateRegistration)
    #expect(error.modules == [ModuleID(GreetingModule.self), ModuleID(RivalGreetingModule.self)])
    #expect(
      error.description == """
        duplicateRegistration: `Greeter` is registered by two modules
          GreetingModule at StrataModulesTests/OverrideTests.swift:\(greetingLine)
          RivalGreetingModule at StrataModulesTests/OverrideTests.swift:\(rivalLine)
          hint: keep one of them, or declare the later one an override: `.overriding()` on its \
        registration, or install `base.overridden(by: replacement)`
        """)
    #expect(try container.resolveIfRegistered((any Greeter).self) == nil)
  }

  @Test func aModuleInAChildScopeClashingWithAnAncestorsModuleIsADuplicate() throws {
    let container = try Container(modules: [GreetingModule()])
    let error = try #require(throws: ModuleError.self) {
      try container.makeScope(.session, modules: [RivalGreetingModule()])
    }
    #expect(error.code == .duplicateRegistration)
    #expect(error.modules == [ModuleID(GreetingModule.self), ModuleID(RivalGreetingModule.self)])
  }

  @Test func oneModuleMayRegisterAKeySeveralTimes() throws {
    let container = try Container(modules: [TwoGreetersModule()])
    #expect(try container.resolveAll((any Greeter).self).count == 2)
  }

  @Test func anOverrideRegistrationReplacesAnotherModulesRegistration() throws {
    let container = try Container(modules: [GreetingModule(), GruffOverrideModule()])

    #expect(try container.resolve((any Greeter).self).greet("Ada") == "Ada.")
    // The replaced registration is left out of the batch: resolveAll returns the override alone.
    #expect(try container.resolveAll((any Greeter).self).map { $0.greet("Ada") } == ["Ada."])
    #expect(container.registrations.map(\.isOverride) == [true])
  }

  @Test func anOverrideWinsWhateverTheOrderOfTheModules() throws {
    let container = try Container(modules: [GruffOverrideModule(), GreetingModule()])
    #expect(try container.resolveAll((any Greeter).self).map { $0.greet("Bo") } == ["Bo."])
  }

  @Test func anOverrideInAChildScopeLeavesTheAncestorsRegistrationInResolveAll() throws {
    let container = try Container(modules: [GreetingModule()])
    let session = try container.makeScope(.session, modules: [GruffOverrideModule()])

    #expect(try session.resolve((any Greeter).self).greet("Cy") == "Cy.")
    #expect(try session.resolveAll((any Greeter).self).map { $0.greet("Cy") } == ["Hello, Cy!", "Cy."])
    #expect(try container.resolve((any Greeter).self).greet("Cy") == "Hello, Cy!")
  }

  @Test func composingABaseOverriddenByReplacementsReplacesItsKeys() throws {
    let container = try Container(modules: [GreetingModule().overridden(by: GruffReplacementModule())])

    #expect(try container.resolveAll((any Greeter).self).map { $0.greet("Di") } == ["Di."])
    #expect(container.registrations.map(\.module) == ["GruffReplacementModule"])
    #expect(
      container.installedModules.map(\.description) == [
        "GreetingModule overridden by GruffReplacementModule", "GreetingModule", "GruffReplacementModule",
      ])
    // The base is installed, as part of the composition: requiring it later loads nothing more.
    try container.install(GreetingModule())
    #expect(try container.resolveAll((any Greeter).self).map { $0.greet("Di") } == ["Di."])
  }

  @Test func anOverrideThatReplacesNothingIsReported() throws {
    let container = Container()
    let error = try #require(throws: ModuleError.self) {
      try container.install(GreetingModule(), StaleDoubleModule())
    }

    #expect(error.code == .staleOverride)
    #expect(
      error.description == """
        staleOverride: the override of `Counter` replaces nothing
          StaleDoubleModule at StrataModulesTests/OverrideTests.swift:\(staleLine)
          hint: no other module and no enclosing scope registers it; remove the override (a stale test \
        double?) or register the service it stands in for
        """)
  }

  @Test func aReplacementThatReplacesNothingIsReportedToo() throws {
    let error = try #require(throws: ModuleError.self) {
      try Container(modules: [RivalGreetingModule().overridden(by: StaleDoubleModule())])
    }
    #expect(error.code == .staleOverride)
    #expect(error.modules == [ModuleID(StaleDoubleModule.self)])
  }

  @Test func anOverrideOfARegistrationMadeOutsideModulesIsNotStale() throws {
    let container = try Container { registry in
      registry.register(Counter.self) { _ in Counter() }
    }
    try container.install(StaleDoubleModule())
    #expect(try container.resolveAll(Counter.self).count == 2)
  }

  @Test func twoOverridesOfOneKeyAreADuplicate() throws {
    let error = try #require(throws: ModuleError.self) {
      try Container(modules: [
        GreetingModule(), GruffOverrideModule(), CountingGreeterOverrideModule(),
      ])
    }
    #expect(error.code == .duplicateOverride)
  }
}
