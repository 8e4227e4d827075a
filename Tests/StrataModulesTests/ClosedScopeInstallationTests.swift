import Strata
import StrataModules
import Testing

// A closed scope takes no modules, whether or not they register anything.

/// Registers nothing; its hook records that it ran.
private struct WarmUpModule: Module {
  let log: EventLog
  func register(in registry: Registrar) {}
  func loaded(in scope: Scope) throws { log.record("warm-up in \(scope)") }
}

/// Registers nothing and requires a module that registers `Clock`.
private struct FeatureModule: Module {
  let log: EventLog
  var requires: [any Module] { [ClockModule()] }
  func register(in registry: Registrar) {}
  func loaded(in scope: Scope) throws { log.record("feature in \(scope)") }
}

private struct ClockModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
  }
}

@Suite struct ClosedScopeInstallationTests {
  private let closedText = """
    scopeClosed: the scope was closed; WarmUpModule cannot be installed in it
      hint: install modules before closing the scope, or in an open scope
    """

  @Test func aModuleThatRegistersNothingIsNotInstalledInAClosedContainer() throws {
    let log = EventLog()
    let container = Container()
    try container.close()
    let error = try #require(throws: ModuleError.self) { try container.install(WarmUpModule(log: log)) }
    #expect(error.description == closedText)
    #expect(error.modules == [ModuleID(WarmUpModule.self)])
    #expect(log.all.isEmpty)
    #expect(container.installedModules.isEmpty)
  }

  @Test func aClosedSessionTakesNoModuleWhoseRequirementsItsAncestorHas() throws {
    let log = EventLog()
    let container = try Container(modules: [ClockModule()])
    let session = try container.makeScope(.session)
    try session.close()
    let error = try #require(throws: ModuleError.self) { try session.install(FeatureModule(log: log)) }
    #expect(error.code == .scopeClosed)
    #expect(log.all.isEmpty)
    #expect(session.installedModules.isEmpty)
    // The container is still open, and takes it.
    try container.install(FeatureModule(log: log))
    #expect(log.all == ["feature in root"])
  }

  @Test func aModuleThatRegistersIsNotInstalledInAClosedScopeEither() throws {
    let container = Container()
    try container.close()
    let error = try #require(throws: ModuleError.self) { try container.install(ClockModule()) }
    #expect(error.message == "the scope was closed; ClockModule cannot be installed in it")
    #expect(container.installedModules.isEmpty)
  }
}
