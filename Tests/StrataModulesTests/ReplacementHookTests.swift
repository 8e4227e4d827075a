import Foundation
import Strata
import StrataModules
import Testing

/// `@unchecked Sendable`: `entries` is read and written under `lock` only.
private final class HookLog: @unchecked Sendable {
  private let lock = NSLock()
  private var entries: [String] = []
  func add(_ entry: String) { lock.withLock { entries.append(entry) } }
  func count(of entry: String) -> Int { lock.withLock { entries.filter { $0 == entry }.count } }
}

private final class ClockLabel: Sendable {
  let label: String
  init(_ label: String) { self.label = label }
}

private struct AppModule: Module {
  let log: HookLog
  func register(in registry: Registrar) {
    registry.register(ClockLabel.self, lifetime: .singleton) { _ in ClockLabel("app") }
  }
  func loaded(in scope: Scope) throws { log.add("app") }
}

private struct FakeClockModule: Module {
  let log: HookLog
  func register(in registry: Registrar) {
    registry.register(ClockLabel.self, lifetime: .singleton) { _ in ClockLabel("fake") }
  }
  func loaded(in scope: Scope) throws { log.add("fake") }
}

/// A replacement that was installed before, or is listed beside the composition, still replaces
/// the base's registrations, but its `loaded` hook runs once, like every module's (it ran again
/// for the composition: a migration hook would have migrated twice).
@Suite struct ReplacementHookTests {
  @Test func aReplacementInstalledEarlierDoesNotRunItsHookAgain() throws {
    let log = HookLog()
    let container = try Container(modules: [FakeClockModule(log: log)])
    try container.install(AppModule(log: log).overridden(by: FakeClockModule(log: log)))
    #expect(log.count(of: "fake") == 1)
    #expect(log.count(of: "app") == 1)
    #expect(try container.resolve(ClockLabel.self).label == "fake")
  }

  @Test func aReplacementListedBesideTheCompositionRunsItsHookOnce() throws {
    let log = HookLog()
    let container = try Container(modules: [
      FakeClockModule(log: log), AppModule(log: log).overridden(by: FakeClockModule(log: log)),
    ])
    #expect(log.count(of: "fake") == 1)
    #expect(try container.resolve(ClockLabel.self).label == "fake")
    #expect(try container.resolveAll(ClockLabel.self).map(\.label) == ["fake"])
  }

  @Test func aReplacementLoadedForTheFirstTimeRunsItsHook() throws {
    let log = HookLog()
    let container = try Container(modules: [AppModule(log: log).overridden(by: FakeClockModule(log: log))])
    #expect(log.count(of: "fake") == 1)
    #expect(log.count(of: "app") == 1)
    #expect(try container.resolve(ClockLabel.self).label == "fake")
  }
}
