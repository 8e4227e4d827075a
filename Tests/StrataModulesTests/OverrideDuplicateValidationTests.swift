import Strata
import StrataModules
import Testing

// A container's module overrides a registration made outside modules; a session's module,
// installed before it, registers the same key. Installed the other way round, the session's
// install fails with a duplicate; validation reports the same duplicate whichever the order.

private let overrideLine = #line + 3
private struct ClockOverrideModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clock.self, dependsOn: []) { _ in Clock() }.overriding()
  }
}

private let sessionLine = #line + 3
private struct SessionClockModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clock.self, dependsOn: []) { _ in Clock() }
  }
}

@Suite struct OverrideDuplicateValidationTests {
  private func container() throws -> Container {
    try Container { $0.register(Clock.self, dependsOn: []) { _ in Clock() } }
  }

  @Test func theInstallReportsItWhenTheOverrideComesFirst() throws {
    let container = try container()
    try container.install(ClockOverrideModule())
    let error = try #require(throws: ModuleError.self) {
      try container.makeScope(.session, modules: [SessionClockModule()])
    }
    #expect(error.code == .duplicateRegistration)
  }

  @Test func validationReportsItWhenTheSessionsModuleCameFirst() throws {
    let container = try container()
    let session = try container.makeScope(.session)
    try session.install(SessionClockModule())
    try container.install(ClockOverrideModule())
    let problems = session.validationReport().problems
    #expect(problems.map(\.code) == [.duplicateRegistration])
    #expect(
      problems.first?.message
        == "`Clock` is registered by two modules: ClockOverrideModule at "
        + "StrataModulesTests/OverrideDuplicateValidationTests.swift:\(overrideLine) and SessionClockModule at "
        + "StrataModulesTests/OverrideDuplicateValidationTests.swift:\(sessionLine)")
    // The container alone holds no duplicate: its override replaces a registration made outside
    // modules.
    #expect(container.validationReport().isValid)
  }
}
