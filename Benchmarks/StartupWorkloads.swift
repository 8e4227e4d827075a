import Strata

extension Workload {
  /// Building the container of the startup graph (``StartupGraph.swift``: 200 auto-wired
  /// singletons in 10 layers, 10 dependencies each outside the first layer), without resolving.
  ///
  /// The container is built and freed per operation. The manual baseline builds the 200 objects
  /// by hand in dependency order (a hand-written application has no container to build, only its
  /// objects); the naive one registers the 200 factories.
  static let startupBuild = Workload(
    id: "startup-build",
    summary: "Container of 200 auto-wired singletons (10 deps each) built and freed, nothing resolved",
    allocationIterations: 20, registrations: startupGraphCount
  ) { _ in
    try checkStartupGraph()
    return Subjects(
      strata: { count in
        for _ in 0..<count { blackHole(try Container { registerStartupGraphAutowired(in: $0) }) }
      },
      manual: { count in for _ in 0..<count { blackHole(buildStartupGraphByHand()) } },
      naive: { count in
        for _ in 0..<count {
          let naive = NaiveContainer()
          registerStartupGraph(in: naive)
          blackHole(naive)
        }
      })
  }

  /// `startup-build`, then every one of the 200 singletons resolved once.
  static let startup = startupWorkload(
    id: "startup", factories: "auto-wired", register: registerStartupGraphAutowired)

  /// `startup` with closure factories instead of auto-wired initializers.
  static let startupClosures = startupWorkload(
    id: "startup-closures", factories: "closure-factory", register: registerStartupGraphClosures)

  /// Building the startup graph's container with `register` and resolving every service once;
  /// the baselines build the same objects by hand, or through a naive container.
  private static func startupWorkload(
    id: String, factories: String, register: @escaping @Sendable (Registrar) -> Void
  ) -> Workload {
    Workload(
      id: id,
      summary: "Container of 200 \(factories) singletons built, each resolved once, freed",
      allocationIterations: 20, registrations: startupGraphCount
    ) { _ in
      try checkStartupGraph()
      let container = try Container { register($0) }
      try resolveStartupGraph(from: container)
      return Subjects(
        strata: { count in
          for _ in 0..<count {
            let container = try Container { register($0) }
            try resolveStartupGraph(from: container)
            blackHole(container)
          }
        },
        manual: { count in for _ in 0..<count { blackHole(buildStartupGraphByHand()) } },
        naive: { count in
          for _ in 0..<count {
            let naive = NaiveContainer()
            registerStartupGraph(in: naive)
            try resolveStartupGraph(from: naive)
            blackHole(naive)
          }
        })
    }
  }
}

/// Checks that both registrations of the startup graph hold every service, and that resolving
/// shares the singletons.
private func checkStartupGraph() throws {
  let autowired = try Container { registerStartupGraphAutowired(in: $0) }
  let closures = try Container { registerStartupGraphClosures(in: $0) }
  for container in [autowired, closures] {
    try expect(
      container.registrations.count == startupGraphCount,
      "the startup container has \(container.registrations.count) registrations, expected \(startupGraphCount)"
    )
    let last = try container.resolve(S199.self)
    try expect(last.d0 === (try container.resolve(type(of: last.d0))), "a startup singleton was made twice")
  }
  try expect(buildStartupGraphByHand().count == startupGraphCount, "the hand-built startup graph is short")
}
