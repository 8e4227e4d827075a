import Strata

/// How `registry-10k` makes the 10,000 other keys it registers besides the measured one.
enum RegistryFill: String, CaseIterable, Sendable {
  /// 10,000 distinct service types, generic types made at run time from a number's bits
  /// (``fillerType(_:)``): what a large application's many services look like.
  case types
  /// 10,000 registrations of one service type under the names `0 ..< 10_000` (`Int`).
  case names
}

extension Workload {
  /// Every workload, in report order. Add new ones here.
  static let all: [Workload] = [
    transient, singleton, graph, graphAutowired, named, registry10k, arguments, argumentsHeap,
    failedResolve, concurrentTransient, requestScope, contendedScoped, scopeDepth8, rootTransientChurn,
    providerScopeChurn, serverRequest, concurrentServerRequest, serverRequestAsync,
    concurrentServerRequestAsync, build1k, build10k,
    validate10k,
    startupBuild, startup, startupClosures,
  ]

  /// A transient service without dependencies.
  static let transient = Workload(
    id: "transient", summary: "transient service without dependencies"
  ) { _ in
    try fooSubjects(container: fooContainer(), naive: fooNaive())
  }

  /// A singleton that already exists.
  static let singleton = Workload(
    id: "singleton", summary: "singleton, already created"
  ) { _ in
    let container = try Container { registry in
      registry.register(Bar.self, lifetime: .singleton) { _ in Bar() }
    }
    let naive = NaiveContainer()
    naive.register(Bar.self, singleton: true) { _ in Bar() }
    let root = ManualRoot()
    try expect(
      try container.resolve(Bar.self) === container.resolve(Bar.self),
      "Strata returned two different instances of a singleton")
    try expect(try naive.resolve(Bar.self) === naive.resolve(Bar.self), "naive singleton is not shared")
    return Subjects(
      strata: { count in for _ in 0..<count { blackHole(try container.resolve(Bar.self)) } },
      manual: { count in for _ in 0..<count { blackHole(root.sharedBar()) } },
      naive: { count in for _ in 0..<count { blackHole(try naive.resolve(Bar.self)) } })
  }

  /// `GraphA(GraphB(GraphC), GraphD)`, all transient, every dependency through the container.
  static let graph = Workload(
    id: "graph", summary: "transient A(B(C), D), every dependency resolved through the container"
  ) { _ in
    let container = try Container { registry in
      registry.register(GraphC.self) { _ in GraphC() }
      registry.register(GraphD.self) { _ in GraphD() }
      registry.register(GraphB.self) { resolver in GraphB(c: try resolver.resolve(GraphC.self)) }
      registry.register(GraphA.self) { resolver in
        GraphA(b: try resolver.resolve(GraphB.self), d: try resolver.resolve(GraphD.self))
      }
    }
    let naive = NaiveContainer()
    naive.register(GraphC.self) { _ in GraphC() }
    naive.register(GraphD.self) { _ in GraphD() }
    naive.register(GraphB.self) { naive in GraphB(c: try naive.resolve(GraphC.self)) }
    naive.register(GraphA.self) { naive in
      GraphA(b: try naive.resolve(GraphB.self), d: try naive.resolve(GraphD.self))
    }
    let root = try container.resolve(GraphA.self)
    try expect(root.b.c.value == 3 && root.d.value == 4, "Strata built the graph wrongly")
    try expect(try naive.resolve(GraphA.self).b.c.value == 3, "naive built the graph wrongly")
    return Subjects(
      strata: { count in for _ in 0..<count { blackHole(try container.resolve(GraphA.self)) } },
      manual: { count in for _ in 0..<count { blackHole(GraphA(b: GraphB(c: GraphC()), d: GraphD())) } },
      naive: { count in for _ in 0..<count { blackHole(try naive.resolve(GraphA.self)) } })
  }

  /// The `graph` workload with every registration auto-wired with its initializer.
  static let graphAutowired = Workload(
    id: "graph-autowired", summary: "the graph workload, every registration auto-wired (X.init)"
  ) { _ in
    let container = try Container { registry in
      registry.register(GraphC.self, GraphC.init)
      registry.register(GraphD.self, GraphD.init)
      registry.register(GraphB.self, GraphB.init)
      registry.register(GraphA.self, GraphA.init)
    }
    let naive = NaiveContainer()
    naive.register(GraphC.self) { _ in GraphC() }
    naive.register(GraphD.self) { _ in GraphD() }
    naive.register(GraphB.self) { naive in GraphB(c: try naive.resolve(GraphC.self)) }
    naive.register(GraphA.self) { naive in
      GraphA(b: try naive.resolve(GraphB.self), d: try naive.resolve(GraphD.self))
    }
    let root = try container.resolve(GraphA.self)
    try expect(root.b.c.value == 3 && root.d.value == 4, "Strata built the graph wrongly")
    try expect(try naive.resolve(GraphA.self).b.c.value == 3, "naive built the graph wrongly")
    return Subjects(
      strata: { count in for _ in 0..<count { blackHole(try container.resolve(GraphA.self)) } },
      manual: { count in for _ in 0..<count { blackHole(GraphA(b: GraphB(c: GraphC()), d: GraphD())) } },
      naive: { count in for _ in 0..<count { blackHole(try naive.resolve(GraphA.self)) } })
  }

  /// The `transient` workload through a named registration.
  static let named = Workload(
    id: "named", summary: "the transient service through a named registration"
  ) { _ in
    let container = try Container { registry in
      registry.register(Foo.self, name: Channel.primary) { _ in Foo() }
      registry.register(Foo.self, name: Channel.secondary) { _ in Foo() }
    }
    let naive = NaiveContainer()
    naive.register(Foo.self, name: Channel.primary) { _ in Foo() }
    naive.register(Foo.self, name: Channel.secondary) { _ in Foo() }
    try expect(try container.resolve(Foo.self, name: Channel.primary).value == 42, "named resolve failed")
    return Subjects(
      strata: { count in
        for _ in 0..<count { blackHole(try container.resolve(Foo.self, name: Channel.primary)) }
      },
      manual: { count in for _ in 0..<count { blackHole(Foo()) } },
      naive: { count in
        for _ in 0..<count { blackHole(try naive.resolve(Foo.self, name: Channel.primary)) }
      },
      references: [Workload.transient.id: try strataTransientReference()])
  }

  /// The `transient` workload with 10,000 other registrations in the same container.
  ///
  /// The other keys are 10,000 distinct generic service types by default (``RegistryFill/types``),
  /// or 10,000 `Int` names of one other type with `--registry-fill names`. The measured
  /// registration is the unnamed `Foo`, as in `transient`.
  static let registry10k = Workload(
    id: "registry-10k", summary: "the transient service with 10,000 other registrations present"
  ) { options in
    let fill = options.registryFill
    let otherCount = 10_000
    // Made (and their metadata instantiated) before measuring memory, which should show what
    // the containers keep, not the type metadata the runtime keeps.
    let fillerTypes = fill == .types ? (0..<otherCount).map(fillerType) : []
    let residentBeforeStrata = residentBytes()
    let container = try Container { registry in
      switch fill {
      case .types:
        for type in fillerTypes { registerFiller(type, in: registry) }
      case .names:
        for number in 0..<otherCount {
          registry.register(FillerService.self, name: number) { _ in FillerService() }
        }
      }
      registry.register(Foo.self) { _ in Foo() }
    }
    let residentBeforeNaive = residentBytes()
    let naive = fooNaive()
    switch fill {
    case .types:
      for type in fillerTypes { registerFiller(type, in: naive) }
    case .names:
      for number in 0..<otherCount {
        naive.register(FillerService.self, name: number) { _ in FillerService() }
      }
    }
    let residentAfter = residentBytes()

    try expect(
      container.registrations.count == otherCount + 1,
      "Strata lists \(container.registrations.count) registrations, expected \(otherCount + 1)")
    switch fill {
    case .types: for type in fillerTypes.suffix(2) { try resolveFiller(type, from: container) }
    case .names: _ = try container.resolve(FillerService.self, name: otherCount - 1)
    }
    var subjects = try fooSubjects(container: container, naive: naive)
    subjects.references[Workload.transient.id] = try strataTransientReference()
    if let residentBeforeStrata, let residentBeforeNaive, let residentAfter {
      subjects.residentGrowth = [
        .strata: residentBeforeNaive - residentBeforeStrata, .naive: residentAfter - residentBeforeNaive,
      ]
    }
    return subjects
  }

  /// A transient service made from two runtime arguments.
  static let arguments = Workload(
    id: "arguments", summary: "transient service with two runtime arguments (String, Int)"
  ) { _ in
    let container = try Container { registry in
      registry.register(Greeting.self) { (_: borrowing Resolver, name: String, times: Int) in
        Greeting(name, times)
      }
    }
    let naive = NaiveContainer()
    naive.register(Greeting.self) { (_, name: String, times: Int) in Greeting(name, times) }
    let name = "benchmark"
    let times = 3
    let greeting = try container.resolve(Greeting.self, arguments: name, times)
    try expect(greeting.name == name && greeting.times == times, "Strata passed the wrong arguments")
    return Subjects(
      strata: { count in
        for _ in 0..<count { blackHole(try container.resolve(Greeting.self, arguments: name, times)) }
      },
      manual: { count in for _ in 0..<count { blackHole(Greeting(name, times)) } },
      naive: { count in
        for _ in 0..<count { blackHole(try naive.resolve(Greeting.self, arguments: name, times)) }
      })
  }

  /// The `arguments` workload with a 40-byte string: too long to be stored inline, so its buffer
  /// is on the heap and retained and released wherever the argument is copied.
  static let argumentsHeap = Workload(
    id: "arguments-heap",
    summary: "transient service with two runtime arguments (40-byte heap String, Int)"
  ) { _ in
    let container = try Container { registry in
      registry.register(Greeting.self) { (_: borrowing Resolver, name: String, times: Int) in
        Greeting(name, times)
      }
    }
    let naive = NaiveContainer()
    naive.register(Greeting.self) { (_, name: String, times: Int) in Greeting(name, times) }
    let name = String(repeating: "x", count: 40)
    let times = 3
    try expect(name.utf8.count == 40, "the heap argument is not 40 bytes")
    let greeting = try container.resolve(Greeting.self, arguments: name, times)
    try expect(greeting.name == name && greeting.times == times, "Strata passed the wrong arguments")
    return Subjects(
      strata: { count in
        for _ in 0..<count { blackHole(try container.resolve(Greeting.self, arguments: name, times)) }
      },
      manual: { count in for _ in 0..<count { blackHole(Greeting(name, times)) } },
      naive: { count in
        for _ in 0..<count { blackHole(try naive.resolve(Greeting.self, arguments: name, times)) }
      })
  }

  /// Resolving a key nobody registered: Strata's error is built (not printed) and discarded.
  static let failedResolve = Workload(
    id: "failed-resolve", summary: "missing key: the error is built and caught, not printed"
  ) { _ in
    let container = try fooContainer()
    let naive = fooNaive()
    do {
      _ = try container.resolve(Missing.self)
      throw BenchmarkError("Strata resolved a type nobody registered")
    } catch let error as ResolutionError {
      try expect(error.code == .notRegistered, "Strata reported \(error.code), expected notRegistered")
    }
    return Subjects(
      strata: { count in
        for _ in 0..<count {
          do { blackHole(try container.resolve(Missing.self)) } catch { blackHole(error) }
        }
      },
      manual: { count in
        for _ in 0..<count {
          do { blackHole(try failManually()) } catch { blackHole(error) }
        }
      },
      naive: { count in
        for _ in 0..<count {
          do { blackHole(try naive.resolve(Missing.self)) } catch { blackHole(error) }
        }
      },
      references: [Workload.transient.id: try strataTransientReference()])
  }

  /// The `transient` workload on two threads at once.
  static let concurrentTransient = Workload(
    id: "concurrent-transient",
    summary: "the transient service on 2 threads at once (wall time / all resolves)", threads: 2
  ) { _ in
    var subjects = try fooSubjects(container: fooContainer(), naive: fooNaive())
    subjects.references[Workload.transient.id] = try strataTransientReference()
    return subjects
  }
}

/// A container with the transient `Foo`.
private func fooContainer() throws -> Container {
  try Container { registry in registry.register(Foo.self) { _ in Foo() } }
}

/// A naive container with the transient `Foo`.
private func fooNaive() -> NaiveContainer {
  let naive = NaiveContainer()
  naive.register(Foo.self) { _ in Foo() }
  return naive
}

/// Resolving the transient `Foo` from `container` and `naive`, or making it by hand.
private func fooSubjects(container: Container, naive: NaiveContainer) throws -> Subjects {
  try expect(try container.resolve(Foo.self).value == 42, "Strata made a wrong Foo")
  try expect(try naive.resolve(Foo.self).value == 42, "naive made a wrong Foo")
  return Subjects(
    strata: { count in for _ in 0..<count { blackHole(try container.resolve(Foo.self)) } },
    manual: { count in for _ in 0..<count { blackHole(Foo()) } },
    naive: { count in for _ in 0..<count { blackHole(try naive.resolve(Foo.self)) } })
}

/// Strata's `transient` workload on a container of its own, for ratios to it.
private func strataTransientReference() throws -> Body {
  let container = try fooContainer()
  return { count in for _ in 0..<count { blackHole(try container.resolve(Foo.self)) } }
}

private func registerFiller<F: Filler>(_ type: F.Type, in registry: Registrar) {
  registry.register(F.self) { _ in F() }
}

private func registerFiller<F: Filler>(_ type: F.Type, in naive: NaiveContainer) {
  naive.register(F.self) { _ in F() }
}

private func resolveFiller<F: Filler>(_ type: F.Type, from container: Container) throws {
  _ = try container.resolve(F.self)
}
