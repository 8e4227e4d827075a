import Strata
import StrataModules

extension Workload {
  /// A container built from 10 modules holding 1,000 registrations.
  static let build1k = buildWorkload(id: build1kID, modules: 10, registrations: 1_000)
  private static let build1kID = "build-1k"

  /// A container built from 100 modules holding 10,000 registrations: `build-1k` ten times over.
  /// Samples `build-1k` interleaved with its own, for the linearity target.
  static let build10k = buildWorkload(
    id: "build-10k", modules: 100, registrations: 10_000,
    reference: (build1kID, modules: 10, registrations: 1_000))

  /// Validating the `build-10k` container's whole graph.
  static let validate10k = Workload(
    id: "validate-10k",
    summary: "validate() on the build-10k container (100 modules, 10,000 registrations)",
    allocationIterations: 20
  ) { options in
    let application = ModuleApplication(modules: 100, registrations: 10_000, fill: options.registryFill)
    let container = try Container(modules: application.modules)
    let report = try container.validate()
    try expect(
      report.registrationCount == 10_000 && report.unchecked.isEmpty,
      "validate-10k read \(report.registrationCount) registrations, \(report.unchecked.count) unchecked")
    let naive = application.naiveContainer()
    let manual = application.manualGraph()
    return Subjects(
      strata: { count in for _ in 0..<count { blackHole(try container.validate()) } },
      // By hand: check that every declared dependency is registered, the least a check costs.
      manual: { count in for _ in 0..<count { blackHole(manual.allDependenciesPresent) } },
      // A naive container can only check by resolving everything once.
      naive: { count in for _ in 0..<count { try application.resolveAll(from: naive) } },
      references: [build10k.id: building(application)])
  }

  /// Building a container from `modules` modules that hold `registrations` registrations in all;
  /// `reference`, if given, is the build workload whose Strata operation is sampled alongside.
  private static func buildWorkload(
    id: String, modules: Int, registrations: Int,
    reference: (id: String, modules: Int, registrations: Int)? = nil
  ) -> Workload {
    Workload(
      id: id,
      summary:
        "Container(modules:) from \(modules) modules, \(registrations) registrations (built and freed)",
      allocationIterations: 20
    ) { options in
      let application = ModuleApplication(
        modules: modules, registrations: registrations, fill: options.registryFill)
      let container = try Container(modules: application.modules)
      try expect(
        container.registrations.count == registrations && container.installedModules.count == modules,
        "\(id) built \(container.registrations.count) registrations in \(container.installedModules.count) modules"
      )
      var subjects = Subjects(
        strata: building(application),
        manual: { count in for _ in 0..<count { blackHole(application.manualGraph()) } },
        naive: { count in for _ in 0..<count { blackHole(application.naiveContainer()) } })
      if let reference {
        subjects.references[reference.id] = building(
          ModuleApplication(
            modules: reference.modules, registrations: reference.registrations, fill: options.registryFill))
      }
      return subjects
    }
  }

  /// Strata's operation of the build workloads: building (and freeing) `application`'s container.
  private static func building(_ application: ModuleApplication) -> Body {
    { count in for _ in 0..<count { blackHole(try Container(modules: application.modules)) } }
  }
}

/// The application the module workloads build: filler services spread evenly over modules.
///
/// Module `i` requires module `(i - 1) / 2` (a binary tree, so requirements are shared and loaded
/// once). In each module the first service is a singleton depending on the first service of the
/// required module; each other service depends on the one before it, and every tenth is a
/// singleton, the rest transient. All are closure factories declaring their dependency.
///
/// The services are distinct filler types by default; with `--registry-fill names` they are one
/// type under `Int` names, which shows what the distinct types' generic metadata costs.
struct ModuleApplication: Sendable {
  let modules: [any Module]
  let types: [any Filler.Type]
  let perModule: Int
  let fill: RegistryFill

  init(modules count: Int, registrations: Int, fill: RegistryFill) {
    let types = fill == .types ? (0..<registrations).map(fillerType) : []
    let perModule = registrations / count
    self.types = types
    self.perModule = perModule
    self.fill = fill
    modules = (0..<count).map {
      FillerModule(index: $0, perModule: perModule, registrations: registrations, types: types)
    }
  }

  /// The dependency of service `number`, if it has one.
  static func dependency(of number: Int, perModule: Int) -> Int? {
    let module = number / perModule
    if number % perModule != 0 { return number - 1 }
    return module == 0 ? nil : (module - 1) / 2 * perModule
  }

  private var count: Int { perModule * modules.count }

  func naiveContainer() -> NaiveContainer {
    let naive = NaiveContainer()
    for number in 0..<count {
      if fill == .types {
        registerNaive(types[number], singleton: number % 10 == 0, in: naive)
      } else {
        naive.register(FillerService.self, name: number) { _ in FillerService() }
      }
    }
    return naive
  }

  func resolveAll(from naive: NaiveContainer) throws {
    for number in 0..<count {
      if fill == .types {
        try resolveNaive(types[number], from: naive)
      } else {
        blackHole(try naive.resolve(FillerService.self, name: number))
      }
    }
  }

  func manualGraph() -> ManualGraph {
    func key(_ number: Int) -> ManualGraph.Key {
      fill == .types ? .type(ObjectIdentifier(types[number])) : .name(number)
    }
    var graph = ManualGraph()
    for number in 0..<count {
      graph.factories[key(number)] =
        fill == .types ? makeFactory(types[number]) : { FillerService() as any Sendable }
      graph.dependencies.append((key(number), Self.dependency(of: number, perModule: perModule).map(key)))
    }
    return graph
  }
}

/// What a hand-written composition root holds: a factory per service and each one's dependency.
struct ManualGraph: Sendable {
  enum Key: Hashable, Sendable {
    case type(ObjectIdentifier)
    case name(Int)
  }

  var factories: [Key: @Sendable () -> any Sendable] = [:]
  var dependencies: [(Key, Key?)] = []

  var allDependenciesPresent: Bool {
    dependencies.allSatisfy { $0.1.map { factories[$0] != nil } ?? true }
  }
}

/// One module of ``ModuleApplication``.
struct FillerModule: Module {
  let index: Int
  let perModule: Int
  let registrations: Int
  /// The distinct types, or empty to register `FillerService` under `Int` names.
  let types: [any Filler.Type]

  var moduleID: ModuleID { ModuleID(Self.self, index) }

  var requires: [any Module] {
    guard index > 0 else { return [] }
    return [
      FillerModule(index: (index - 1) / 2, perModule: perModule, registrations: registrations, types: types)
    ]
  }

  func register(in registry: Registrar) {
    for number in index * perModule..<(index + 1) * perModule {
      let dependency = ModuleApplication.dependency(of: number, perModule: perModule)
      let lifetime: Lifetime = number % 10 == 0 ? .singleton : .transient
      if types.isEmpty {
        registry.register(
          FillerService.self, name: number, lifetime: lifetime,
          dependsOn: dependency.map { [.service(FillerService.self, name: $0)] } ?? []
        ) { _ in FillerService() }
      } else {
        registerFiller(
          types[number], dependency: dependency.map { types[$0] }, lifetime: lifetime, in: registry)
      }
    }
  }
}

private func registerFiller<F: Filler>(
  _ type: F.Type, dependency: (any Filler.Type)?, lifetime: Lifetime, in registry: Registrar
) {
  let dependencies: [ServiceDependency] = dependency.map { [.service($0)] } ?? []
  registry.register(F.self, lifetime: lifetime, dependsOn: dependencies) { _ in F() }
}

private func registerNaive<F: Filler>(_ type: F.Type, singleton: Bool, in naive: NaiveContainer) {
  naive.register(F.self, singleton: singleton) { _ in F() }
}

private func resolveNaive<F: Filler>(_ type: F.Type, from naive: NaiveContainer) throws {
  blackHole(try naive.resolve(F.self))
}

private func makeFactory<F: Filler>(_ type: F.Type) -> @Sendable () -> any Sendable {
  { F() }
}
