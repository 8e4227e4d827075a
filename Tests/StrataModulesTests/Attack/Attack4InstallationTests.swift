import Foundation
import Strata
import StrataModules
import Synchronization
import Testing

/// Lets a test hold a hook while it runs, and see when it started.
private final class HookGate: Sendable {
  let started = DispatchSemaphore(value: 0)
  let release = DispatchSemaphore(value: 0)
}

/// The app's module: its hook holds at the gate (at most 5 s).
private struct GatedAppModule: Module {
  let log: EventLog
  let gate: HookGate
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
  }
  func loaded(in scope: Scope) throws {
    log.record("app started")
    gate.started.signal()
    _ = gate.release.wait(timeout: .now() + 5)
    log.record("app ended")
  }
}

private struct GatedDoublesModule: Module {
  let log: EventLog
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
  }
}

/// A feature whose hook relies on the app's hook having run.
private struct GatedFeatureModule: Module {
  let log: EventLog
  let gate: HookGate
  var requires: [any Module] { [GatedAppModule(log: log, gate: gate)] }
  func register(in registry: Registrar) {}
  func loaded(in scope: Scope) throws { log.record("feature") }
}

private final class Pool: Disposable, Sendable {
  let disposals: FactoryRuns
  init(disposals: FactoryRuns) { self.disposals = disposals }
  func dispose() throws { disposals.tick() }
}

private struct StartFailure: Error {}

/// A session feature with an eager, disposable pool, whose hook fails while `failing` is set.
private struct PoolFeatureModule: Module {
  let made: FactoryRuns
  let disposals: FactoryRuns
  let failing: Bool
  func register(in registry: Registrar) {
    registry.register(Pool.self, lifetime: .eagerSingleton) { _ in
      made.tick()
      return Pool(disposals: disposals)
    }
  }
  func loaded(in scope: Scope) throws {
    _ = try scope.resolve(Pool.self)
    if failing { throw StartFailure() }
  }
}

private struct SharedBaseModule: Module {
  let hooks: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(String.self, lifetime: .singleton) { _ in "base" }
  }
  func loaded(in scope: Scope) throws { hooks.tick() }
}

/// Replaces the base's string in each session it is installed in.
private struct SessionDoublesModule: Module {
  let hooks: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(String.self, lifetime: .scoped(.session)) { _ in "double" }
  }
  func loaded(in scope: Scope) throws { hooks.tick() }
}

/// A hook that installs, into its own scope, a plugin requiring its module, and a module that
/// clashes with it.
private struct HostModule: Module {
  let log: EventLog
  let clash: Bool
  func register(in registry: Registrar) {
    registry.register(Mailer.self, lifetime: .singleton) { _ in Mailer() }
  }
  func loaded(in scope: Scope) throws {
    log.record("host")
    try scope.install(clash ? [ClashModule()] : [PluginModule(log: log, clash: clash)])
  }
}

private struct PluginModule: Module {
  let log: EventLog
  let clash: Bool
  var requires: [any Module] { [HostModule(log: log, clash: clash)] }
  func register(in registry: Registrar) {}
  func loaded(in scope: Scope) throws {
    _ = try scope.resolve(Mailer.self)
    log.record("plugin")
  }
}

private struct ClashModule: Module {
  func register(in registry: Registrar) {
    registry.register(Mailer.self) { _ in Mailer() }
  }
}

/// One of twenty modules installed together; registers its own numbered value.
private struct NumberModule: Module {
  let number: Int
  var moduleID: ModuleID { ModuleID(Self.self, number) }
  var requires: [any Module] { number == 0 ? [] : [NumberModule(number: number - 1)] }
  func register(in registry: Registrar) {
    let number = number
    registry.register(Int.self, name: number) { _ in number }
  }
}

/// Installation against the Modules article: hooks run in load order even across threads, a
/// failed feature scope leaves nothing made, sibling sessions composing overrides at once see
/// only their own, and hooks may install modules.
@Suite(.timeLimit(.minutes(1)))
struct Attack4InstallationTests {
  /// "A thread that installs a module another thread is still loading (or a module that requires
  /// it) waits … when its install returns, the hooks of the modules it names have run." Here the
  /// module is loaded as the base of a composition: the feature must still wait for its hook.
  @Test
  func aFeatureWaitsForTheHookOfACompositionsBaseAnotherThreadRuns() throws {
    for round in 0..<3 {
      let log = EventLog()
      let gate = HookGate()
      let container = Container()
      let app = GatedAppModule(log: log, gate: gate)
      let one = Background { try container.install(app.overridden(by: GatedDoublesModule(log: log))) }
      try #require(gate.started.wait(timeout: .now() + 5) == .success)
      let returned = DispatchSemaphore(value: 0)
      let two = Background {
        try container.install(GatedFeatureModule(log: log, gate: gate))
        log.record("feature returned")
        returned.signal()
      }
      let returnedEarly = returned.wait(timeout: .now() + 0.2) == .success
      gate.release.signal()
      #expect(one.wait() == nil)
      #expect(two.wait() == nil)
      #expect(!returnedEarly, "round \(round): the feature's install returned while the app's hook ran")
      #expect(log.all == ["app started", "app ended", "feature", "feature returned"], "round \(round)")
    }
  }

  /// `makeScope(_:name:modules:)` whose feature hook fails closes the new scope: its eager pool is
  /// disposed once, the container keeps its modules, and a new session with the hook fixed works.
  @Test func aFeatureScopeWhoseHookFailsDisposesItsEagerSingletonsAndLeavesTheContainerAlone() throws {
    let made = FactoryRuns()
    let disposals = FactoryRuns()
    let baseHooks = FactoryRuns()
    let container = try Container(modules: [SharedBaseModule(hooks: baseHooks)])
    let failing = PoolFeatureModule(made: made, disposals: disposals, failing: true)
    let error = try #require(throws: ModuleError.self) {
      _ = try container.makeScope(.session, name: "s1", modules: [failing])
    }
    #expect(error.code == .loadHookFailed)
    #expect(error.modules.map(\.description) == ["PoolFeatureModule"])
    #expect(error.underlying is StartFailure)
    #expect(made.value == 1)
    #expect(disposals.value == 1, "the failed session's eager pool is disposed once")
    #expect(container.installedModules.map(\.description) == ["SharedBaseModule"])
    #expect(throws: ResolutionError.self) { _ = try container.resolve(Pool.self) }

    let working = PoolFeatureModule(made: made, disposals: disposals, failing: false)
    let session = try container.makeScope(.session, name: "s2", modules: [working])
    #expect(made.value == 2)
    try session.close()
    #expect(disposals.value == 2)
    #expect(baseHooks.value == 1)
  }

  /// Four threads at a time each open a session composing the container's base with a
  /// session-scoped double, while a fifth resolves the container's value: each session resolves
  /// its double, the container its base, every double's hook runs once per session and the base's
  /// never again. 25 rounds.
  @Test func siblingSessionsComposingOverridesAtOnceSeeOnlyTheirOwn() throws {
    for round in 0..<25 {
      let baseHooks = FactoryRuns()
      let doubleHooks = FactoryRuns()
      let base = SharedBaseModule(hooks: baseHooks)
      let container = try Container(modules: [base])
      let ready = DispatchSemaphore(value: 0)
      let go = DispatchSemaphore(value: 0)
      let failures = EventLog()
      let workers = (0..<4).map { _ in
        Background {
          ready.signal()
          _ = go.wait(timeout: .now() + 5)
          let session = try container.makeScope(
            .session, modules: [base.overridden(by: SessionDoublesModule(hooks: doubleHooks))])
          defer { try? session.close() }
          if try session.resolve(String.self) != "double" { failures.record("session saw the base") }
          if session.installedModules.contains(base.moduleID) { failures.record("base loaded again") }
        }
      }
      let reader = Background {
        ready.signal()
        _ = go.wait(timeout: .now() + 5)
        for _ in 0..<200 where try container.resolve(String.self) != "base" {
          failures.record("container saw a double")
        }
      }
      for _ in 0..<5 { _ = ready.wait(timeout: .now() + 5) }
      for _ in 0..<5 { go.signal() }
      for worker in workers + [reader] { #expect(worker.wait() == nil, "round \(round)") }
      #expect(failures.all.isEmpty, "round \(round): \(failures.all)")
      #expect(doubleHooks.value == 4, "round \(round)")
      #expect(baseHooks.value == 1, "round \(round)")
    }
  }

  /// A hook that installs a plugin requiring its own module: the plugin loads (its requirement is
  /// installed), its hook runs after the host's, once; installing either again does nothing.
  @Test func aHookMayInstallAPluginThatRequiresItsOwnModule() throws {
    let log = EventLog()
    let container = try Container(modules: [HostModule(log: log, clash: false)])
    #expect(log.all == ["host", "plugin"])
    #expect(container.installedModules.map(\.description) == ["HostModule", "PluginModule"])
    try container.install(PluginModule(log: log, clash: false), HostModule(log: log, clash: false))
    #expect(log.all == ["host", "plugin"])
  }

  /// A hook whose installation clashes: the error is the host's `loadHookFailed`, and its text
  /// still names the key, both modules and both registration sites of the duplicate inside.
  @Test func aDuplicateInsideAHooksInstallationNamesBothModulesAndSites() throws {
    let log = EventLog()
    let container = Container()
    let error = try #require(throws: ModuleError.self) {
      try container.install(HostModule(log: log, clash: true))
    }
    #expect(error.code == .loadHookFailed)
    #expect(error.modules.map(\.description) == ["HostModule"])
    let inner = try #require(error.underlying as? ModuleError)
    #expect(inner.code == .duplicateRegistration)
    #expect(inner.modules.map(\.description) == ["HostModule", "ClashModule"])
    let text = error.description
    #expect(text.contains("`Mailer` is registered by two modules"), "\(text)")
    #expect(text.contains("HostModule at StrataModulesTests/Attack4InstallationTests.swift:"), "\(text)")
    #expect(text.contains("ClashModule at StrataModulesTests/Attack4InstallationTests.swift:"), "\(text)")
    #expect(!container.installedModules.map(\.description).contains("ClashModule"))
    #expect(throws: Never.self) { _ = try container.resolve(Mailer.self) }
  }

  /// "All registrations of one installation are published as one batch": a thread that sees the
  /// first module's value (loaded first) sees the last one's too, however the installation on
  /// another thread interleaves. 40 rounds, both threads released together.
  @Test func aReaderThatSeesTheFirstModuleOfAnInstallationSeesItsLast() throws {
    for round in 0..<40 {
      let container = Container()
      let ready = DispatchSemaphore(value: 0)
      let go = DispatchSemaphore(value: 0)
      let torn = EventLog()
      let reader = Background {
        ready.signal()
        _ = go.wait(timeout: .now() + 5)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
          guard (try? container.resolve(Int.self, name: 0)) != nil else { continue }
          if (try? container.resolve(Int.self, name: 19)) == nil { torn.record("first without last") }
          return
        }
        torn.record("never saw the installation")
      }
      let installer = Background {
        ready.signal()
        _ = go.wait(timeout: .now() + 5)
        try container.install(NumberModule(number: 19))
      }
      for _ in 0..<2 { _ = ready.wait(timeout: .now() + 5) }
      go.signal()
      go.signal()
      #expect(installer.wait() == nil, "round \(round)")
      #expect(reader.wait() == nil, "round \(round)")
      #expect(torn.all.isEmpty, "round \(round): \(torn.all)")
      #expect(container.installedModules.count == 20)
    }
  }
}
