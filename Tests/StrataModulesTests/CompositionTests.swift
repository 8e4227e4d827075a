import Strata
import StrataModules
import Testing

private struct GreetingModule: Module {
  func register(in registry: Registrar) {
    registry.register((any Greeter).self) { _ in FriendlyGreeter() }
  }
}

private struct CounterModule: Module {
  func register(in registry: Registrar) {
    registry.register(Counter.self, lifetime: .singleton) { _ in Counter() }
  }
}

private struct BrokenModule: Module {
  func register(in registry: Registrar) {
    registry.register(Counter.self, lifetime: .singleton) { (_, seed: Int) in Counter() }
  }
}

/// A module that records its configure step and its hook, with requirements given per instance.
private struct Recorded: Module {
  let name: String
  var required: [any Module] = []
  let log: EventLog

  var moduleID: ModuleID { ModuleID(Self.self, name) }
  var requires: [any Module] { required }

  func register(in registry: Registrar) {
    log.record("register \(name)")
  }

  func loaded(in scope: Scope) throws {
    log.record("loaded \(name) in \(scope.tag)")
  }
}

/// A generic module: each specialisation is a module type of its own.
private struct Region<Flavour>: Module {
  func register(in registry: Registrar) {}
}

private struct PaymentsModule: Module {
  let log: EventLog
  func register(in registry: Registrar) {
    log.record("register payments")
    registry.register(Counter.self, lifetime: .singleton) { _ in Counter() }
  }
}

private struct CheckoutModule: Module {
  let log: EventLog
  var requires: [any Module] { [PaymentsModule(log: log)] }
  func register(in registry: Registrar) {
    log.record("register checkout")
    registry.register((any Greeter).self, lifetime: .scoped(.session)) { _ in FriendlyGreeter() }
  }
}

private struct FailingHookModule: Module {
  struct HookFailure: Error, CustomStringConvertible {
    var description: String { "warm-up failed" }
  }
  func register(in registry: Registrar) {
    registry.register(Counter.self) { _ in Counter() }
  }
  func loaded(in scope: Scope) throws { throw HookFailure() }
}

@Suite struct CompositionTests {
  @Test func installedModulesRegisterTheirServices() throws {
    let container = try Container(modules: [GreetingModule(), CounterModule()])

    #expect(try container.resolve((any Greeter).self).greet("Ada") == "Hello, Ada!")
    #expect(try container.resolve(Counter.self) === container.resolve(Counter.self))
    #expect(container.installedModules == [ModuleID(GreetingModule.self), ModuleID(CounterModule.self)])
  }

  @Test func aModuleInstalledInAChildScopeIsInvisibleToTheParent() throws {
    let container = Container()
    let feature = try container.makeScope(ScopeTag("feature"))
    try feature.install(GreetingModule())

    #expect(try feature.resolve((any Greeter).self).greet("Bo") == "Hello, Bo!")
    #expect(throws: ResolutionError.self) { try container.resolve((any Greeter).self) }
  }

  @Test func anInvalidRegistrationInAModuleFailsTheWholeInstall() throws {
    let container = Container()
    let error = try #require(throws: ResolutionError.self) {
      try container.install(GreetingModule(), BrokenModule())
    }
    #expect(error.code == .invalidRegistration)
    #expect(try container.resolveIfRegistered((any Greeter).self) == nil)
    #expect(container.installedModules.isEmpty)
    // Nothing was claimed: the same modules install fine once the broken one is gone.
    try container.install(GreetingModule())
    #expect(container.installedModules == [ModuleID(GreetingModule.self)])
  }

  @Test func requiredModulesLoadOnceBeforeTheirDependentsInDeclarationOrder() throws {
    let log = EventLog()
    let base = Recorded(name: "base", log: log)
    let left = Recorded(name: "left", required: [base], log: log)
    let right = Recorded(name: "right", required: [base, Recorded(name: "extra", log: log)], log: log)
    let app = Recorded(name: "app", required: [left, right], log: log)

    _ = try Container(modules: [app, base, left])

    #expect(
      log.all == [
        "register base", "register left", "register extra", "register right", "register app",
        "loaded base in .root", "loaded left in .root", "loaded extra in .root", "loaded right in .root",
        "loaded app in .root",
      ])
  }

  @Test func installingAnInstalledModuleAgainDoesNothing() throws {
    let log = EventLog()
    let container = try Container(modules: [Recorded(name: "base", log: log)])
    try container.install(Recorded(name: "base", log: log), Recorded(name: "base", log: log))

    #expect(log.all == ["register base", "loaded base in .root"])
    #expect(container.installedModules == [ModuleID(Recorded.self, "base")])
  }

  @Test func parametrisedModulesWithDifferentValuesAreDifferentModules() throws {
    let log = EventLog()
    _ = try Container(modules: [Recorded(name: "eu", log: log), Recorded(name: "us", log: log)])

    #expect(log.all.filter { $0.hasPrefix("register") } == ["register eu", "register us"])
    #expect(ModuleID(Recorded.self, "eu").description == "Recorded(\"eu\")")
    #expect(ModuleID(GreetingModule.self).description == "GreetingModule")
  }

  @Test func moduleIdentitiesCompareByTypeAndParameterAndReadTheirTypesNames() async {
    // Two specialisations of one generic module type are two modules, each named after its type.
    #expect(ModuleID(Region<Int>.self) != ModuleID(Region<String>.self))
    #expect(
      Set([ModuleID(Region<Int>.self), ModuleID(Region<Int>.self), ModuleID(Region<String>.self)]).count == 2)
    #expect(ModuleID(Region<Int>.self, 7) == ModuleID(Region<Int>.self, 7))
    #expect(ModuleID(Region<Int>.self, 7) != ModuleID(Region<Int>.self, 8))
    #expect(ModuleID(Region<Int>.self, 7) != ModuleID(Region<String>.self, 7))
    #expect(ModuleID(Region<Int>.self) != ModuleID(Region<Int>.self, 7))
    // Parameters of different types are different values, even where `AnyHashable` says equal.
    #expect(ModuleID(Region<Int>.self, 7) != ModuleID(Region<Int>.self, 7 as UInt8))
    #expect(Set([ModuleID(Region<Int>.self, 7), ModuleID(Region<Int>.self, 7 as UInt8)]).count == 2)
    // Names are looked up once per type and shared: many tasks reading them at once agree.
    let names = await withTaskGroup(of: [String].self) { group in
      for _ in 0..<8 {
        group.addTask {
          (0..<200).map { index in
            index.isMultiple(of: 2)
              ? ModuleID(Region<Int>.self, index).description : ModuleID(Region<String>.self).description
          }
        }
      }
      return await group.reduce(into: Set<String>()) { $0.formUnion($1) }
    }
    #expect(names.contains("Region<Int>(0)") && names.contains("Region<Int>(198)"))
    #expect(names.contains("Region<String>"))
    #expect(names.count == 101)
  }

  @Test func typeNamesLookedUpForTheFirstTimeFromManyThreadsAtOnceAgree() async {
    // Types no other test names, so that the first lookups (the cache's writes) race.
    let identities = [
      ModuleID(Region<Int8>.self), ModuleID(Region<Int16>.self), ModuleID(Region<Int32>.self),
      ModuleID(Region<Int64>.self), ModuleID(Region<UInt8>.self), ModuleID(Region<UInt16>.self),
      ModuleID(Region<UInt32>.self), ModuleID(Region<UInt64>.self), ModuleID(Region<Float>.self),
      ModuleID(Region<Double>.self), ModuleID(Region<Bool>.self), ModuleID(Region<Character>.self),
    ]
    let seen = await withTaskGroup(of: [String].self) { group in
      for task in 0..<8 {
        group.addTask {
          (0..<identities.count).map { identities[($0 * 5 + task) % identities.count].description }
        }
      }
      return await group.reduce(into: [String: Int]()) { counts, names in
        for name in names { counts[name, default: 0] += 1 }
      }
    }
    #expect(seen.count == identities.count)
    #expect(seen.values.allSatisfy { $0 == 8 })
    #expect(seen["Region<Character>"] == 8 && seen["Region<UInt16>"] == 8)
  }

  @Test func aCycleAmongModulesIsAnErrorNamingIt() throws {
    let log = EventLog()
    let third = Recorded(name: "c", required: [Recorded(name: "a", log: log)], log: log)
    let second = Recorded(name: "b", required: [third], log: log)
    let first = Recorded(name: "a", required: [second], log: log)
    let container = Container()

    let error = try #require(throws: ModuleError.self) {
      try container.install(Recorded(name: "root", required: [first], log: log))
    }

    #expect(error.code == .moduleCycle)
    #expect(
      error.description == """
        moduleCycle: module cycle: Recorded("a") → Recorded("b") → Recorded("c") → Recorded("a")
          hint: a module cannot require itself, directly or through others; move what they share into \
        a module both require
        """)
    #expect(log.all.isEmpty)
    #expect(container.installedModules.isEmpty)
  }

  @Test func aFeatureModuleAttachesToASessionScope() throws {
    let log = EventLog()
    let container = try Container(modules: [PaymentsModule(log: log)])
    let session = try container.makeScope(.session, name: "s1", modules: [CheckoutModule(log: log)])

    // Payments, required by checkout, is installed in the root already: not loaded again.
    #expect(log.all == ["register payments", "register checkout"])
    #expect(session.installedModules == [ModuleID(CheckoutModule.self)])
    #expect(try session.resolve((any Greeter).self).greet("Cy") == "Hello, Cy!")
    #expect(try session.resolve(Counter.self) === container.resolve(Counter.self))
    #expect(throws: ResolutionError.self) { try container.resolve((any Greeter).self) }
  }

  @Test func aFeatureScopeLoadsTheRequirementsNoAncestorHas() throws {
    let log = EventLog()
    let container = Container()
    let session = try container.makeScope(.session, modules: [CheckoutModule(log: log)])

    #expect(log.all == ["register payments", "register checkout"])
    #expect(session.installedModules == [ModuleID(PaymentsModule.self), ModuleID(CheckoutModule.self)])
    #expect(container.installedModules.isEmpty)
  }

  @Test func aFailingHookIsReportedAfterTheRegistrationsArePublished() throws {
    let container = Container()
    let error = try #require(throws: ModuleError.self) { try container.install(FailingHookModule()) }

    #expect(error.code == .loadHookFailed)
    #expect(error.modules == [ModuleID(FailingHookModule.self)])
    #expect(error.underlying is FailingHookModule.HookFailure)
    #expect(error.message == "the loaded(in:) hook of FailingHookModule threw: warm-up failed")
    #expect(try container.resolveIfRegistered(Counter.self) != nil)
  }

  @Test func registrationsRecordTheirModule() throws {
    let container = try Container(modules: [GreetingModule(), CounterModule()])

    #expect(container.registrations.map(\.module) == ["GreetingModule", "CounterModule"])
  }
}

/// Counts its configure steps, to prove a module installed from several threads loads once.
private struct CountedModule: Module {
  let runs: FactoryRuns
  func register(in registry: Registrar) {
    runs.tick()
    registry.register(Counter.self, lifetime: .singleton) { _ in Counter() }
  }
}

@Suite struct ConcurrentInstallTests {
  @Test func oneModuleInstalledFromManyTasksAtOnceLoadsOnce() async throws {
    for _ in 0..<20 {
      let runs = FactoryRuns()
      let container = Container()
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<8 {
          group.addTask { try container.install(CountedModule(runs: runs)) }
        }
        try await group.waitForAll()
      }
      #expect(runs.value == 1)
      #expect(container.installedModules == [ModuleID(CountedModule.self)])
      #expect(container.registrations.count == 1)
    }
  }
}

/// A module that keeps the registrar it was given: the misuse the core reports.
private final class RegistrarKeeper: @unchecked Sendable {  // used on one thread only
  var registrar: Registrar?
}

private struct KeepingModule: Module {
  let keeper: RegistrarKeeper
  func register(in registry: Registrar) { keeper.registrar = registry }
}

private final class LateService: Sendable {}

@Suite struct ModuleRegistrarLateUseTests {
  @Test func aRegistrarAModuleKeptPastInstallationMakesItsLateKeyThrow() throws {
    let keeper = RegistrarKeeper()
    let container = try Container(modules: [KeepingModule(keeper: keeper)])

    try #require(keeper.registrar).register(LateService.self) { _ in LateService() }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(LateService.self) }
    #expect(error.code == .invalidRegistration)
  }
}
