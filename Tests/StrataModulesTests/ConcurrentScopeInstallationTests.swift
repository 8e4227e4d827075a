import Strata
import StrataModules
import Testing

// Sessions made at once from many tasks, each installing a feature that requires a shared module.

private struct SharedModule: Module {
  let log: EventLog
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton, dependsOn: []) { _ in Database() }
  }
  func loaded(in scope: Scope) throws { log.record("shared") }
}

private struct FeatureModule: Module {
  let log: EventLog
  let number: Int
  var moduleID: ModuleID { ModuleID(Self.self, number) }
  var requires: [any Module] { [SharedModule(log: log)] }
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .scoped(.session), dependsOn: [.service(Database.self)]) {
      resolver in
      _ = try resolver.resolve(Database.self)
      return Clock()
    }
  }
  func loaded(in scope: Scope) throws { log.record("feature\(number)") }
}

@Suite struct ConcurrentScopeInstallationTests {
  /// Makes 16 sessions of `container` at once, session `n` installing feature `n % 4`.
  private func sessions(of container: Container, log: EventLog) async throws -> [(Int, Scope)] {
    try await withThrowingTaskGroup(of: (Int, Scope).self) { group in
      for number in 0..<16 {
        group.addTask {
          (number, try container.makeScope(.session, modules: [FeatureModule(log: log, number: number % 4)]))
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
  }

  @Test func eachSessionLoadsTheSharedModuleItsAncestorsLack() async throws {
    let log = EventLog()
    let container = Container()
    let sessions = try await sessions(of: container, log: log)

    #expect(container.installedModules.isEmpty)
    for (number, session) in sessions {
      #expect(
        session.installedModules == [ModuleID(SharedModule.self), ModuleID(FeatureModule.self, number % 4)])
      #expect(try session.resolve(Clock.self) === session.resolve(Clock.self))
      #expect(session.validationReport(expecting: [.request]).isValid)
    }
    // Each session has its own shared module, so its own singleton.
    let databases = try Set(sessions.map { ObjectIdentifier(try $0.1.resolve(Database.self)) })
    #expect(databases.count == 16)
    #expect(log.all.filter { $0 == "shared" }.count == 16)
    #expect((0..<4).allSatisfy { number in log.all.filter { $0 == "feature\(number)" }.count == 4 })
  }

  @Test func noSessionLoadsAgainTheSharedModuleTheContainerHas() async throws {
    let log = EventLog()
    let container = try Container(modules: [SharedModule(log: log)])
    let sessions = try await sessions(of: container, log: log)

    let database = try container.resolve(Database.self)
    for (number, session) in sessions {
      #expect(session.installedModules == [ModuleID(FeatureModule.self, number % 4)])
      #expect(try session.resolve(Database.self) === database)
      #expect(session.validationReport(expecting: [.request]).isValid)
    }
    #expect(log.all.filter { $0 == "shared" }.count == 1)
    #expect(log.all.count == 17)
  }
}
