import Foundation
import Strata
import StrataModules
import Testing

/// Records hook runs; a hook whose name is in `failures` throws after recording itself.
///
/// `@unchecked Sendable`: `entries` and `failures` are read and written under `lock` only.
private final class Journal: @unchecked Sendable {
  private let lock = NSLock()
  private var entries: [String] = []
  private var failures: Set<String> = []

  func failing(_ name: String) -> Journal {
    lock.withLock { _ = failures.insert(name) }
    return self
  }

  func heal(_ name: String) { lock.withLock { _ = failures.remove(name) } }

  func run(_ name: String) throws {
    try lock.withLock {
      entries.append(name)
      if failures.contains(name) { throw HookFailure(name: name) }
    }
  }

  var all: [String] { lock.withLock { entries } }
}

private struct HookFailure: Error { let name: String }

final class AttackClock: Sendable {
  let label: String
  init(_ label: String) { self.label = label }
}

/// The application's base module: registers the clock, its hook may fail.
private struct AppModule: Module {
  let journal: Journal
  func register(in registry: Registrar) {
    registry.register(AttackClock.self, lifetime: .singleton) { _ in AttackClock("app") }
  }
  func loaded(in scope: Scope) throws { try journal.run("app") }
}

/// A test double replacing the app's clock.
private struct DoublesModule: Module {
  let journal: Journal
  func register(in registry: Registrar) {
    registry.register(AttackClock.self, lifetime: .singleton) { _ in AttackClock("doubles") }
  }
  func loaded(in scope: Scope) throws { try journal.run("doubles") }
}

/// A feature that needs the app to have started (its hook relies on the app's hook).
private struct FeatureModule: Module {
  let journal: Journal
  var requires: [any Module] { [AppModule(journal: journal)] }
  func register(in registry: Registrar) {
    registry.register(String.self, name: "feature") { _ in "feature" }
  }
  func loaded(in scope: Scope) throws { try journal.run("feature") }
}

/// One of many layers, each replacing the clock of the layers below.
private struct LayerModule: Module {
  let index: Int
  var moduleID: ModuleID { ModuleID(Self.self, index) }
  func register(in registry: Registrar) {
    let label = "layer \(index)"
    registry.register(AttackClock.self, lifetime: .singleton) { _ in AttackClock(label) }
  }
}

/// A database module configured per region; its identity includes the region.
private struct RegionModule: Module {
  let region: String
  let namesItsRegistration: Bool
  var moduleID: ModuleID { ModuleID(Self.self, region) }
  func register(in registry: Registrar) {
    let region = region
    if namesItsRegistration {
      registry.register(String.self, name: region) { _ in "db-\(region)" }
    } else {
      registry.register(String.self) { _ in "db-\(region)" }
    }
  }
}

/// A disposable, eager resource; counts what is made and disposed, by label.
private final class EagerPool: Disposable, Sendable {
  let disposals: FactoryRuns
  init(disposals: FactoryRuns) { self.disposals = disposals }
  func dispose() throws { disposals.tick() }
}

/// Registers an eager pool; `made` and `disposed` count its instances.
private struct EagerPoolModule: Module {
  let made: FactoryRuns
  let disposed: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(EagerPool.self, lifetime: .eagerSingleton) { _ in
      made.tick()
      return EagerPool(disposals: disposed)
    }
  }
}

/// Replaces the pool with its own eager one.
private struct EagerPoolDoubleModule: Module {
  let made: FactoryRuns
  let disposed: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(EagerPool.self, lifetime: .eagerSingleton) { _ in
      made.tick()
      return EagerPool(disposals: disposed)
    }
  }
}

/// Registers a report that takes its id as a runtime argument.
private struct ReportsModule: Module {
  func register(in registry: Registrar) {
    registry.register(String.self) { (_, id: Int) in "report \(id)" }
  }
}

/// Meant to replace the report, but forgets its argument: replaces nothing.
private struct ReportDoubleModule: Module {
  func register(in registry: Registrar) {
    registry.register(String.self) { _ in "double" }.overriding()
  }
}

/// Composition (`overridden(by:)`) against the promises of the Modules article: a composition
/// counts as its parts (a module requiring its base runs the base's unrun hook first, as it does
/// for a plain module), layers nest, and identities with parameters name their values.
@Suite struct Attack4CompositionTests {
  /// Baseline: with a plain module, installing a feature that requires a module whose hook failed
  /// runs that hook again first ("installing those modules again runs the hooks that have not run
  /// yet, this one first").
  @Test func aFeatureRequiringAPlainModuleWhoseHookFailedRunsThatHookFirst() throws {
    let journal = Journal().failing("app")
    let container = Container()
    #expect(throws: ModuleError.self) { try container.install(AppModule(journal: journal)) }
    journal.heal("app")
    try container.install(FeatureModule(journal: journal))
    #expect(journal.all == ["app", "app", "feature"])
  }

  /// The same with the app installed as `AppModule().overridden(by: DoublesModule())`: the
  /// composition counts as its parts, so the feature that requires `AppModule` loads nothing new;
  /// but the app's hook never ran, and it must run before the feature's hook (load order).
  @Test
  func aFeatureRequiringTheBaseOfACompositionWhoseHookFailedRunsThatHookFirst() throws {
    let journal = Journal().failing("app")
    let container = Container()
    let composition = AppModule(journal: journal).overridden(by: DoublesModule(journal: journal))
    #expect(throws: ModuleError.self) { try container.install(composition) }
    #expect(journal.all == ["app"])
    journal.heal("app")
    try container.install(FeatureModule(journal: journal))
    let all = journal.all
    #expect(all.filter { $0 == "app" }.count == 2, "the app's hook never succeeded: \(all)")
    #expect(all.last == "feature", "the feature's hook ran before the app's: \(all)")
    #expect(try container.resolve(AttackClock.self).label == "doubles")
  }

  /// The same from a session: "a session installing a feature that requires a module of the
  /// container whose hook has not run runs that hook (in the container) before the feature's".
  @Test
  func aSessionFeatureRequiringTheBaseOfAFailedCompositionRunsItsHookFirst() throws {
    let journal = Journal().failing("app")
    let container = Container()
    let composition = AppModule(journal: journal).overridden(by: DoublesModule(journal: journal))
    #expect(throws: ModuleError.self) { try container.install(composition) }
    journal.heal("app")
    let session = try container.makeScope(.session, modules: [FeatureModule(journal: journal)])
    defer { try? session.close() }
    let all = journal.all
    #expect(all.filter { $0 == "app" }.count == 2, "the app's hook never succeeded: \(all)")
    #expect(all.last == "feature", "the feature's hook ran before the app's: \(all)")
    #expect(session.installedModules.map(\.description) == ["FeatureModule"])
  }

  /// Installing the composition itself again does rerun its hooks (the documented retry), and
  /// never the replacement's hook twice once it succeeded.
  @Test func installingAFailedCompositionAgainRunsItsHooksUntilTheySucceed() throws {
    let journal = Journal().failing("doubles")
    let container = Container()
    let composition = AppModule(journal: journal).overridden(by: DoublesModule(journal: journal))
    #expect(throws: ModuleError.self) { try container.install(composition) }
    #expect(journal.all == ["app", "doubles"])
    journal.heal("doubles")
    try container.install(composition)
    try container.install(composition)
    // A composition's hooks are one step (Known limits): the base's hook runs again.
    #expect(journal.all == ["app", "doubles", "app", "doubles"])
  }

  /// Compositions layer: in `base.overridden(by: l1).overridden(by: l2)…` each layer replaces the
  /// clock of the layers below. 260 layers, built the way a test helper folds its doubles: the
  /// 256th layer was reported as a `duplicateOverride` of the 255th (the override rank, a `UInt8`,
  /// saturated at 255, so both layers got the same rank; it is a `UInt32` now).
  @Test func twoHundredSixtyLayersEachReplaceTheClockBelow() throws {
    var module: any Module = LayerModule(index: 0)
    for index in 1..<260 { module = module.overridden(by: LayerModule(index: index)) }
    let container = try Container(modules: [module])
    #expect(try container.resolve(AttackClock.self).label == "layer 259")
    #expect(try container.resolveAll(AttackClock.self).map(\.label) == ["layer 259"])
  }

  /// A hundred layers, below where the old `UInt8` rank saturated.
  @Test func aHundredLayersEachReplaceTheClockBelow() throws {
    var module: any Module = LayerModule(index: 0)
    for index in 1..<100 { module = module.overridden(by: LayerModule(index: index)) }
    let container = try Container(modules: [module])
    #expect(try container.resolve(AttackClock.self).label == "layer 99")
    #expect(try container.resolveAll(AttackClock.self).map(\.label) == ["layer 99"])
  }

  /// The same module type configured for two regions: two modules; both registering the same
  /// key is a duplicate naming each with its value; registering per-region names is fine, and a
  /// feature that requires one of them by value loads nothing again.
  @Test func oneModuleTypeWithTwoConfigurationsIsTwoModulesNamedByTheirValues() throws {
    let clashing = Container()
    let error = try #require(throws: ModuleError.self) {
      try clashing.install(
        RegionModule(region: "eu", namesItsRegistration: false),
        RegionModule(region: "us", namesItsRegistration: false))
    }
    #expect(error.code == .duplicateRegistration)
    #expect(error.modules.map(\.description) == [#"RegionModule("eu")"#, #"RegionModule("us")"#])
    #expect(error.sites.count == 2)
    #expect(error.description.contains(#"RegionModule("us") at "#))
    #expect(clashing.installedModules.isEmpty, "a failed installation claims nothing")

    let container = try Container(modules: [
      RegionModule(region: "eu", namesItsRegistration: true),
      RegionModule(region: "us", namesItsRegistration: true),
      RegionModule(region: "eu", namesItsRegistration: true),
    ])
    #expect(
      container.installedModules.map(\.description) == [#"RegionModule("eu")"#, #"RegionModule("us")"#])
    #expect(try container.resolve(String.self, name: "eu") == "db-eu")
    #expect(try container.resolve(String.self, name: "us") == "db-us")
    try container.install(RegionModule(region: "us", namesItsRegistration: true))
    #expect(container.installedModules.count == 2)
  }

  /// An override of an override, each in a deeper scope: each scope resolves its own layer, and
  /// `resolveAll` lists the ancestors' registrations first and the override last.
  @Test func layersInstalledInNestedScopesEachWinWhereTheyAreInstalled() throws {
    let journal = Journal()
    let app = AppModule(journal: journal)
    let doubles = DoublesModule(journal: journal)
    let container = try Container(modules: [app])
    let session = try container.makeScope(.session, modules: [app.overridden(by: doubles)])
    defer { try? session.close() }
    let request = try session.makeScope(
      .request, modules: [app.overridden(by: doubles).overridden(by: LayerModule(index: 7))])
    defer { try? request.close() }
    #expect(try container.resolve(AttackClock.self).label == "app")
    #expect(try session.resolve(AttackClock.self).label == "doubles")
    #expect(try request.resolve(AttackClock.self).label == "layer 7")
    #expect(try request.resolveAll(AttackClock.self).map(\.label) == ["app", "doubles", "layer 7"])
    #expect(journal.all == ["app", "doubles"], "no hook runs twice")
  }

  /// An eager singleton an override replaces in the same installation is never made (nothing to
  /// dispose, nothing leaked); in a session, the double's pool is made there and disposed with it,
  /// and the container's pool is neither made again nor disposed.
  @Test func anEagerSingletonReplacedByAnOverrideIsNeverMade() throws {
    let (baseMade, baseDisposed) = (FactoryRuns(), FactoryRuns())
    let (doubleMade, doubleDisposed) = (FactoryRuns(), FactoryRuns())
    let base = EagerPoolModule(made: baseMade, disposed: baseDisposed)
    let double = EagerPoolDoubleModule(made: doubleMade, disposed: doubleDisposed)
    let composed = try Container(modules: [base.overridden(by: double)])
    #expect(baseMade.value == 0, "the replaced eager singleton was made")
    #expect(doubleMade.value == 1)
    try composed.close()
    #expect(doubleDisposed.value == 1)

    let container = try Container(modules: [base])
    let session = try container.makeScope(.session, modules: [base.overridden(by: double)])
    #expect(baseMade.value == 1)
    #expect(doubleMade.value == 2)
    #expect(try session.resolveAll(EagerPool.self).count == 2)
    try session.close()
    #expect(doubleDisposed.value == 2)
    #expect(baseDisposed.value == 0)
    try container.close()
    #expect(baseDisposed.value == 1)
  }

  /// An override whose key differs from the one it means by its runtime arguments replaces
  /// nothing: a typed `staleOverride` naming the module, the key and the site, and nothing
  /// registered.
  @Test func anOverrideThatForgetsTheArgumentsIsStaleAndNamesItsSite() throws {
    let container = Container()
    let error = try #require(throws: ModuleError.self) {
      try container.install(ReportsModule(), ReportDoubleModule())
    }
    #expect(error.code == .staleOverride)
    #expect(error.modules.map(\.description) == ["ReportDoubleModule"])
    #expect(error.key?.description == "String")
    #expect(
      error.sites.map(\.description).allSatisfy {
        $0.hasPrefix("StrataModulesTests/Attack4CompositionTests.swift:")
      })
    #expect(container.installedModules.isEmpty)
    #expect(throws: ResolutionError.self) { _ = try container.resolve(String.self, arguments: 1) }
  }
}
