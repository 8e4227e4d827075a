import Foundation
import Strata
import StrataModules
import Testing

/// `@unchecked Sendable`: `entries` and `failures` are read and written under `lock` only.
private final class HookJournal: @unchecked Sendable {
  private let lock = NSLock()
  private var entries: [String] = []
  private var failures: Set<String> = []
  func failing(_ name: String) -> HookJournal {
    lock.withLock { _ = failures.insert(name) }
    return self
  }
  func heal(_ name: String) { lock.withLock { _ = failures.remove(name) } }
  func run(_ name: String) throws {
    try lock.withLock {
      entries.append(name)
      if failures.contains(name) { throw HookFailure() }
    }
  }
  var all: [String] { lock.withLock { entries } }
}

private struct HookFailure: Error {}

private struct MigrationsModule: Module {
  let journal: HookJournal
  func register(in registry: Registrar) { registry.register(Int.self) { _ in 1 } }
  func loaded(in scope: Scope) throws { try journal.run("migrations") }
}

private struct SeedModule: Module {
  let journal: HookJournal
  var requires: [any Module] { [MigrationsModule(journal: journal)] }
  func register(in registry: Registrar) { registry.register(String.self) { _ in "seed" } }
  func loaded(in scope: Scope) throws { try journal.run("seed") }
}

private struct FlakyEagerModule: Module {
  let journal: HookJournal
  var requires: [any Module] { [MigrationsModule(journal: journal)] }
  func register(in registry: Registrar) {
    registry.register(Double.self, lifetime: .eagerSingleton) { _ in
      try journal.run("eager")
      return 1.0
    }
  }
  func loaded(in scope: Scope) throws { try journal.run("flaky") }
}

/// A hook (or an eager singleton) that throws stops the hooks after it; installing the modules
/// again runs the hooks that have not run, the failed one first, and never one that ran. (They
/// stayed unrun for good: the modules counted as installed.)
@Suite struct UnrunHookTests {
  @Test func installingAgainRunsTheHooksAFailedHookStopped() throws {
    let journal = HookJournal().failing("migrations")
    let container = Container()
    #expect(throws: ModuleError.self) { try container.install(SeedModule(journal: journal)) }
    #expect(journal.all == ["migrations"])
    journal.heal("migrations")
    try container.install(SeedModule(journal: journal))
    #expect(journal.all == ["migrations", "migrations", "seed"])
    try container.install(SeedModule(journal: journal))
    #expect(journal.all == ["migrations", "migrations", "seed"], "a hook that ran does not run again")
    #expect(try container.resolve(String.self) == "seed")
  }

  @Test func installingAgainRunsTheHooksAFailedEagerSingletonStopped() throws {
    let journal = HookJournal().failing("eager")
    let container = Container()
    #expect(throws: (any Error).self) { try container.install(FlakyEagerModule(journal: journal)) }
    #expect(journal.all == ["eager"])
    journal.heal("eager")
    try container.install(FlakyEagerModule(journal: journal))
    #expect(journal.all == ["eager", "migrations", "flaky"])
  }

  @Test func installingAnotherModuleDoesNotRunTheirHooks() throws {
    let journal = HookJournal().failing("migrations")
    let container = Container()
    #expect(throws: ModuleError.self) { try container.install(SeedModule(journal: journal)) }
    journal.heal("migrations")
    struct Unrelated: Module { func register(in registry: Registrar) {} }
    try container.install(Unrelated())
    #expect(journal.all == ["migrations"])
  }
}
