/// Generates a case from a seed: registration graphs over the service pool, a scope tree and a
/// sequence of operations. The same seed and features always give the same case.
struct CaseGenerator {
  let features: HarnessFeatures
  private var random: SplitMix64
  private let seed: UInt64
  /// Keys registered so far, which dependencies and resolves mostly pick from.
  private var registeredKeys: [KeySpec] = []
  private var nextRegistration = 1
  /// How many scopes the operations so far may have made (an upper bound).
  private var scopeCount = 1

  /// The one service type untagged `scoped` registrations use when the captive-untagged
  /// decision is not generated: no factory depends on it.
  private static let leafOnlyType = 7

  init(seed: UInt64, features: HarnessFeatures) {
    self.seed = seed
    self.features = features
    random = SplitMix64(seed: seed)
  }

  /// The case for this generator's seed.
  mutating func generate() -> CaseSpec {
    // Rolled whether or not deep chains are on, so that every other case stays the same.
    let deep = random.below(150) == 0
    if features.deepChains && deep { return deepChain() }
    var operations: [OperationSpec] = [.register(scope: 0, batch(random.within(3...8)))]
    for _ in 0..<random.within(3...24) {
      operations.append(operation())
    }
    return CaseSpec(seed: seed, operations: operations)
  }

  /// An acyclic chain of 500 registrations, each depending on the next, resolved from a child.
  mutating func deepChain() -> CaseSpec {
    let length = 500
    var chain: [RegistrationSpec] = []
    for index in 0..<length {
      let lifetime = random.weighted([(6, LifetimeSpec.transient), (2, .singleton), (2, .graph)])
      var registration = RegistrationSpec(
        id: index + 1, key: KeySpec(type: index % 8, name: .index(index)), lifetime: lifetime)
      if index + 1 < length {
        registration.dependencies = [
          DependencySpec(key: KeySpec(type: (index + 1) % 8, name: .index(index + 1)))
        ]
      }
      chain.append(registration)
    }
    let start = KeySpec(type: 0, name: .index(0))
    return CaseSpec(
      seed: seed,
      operations: [
        .register(scope: 0, chain), .makeScope(parent: 0, .request, nil),
        .resolve(scope: 1, start, .resolve, keep: false), .resolve(scope: 0, start, .resolve, keep: false),
      ])
  }

  private mutating func operation() -> OperationSpec {
    // Mostly one of the latest scopes, where scoped lifetimes find their tags.
    let scope = random.percent(60) ? max(0, scopeCount - 1 - random.below(3)) : random.below(scopeCount)
    switch random.weighted([
      (12, 0), (14, 1), (45, 2), (6, 3), (3, 4), (3, 5),
    ]) {
    case 0:
      return .register(scope: scope, batch(random.within(1...4)))
    case 1:
      scopeCount += 1
      let tag = random.weighted([(3, TagSpec.session), (4, .request), (2, .tenant)])
      return .makeScope(parent: scope, tag, random.percent(40) ? batch(random.within(1...3)) : nil)
    case 2:
      return resolveOperation(scope: scope)
    case 3:
      return .resolveAll(scope: scope, type: key(forResolve: true).type, pickName())
    case 4:
      // Closing the container ends most of the case: rarely.
      let target =
        scope == 0 && scopeCount > 1 && !random.percent(5) ? random.within(1...scopeCount - 1) : scope
      return .close(scope: target)
    default:
      return .releaseHeld
    }
  }

  private mutating func resolveOperation(scope: Int) -> OperationSpec {
    var key = key(forResolve: true)
    var routes: [(Int, RouteSpec)] = [
      (70, .resolve), (6, .lazy(reads: 1)), (4, .lazy(reads: 2)), (6, .provider), (6, .resolveIfRegistered),
    ]
    if features.ambientRoutes { routes += [(4, .injected), (4, .ambient)] }
    let route = random.weighted(routes)
    switch route {
    case .resolve: break
    case .resolveIfRegistered: key.arguments = .none
    default: key = KeySpec(type: key.type)
    }
    return .resolve(scope: scope, key, route, keep: random.percent(25))
  }

  private mutating func batch(_ count: Int) -> [RegistrationSpec] {
    (0..<count).map { _ in registration() }
  }

  private mutating func registration() -> RegistrationSpec {
    let type =
      random.weighted([(9, -1), (1, ServicePool.valueTypeIndex)]) == -1
      ? random.below(8) : ServicePool.valueTypeIndex
    var key = KeySpec(type: type, name: random.percent(70) ? .none : pickName())
    if random.percent(20) { key.arguments = random.pick([.int, .string, .intString, .tuple, .void]) }
    let scoped = features.scopedHeavy ? 3 : 1
    var lifetime = random.weighted([
      (25, LifetimeSpec.transient), (15, .singleton), (4, .eagerSingleton), (8, .weak), (10, .graph),
      (10 * scoped, .scoped(nil)), (10 * scoped, .scoped(.request)), (8 * scoped, .scoped(.session)),
      (4 * scoped, .scoped(.tenant)), (3 * scoped, .scoped(.root)),
    ])
    if key.arguments != .none && lifetime.isShared && random.percent(93) {
      lifetime = random.percent(70) ? .transient : .graph
    }
    if lifetime == .scoped(nil) && !features.untaggedScopedUnderSingletonIsCaptive {
      key.type = Self.leafOnlyType
    }
    let id = nextRegistration
    nextRegistration += 1
    var registration = RegistrationSpec(id: id, key: key, lifetime: lifetime)
    if random.percent(4) {
      registration.isInstance = true
      registration.key.arguments = .none
      return remember(registration)
    }
    registration.fails = random.percent(3)
    let dependencyCount = random.weighted([(30, 0), (35, 1), (25, 2), (10, 3)])
    // A cycle needs an edge to a type that is not lower. Through transients only, Strata finds
    // it by recursing to its depth limit (slow, above all under sanitizers): keep those rare.
    let mayCloseCycle = lifetime != .transient || random.percent(10)
    for _ in 0..<dependencyCount {
      registration.dependencies.append(dependency(of: key.type, mayCloseCycle: mayCloseCycle))
    }
    return remember(registration)
  }

  private mutating func remember(_ registration: RegistrationSpec) -> RegistrationSpec {
    registeredKeys.append(registration.key)
    return registration
  }

  /// A dependency: mostly a registered key of a lower type (so graphs are mostly acyclic), now
  /// and then any registered key (cycles) or a fresh one (often missing).
  private mutating func dependency(of type: Int, mayCloseCycle: Bool) -> DependencySpec {
    let lower = registeredKeys.filter { $0.type < type && dependable($0) }
    let any = registeredKeys.filter(dependable)
    var key: KeySpec
    switch random.below(100) {
    case 0..<88 where !lower.isEmpty: key = random.pick(lower)
    case 0..<95 where !any.isEmpty && mayCloseCycle: key = random.pick(any)
    default:
      key = freshKey()
      if !mayCloseCycle { key.type = type == 0 || key.type < type ? key.type : random.below(type) }
    }
    if !dependable(key) { key.type = 0 }
    guard features.indirectDependencies, key.name == .none, key.arguments == .none else {
      return DependencySpec(key: key)
    }
    var access = random.weighted([(70, AccessSpec.direct), (10, .lazy), (10, .provider), (10, .ambient)])
    if access == .lazy && Sanitizers.threadSanitizerIsActive { access = .provider }
    return DependencySpec(key: key, access: access)
  }

  private func dependable(_ key: KeySpec) -> Bool {
    features.untaggedScopedUnderSingletonIsCaptive || key.type != Self.leafOnlyType
  }

  /// A key to resolve: mostly one that is registered somewhere.
  private mutating func key(forResolve _: Bool) -> KeySpec {
    if !registeredKeys.isEmpty && random.percent(85) {
      var key = random.pick(registeredKeys)
      // Ask with a `String?` nil name for an unnamed key now and then: the same key.
      if key.name == .none && random.percent(10) { key.name = .textNil }
      return key
    }
    return freshKey()
  }

  private mutating func freshKey() -> KeySpec {
    var key = KeySpec(type: random.below(ServicePool.count))
    if random.percent(40) { key.name = pickName() }
    if random.percent(25) { key.arguments = random.pick(ArgumentSpec.allCases) }
    return key
  }

  private mutating func pickName() -> NameSpec {
    random.pick([.alpha, .beta, .other, .text("x"), .text("y"), .textNil, .none])
  }
}
