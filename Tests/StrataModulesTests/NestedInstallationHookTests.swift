import Dispatch
import Foundation
import Strata
import StrataModules
import Synchronization
import Testing

private final class HookLog: @unchecked Sendable {
  private let lock = NSLock()
  private var entries: [String] = []
  func add(_ entry: String) { lock.withLock { entries.append(entry) } }
  var all: [String] { lock.withLock { entries } }
}

/// A module installed by another thread while a hook waits for it.
private struct ElsewhereModule: Module {
  func register(in registry: Registrar) { registry.register(Int.self, name: "elsewhere") { _ in 0 } }
}

/// A module whose hook waits for another thread that installs a module: fine once no
/// installation holds the process-wide lock.
private struct WaitingHookModule: Module {
  let log: HookLog
  func register(in registry: Registrar) { registry.register(Int.self, name: "inner") { _ in 1 } }
  func loaded(in scope: Scope) throws {
    let done = DispatchSemaphore(value: 0)
    Thread {
      _ = try? Container(modules: [ElsewhereModule()])
      done.signal()
    }.start()
    log.add(done.wait(timeout: .now() + 10) == .success ? "inner hook" : "inner hook timed out")
  }
}

/// A module whose `register(in:)` installs `nested` into a feature scope.
private struct InstallingModule: Module {
  let feature: Scope
  let nested: any Module
  let log: HookLog
  func register(in registry: Registrar) {
    do {
      try feature.install(nested)
    } catch {
      log.add("nested install failed: \(error)")
    }
    registry.register(Int.self, name: "outer") { _ in 2 }
  }
  func loaded(in scope: Scope) throws { log.add("outer hook") }
}

/// A module registering the key `InstallingModule` registers too: installed beside it, the outer
/// installation fails with a duplicate.
private struct ClashingModule: Module {
  func register(in registry: Registrar) { registry.register(Int.self, name: "outer") { _ in 3 } }
}

/// A module whose hook records that it ran.
private struct RecordingHookModule: Module {
  let log: HookLog
  func register(in registry: Registrar) { registry.register(Int.self, name: "recorded") { _ in 4 } }
  func loaded(in scope: Scope) throws { log.add("recording hook") }
}

/// An installation nested in another module's `register(in:)` runs its hooks after the outermost
/// installation released the process-wide lock, so a hook may wait for other installations.
@Suite struct NestedInstallationHookTests {
  @Test func aNestedInstallationsHookRunsAfterTheLockIsReleased() throws {
    let log = HookLog()
    let finished = DispatchSemaphore(value: 0)
    let container = Container()
    let feature = try container.makeScope(.session)
    Thread {
      do {
        try container.install(
          InstallingModule(feature: feature, nested: WaitingHookModule(log: log), log: log))
      } catch {
        log.add("install failed: \(error)")
      }
      finished.signal()
    }.start()
    #expect(finished.wait(timeout: .now() + 15) == .success, "the installation deadlocked")
    #expect(log.all == ["inner hook", "outer hook"])
    #expect(try feature.resolve(Int.self, name: "inner") == 1)
    #expect(try container.resolve(Int.self, name: "outer") == 2)
  }

  /// The outer installation fails (a duplicate) after a nested one into another scope succeeded:
  /// the nested modules are installed there, and their hook runs all the same.
  @Test func aNestedInstallationsHookRunsWhenTheOuterInstallationFails() throws {
    let log = HookLog()
    let container = Container()
    let feature = try container.makeScope(.session)
    #expect(throws: ModuleError.self) {
      try container.install([
        InstallingModule(feature: feature, nested: RecordingHookModule(log: log), log: log), ClashingModule(),
      ])
    }
    #expect(log.all == ["recording hook"])
    #expect(try feature.resolve(Int.self, name: "recorded") == 4)
    #expect(try container.resolveIfRegistered(Int.self, name: "outer") == nil)
    // Installing it again does not run the hook a second time.
    try feature.install(RecordingHookModule(log: log))
    #expect(log.all == ["recording hook"])
  }
}
