import Strata
import StrataModules

/// The shape of one seeded graph: which keys are registered where, with what, in which modules.
struct GraphShape {
  static let keyCount = 18
  let specs: [Spec]
  /// Per root module: its specs and the numbers of the root modules it requires.
  let rootModules: [(specs: [Spec], requires: [Int])]
  /// Per session module: its specs and the root modules it requires.
  let sessionModules: [(specs: [Spec], requires: [Int])]
  /// The order the root modules are installed in (some listed twice).
  let installOrder: [Int]
  /// Second registrations of keys in the same container module.
  let twins: [Spec]
  /// Registrations a request makes itself, below the session: new keys and shadows.
  let requestSpecs: [Spec]
  /// Keys the first container module registers only with a runtime argument.
  let argumentKeys: [Int]
  /// Registrations the session makes itself, outside modules: some shadow a key of the container.
  let shadows: [Spec]

  static let lifetimes: [Lifetime] = [
    .transient, .singleton, .scoped(.request), .scoped(.session), .scoped, .weak, .graph,
  ]

  init(seed: UInt64) {
    var random = SeededRandom(seed: seed)
    var specs: [Spec] = []
    var inSession: [Bool] = []
    // One seed in three makes a sparse graph with every key registered: mostly valid ones.
    let isSparse = seed % 3 == 0
    for key in 0..<Self.keyCount where isSparse || !random.chance(12) {
      let declares = !random.chance(5)
      var edges: [Spec.Edge] = []
      if declares {
        for _ in 0..<random.next(isSparse ? 2 : 4) where !isSparse || key > 0 {
          // A sparse graph has no cycles: each key depends on earlier ones.
          let target = random.next(isSparse ? key : Self.keyCount)
          let isDeferred = target < 6 && random.chance(30)
          edges.append(
            Spec.Edge(
              target: target, isDeferred: isDeferred, isProvider: random.chance(50),
              asParameterType: random.chance(30)))
        }
      }
      let lifetime =
        isSparse && random.chance(40) ? .transient : Self.lifetimes[random.next(Self.lifetimes.count)]
      specs.append(Spec(key: key, lifetime: lifetime, edges: edges, declares: declares))
      inSession.append(random.chance(20))
    }
    let rootCount = 1 + random.next(3)
    let sessionCount = 1 + random.next(2)
    var root = Array(repeating: [Spec](), count: rootCount)
    var session = Array(repeating: [Spec](), count: sessionCount)
    for (spec, isSession) in zip(specs, inSession) {
      if isSession {
        session[random.next(sessionCount)].append(spec)
      } else {
        root[random.next(rootCount)].append(spec)
      }
    }
    // A module may register a key twice (for `resolveAll`): the later one is what `resolve` finds.
    var twins: [Spec] = []
    for index in root.indices {
      for spec in root[index] where random.chance(10) {
        let twin = Spec(
          key: spec.key, lifetime: Self.lifetimes[random.next(Self.lifetimes.count)],
          edges: (0..<random.next(3)).map { _ in
            Spec.Edge(
              target: random.next(Self.keyCount), isDeferred: false, isProvider: false, asParameterType: false
            )
          }, declares: true)
        root[index].append(twin)
        twins.append(twin)
      }
    }
    self.twins = twins
    rootModules = root.indices.map { index in
      (root[index], (0..<index).filter { _ in random.chance(40) })
    }
    sessionModules = session.map { ($0, (0..<rootCount).filter { _ in random.chance(40) }) }
    installOrder = random.shuffled(Array(0..<rootCount) + (0..<rootCount).filter { _ in random.chance(20) })
    shadows = specs.filter { spec in
      !inSession[specs.firstIndex { $0.key == spec.key } ?? 0] && random.chance(10)
    }
    .map { spec in
      let edges = (0..<random.next(3)).map { _ in
        Spec.Edge(
          target: random.next(Self.keyCount), isDeferred: false, isProvider: false, asParameterType: false)
      }
      return Spec(
        key: spec.key, lifetime: Self.lifetimes[random.next(Self.lifetimes.count)], edges: edges,
        declares: true)
    }
    argumentKeys = (6..<Self.keyCount).filter { key in !specs.contains { $0.key == key } && random.chance(50)
    }
    self.specs = specs
    requestSpecs = (0..<Self.keyCount).filter { _ in random.chance(12) }.map { key in
      let edges = (0..<random.next(3)).map { _ in
        let target = random.next(Self.keyCount)
        return Spec.Edge(
          target: target, isDeferred: target < 6 && random.chance(30), isProvider: random.chance(50),
          asParameterType: false)
      }
      return Spec(
        key: key, lifetime: Self.lifetimes[random.next(Self.lifetimes.count)], edges: edges, declares: true)
    }
  }

  func modules(log: GraphLog, reversed: Bool = false) -> (root: [any Module], session: [any Module]) {
    var built: [GraphModule] = []
    for (number, module) in rootModules.enumerated() {
      let specs = reversed ? Self.reversedByKey(module.specs) : module.specs
      built.append(
        GraphModule(
          number: number, specs: specs, required: module.requires.map { built[$0] }, log: log,
          argumentKeys: number == 0 ? argumentKeys : []))
    }
    let session = sessionModules.enumerated().map { number, module in
      GraphModule(
        number: 100 + number, specs: reversed ? Self.reversedByKey(module.specs) : module.specs,
        required: module.requires.map { built[$0] }, log: log)
    }
    let order = reversed ? installOrder.reversed() : installOrder
    return (order.map { built[$0] }, session)
  }

  /// The keys in the other order, the registrations of one key in theirs.
  static func reversedByKey(_ specs: [Spec]) -> [Spec] {
    var keys: [Int] = []
    for spec in specs where !keys.contains(spec.key) { keys.append(spec.key) }
    return keys.reversed().flatMap { key in specs.filter { $0.key == key } }
  }

  /// A session of `container` with the session's modules and its own registrations.
  func session(of container: Container, modules: [any Module], log: GraphLog) throws -> Scope {
    let session = try container.makeScope(.session, name: "s", modules: modules)
    try session.register { registry in
      for spec in shadows { spec.register(in: registry, log: log) }
    }
    return session
  }

  var sessionKeys: Set<Int> { Set(sessionModules.flatMap { $0.specs.map(\.key) }) }
}

/// What resolving every registration of a graph met.
struct GraphRun {
  var errors: [MetError] = []
  /// `holder ⊃ held` for each shared instance holding a shared instance whose owner does not
  /// enclose its own.
  var captives: [(holder: Int, held: Int)] = []
  /// The keys whose top-level resolve threw.
  var failed: Set<ServiceKey> = []

  /// Resolves `keys` from `scope`, reads the deferred dependencies of what they made (a few levels
  /// deep), and checks the owners of what each shared instance holds.
  static func resolve(_ keys: [Int], from scope: Scope, log: GraphLog) -> GraphRun {
    var run = GraphRun()
    var kept: [NodeInfo] = []
    for key in keys {
      var queue: [(NodeInfo, Int)] = []
      let before = log.all.count
      do {
        queue += try KeyOps.forKey(key).resolveAllFrom(scope).map { ($0, 0) }
      } catch {
        log.record(error)
      }
      // Without the factories that carry on past an error, this resolve would have failed (and
      // so would one that finds an instance made past an error cached).
      if log.all.count > before || queue.contains(where: { $0.0.isTainted }) {
        run.failed.insert(KeyOps.forKey(key).key)
      }
      var visited: Set<ObjectIdentifier> = []
      while let (info, depth) = queue.popLast() {
        guard visited.insert(ObjectIdentifier(info)).inserted else { continue }
        kept.append(info)
        run.checkOwners(of: info)
        for held in info.direct { queue.append((held, depth)) }
        guard depth < 3 else { continue }
        for held in info.deferred {
          do {
            queue.append((try held.read(), depth + 1))
          } catch {
            log.record(error)
          }
        }
      }
    }
    run.errors = log.all
    withExtendedLifetime(kept) {}
    return run
  }

  /// A shared instance may hold (directly, or through transient and graph instances) only shared
  /// instances owned by its own scope or an enclosing one. A weak instance is owned by nobody.
  private mutating func checkOwners(of holder: NodeInfo) {
    guard holder.isShared, !holder.ownerChain.isEmpty else { return }
    var stack = holder.direct
    var seen: Set<ObjectIdentifier> = []
    while let held = stack.popLast() {
      guard seen.insert(ObjectIdentifier(held)).inserted else { continue }
      if !held.isShared {
        stack += held.direct
      } else if held.lifetime != .weak, let owner = held.ownerChain.first, !holder.ownerChain.contains(owner)
      {
        captives.append((holder.key, held.key))
      }
    }
  }
}
