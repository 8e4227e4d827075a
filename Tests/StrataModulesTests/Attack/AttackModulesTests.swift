import Foundation
import Strata
import StrataModules
import Testing

/// A disposable made by ``PoolModule``'s eager singleton; counts its disposals.
private final class Pool: Disposable, Sendable {
  private let disposed: FactoryRuns

  init(disposed: FactoryRuns) {
    self.disposed = disposed
  }

  func dispose() throws { disposed.tick() }
}

/// A module with a slow eager singleton and a `loaded` hook, counting factory runs, disposals and
/// hook runs.
private struct PoolModule: Module {
  let made = FactoryRuns()
  let disposed = FactoryRuns()
  let hooks = FactoryRuns()

  func register(in registry: Registrar) {
    registry.register(Pool.self, lifetime: .eagerSingleton) { _ in
      usleep(100)
      made.tick()
      return Pool(disposed: disposed)
    }
  }

  func loaded(in scope: Scope) throws { hooks.tick() }
}

/// A module whose `loaded` hook closes the scope it was installed into.
private struct ClosingHookModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
  }

  func loaded(in scope: Scope) throws { try scope.close() }
}

/// A module that requires itself.
private struct SelfRequiringModule: Module {
  var requires: [any Module] { [SelfRequiringModule()] }

  func register(in registry: Registrar) {}
}

/// A module is installed once per scope tree, however often and from however many tasks it is
/// installed, and an installation racing its scope's close leaves nothing undisposed; odd modules
/// (a hook closing its scope, a module requiring itself) fail with typed errors, without hanging.
@Suite struct AttackModulesTests {
  /// The same module installed from four tasks at once, 100 rounds: installed once (no duplicate
  /// error), its eager singleton made once, its hook run once, its instance disposed once.
  @Test func aModuleInstalledFromFourTasksAtOnceIsInstalledOnce() async throws {
    for round in 0..<100 {
      let module = PoolModule()
      let container = Container()
      let errors = EventLog()

      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<4 {
          group.addTask {
            do { try container.install(module) } catch { errors.record("\(error)") }
          }
        }
      }

      #expect(errors.all.isEmpty, "round \(round): \(errors.all)")
      #expect(module.made.value == 1)
      #expect(module.hooks.value == 1)
      #expect(try container.resolveAll(Pool.self).count == 1)
      try await container.close()
      #expect(module.disposed.value == 1)
    }
  }

  /// A module installed twice into a container, then into a child: skipped after the first time,
  /// its singleton made and its hook run once.
  @Test func aModuleInstalledAgainOrInAChildIsSkipped() throws {
    let module = PoolModule()
    let container = Container()

    try container.install(module)
    try container.install(module)
    let session = try container.makeScope(.session, modules: [module])

    #expect(module.made.value == 1 && module.hooks.value == 1)
    #expect(try session.resolveAll(Pool.self).count == 1)
    try session.close()
    try container.close()
    #expect(module.disposed.value == 1)
  }

  /// A module installed into a session while another task closes it, 300 rounds: refused with
  /// `scopeClosed`, or installed and its eager singleton disposed; never made and left undisposed.
  @Test func aModuleInstalledWhileItsScopeClosesIsRefusedOrDisposed() async throws {
    let module = PoolModule()
    let container = Container()
    let problems = EventLog()
    for round in 0..<300 {
      let session = try container.makeScope(.session)

      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          do {
            try session.install(module)
          } catch let error as ModuleError where error.code == .scopeClosed {
            // The close came first.
          } catch let error as ResolutionError where error.code == .scopeClosed {
            // The close came while the module's eager singleton was being made.
          } catch {
            problems.record("install: \(error)")
          }
        }
        group.addTask {
          for _ in 0..<(round % 13) { sched_yield() }
          do { try await session.close() } catch { problems.record("close: \(error)") }
        }
      }

      if module.made.value != module.disposed.value {
        problems.record("round \(round): made \(module.made.value), disposed \(module.disposed.value)")
        break
      }
    }
    #expect(problems.all.isEmpty, "\(problems.all.prefix(5))")
    try await container.close()
  }

  /// A module whose `loaded` hook closes its scope: the installation ends (with or without an
  /// error), the scope is closed, and a resolve from it is `scopeClosed`.
  @Test func aHookThatClosesItsScopeLeavesItClosed() throws {
    let container = Container()
    let session = try container.makeScope(.session)

    _ = try? session.install(ClosingHookModule())

    #expect(session.isClosed)
    let error = try #require(throws: ResolutionError.self) { try session.resolve(Clock.self) }
    #expect(error.code == .scopeClosed)
    try container.close()
  }

  /// A module that requires itself is a `moduleCycle`, not a hang.
  @Test func aModuleThatRequiresItselfIsAModuleCycle() throws {
    let container = Container()

    let error = try #require(throws: ModuleError.self) { try container.install(SelfRequiringModule()) }

    #expect(error.code == .moduleCycle)
    try container.close()
  }
}
