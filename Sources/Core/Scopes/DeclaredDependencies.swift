/// The registrations seen from one scope as a graph of declared dependencies: what a scope
/// consults to reorder its disposals when a `Lazy`, `Provider` or `@Injected` hands its holder an
/// instance filed after the holder (see ``Scope/keepFoundDependencies(below:resolved:)``).
///
/// Made only on that rare path, from the current snapshots: nothing is resolved, and no user
/// code runs. Keys are resolved as a resolve from the scope would resolve them (the nearest
/// registration; a singleton's dependencies where it is registered, a `scoped(tag)` service's
/// where its owner is); a registration whose dependencies are unknown (a closure factory that
/// declared no `dependsOn:`) makes every answer that passes through it unknown (`nil`).
struct DeclaredDependencies {
  /// One scope of the chain and its registry snapshot (`nil` if it never registered anything).
  private struct Level {
    let tagID: Int
    let registry: Registry?
  }

  /// From the scope (0) up to the root.
  private let levels: [Level]
  /// Memo of ``reach(of:key:followingDeferred:)`` by registration and kind of walk.
  private var memo: [Memo: Set<UInt>?] = [:]

  /// A registration, and whether its deferred edges were followed.
  private struct Memo: Hashable {
    let identity: UInt
    let deferred: Bool
  }

  init(from scope: Scope) {
    var levels: [Level] = []
    var current: Scope? = scope
    while let level = current {
      levels.append(Level(tagID: level.tag.id, registry: level.registry.current))
      current = level.parent
    }
    self.levels = levels
  }

  /// The identities of the registrations a resolve of `key` from the scope may reach, itself
  /// included, following every declared edge (deferred ones too: a `Lazy` the value holds may
  /// have been read); `nil` if the graph cannot tell. Empty if nothing is registered for `key`.
  mutating func reach(ofKey key: ServiceKey) -> Set<UInt>? {
    guard let (registration, level) = lookup(key, from: 0) else { return [] }
    return walk(from: registration, foundAt: level, followingDeferred: true)
  }

  /// The identities the instance of registration `identity` (filed under `key`) was built from,
  /// itself included; with `followingDeferred`, what it may resolve later too. `nil` if unknown,
  /// or if the registration is not found from this scope.
  mutating func reach(of identity: UInt, key: ServiceKey, followingDeferred: Bool) -> Set<UInt>? {
    let memoKey = Memo(identity: identity, deferred: followingDeferred)
    if let known = memo[memoKey] { return known }
    var found: Set<UInt>?
    if let (registration, level) = registration(identity, key: key) {
      found = walk(from: registration, foundAt: level, followingDeferred: followingDeferred)
    }
    memo[memoKey] = found
    return found
  }

  /// A depth-first walk of declared edges from `start`, found at `level` by a resolve from the
  /// scope itself.
  private func walk(from start: AnyRegistration, foundAt level: Int, followingDeferred: Bool) -> Set<UInt>? {
    var reached: Set<UInt> = []
    var seen: Set<Visit> = []
    var pending = [Step(registration: start, foundAt: level, resolvedFrom: 0)]
    while let step = pending.popLast() {
      let registration = step.registration
      reached.insert(registration.identity)
      guard let edges = registration.descriptor.edges else { return nil }
      // Not there (a `scoped(tag)` service without its scope): that resolve throws, makes nothing.
      guard let resolving = dependencyLevel(of: registration, step) else { continue }
      guard seen.insert(Visit(identity: registration.identity, level: resolving)).inserted else { continue }
      let forward = registration.attributes.forwardTarget
      for edge in edges where followingDeferred || !edge.isDeferred {
        // A forward leads to one registration, which need not be the latest of its key.
        let target =
          forward != 0
          ? self.registration(forward, key: edge.key) ?? lookup(edge.key, from: resolving)
          : lookup(edge.key, from: resolving)
        guard let (next, found) = target else { continue }  // not registered: that resolve throws
        pending.append(Step(registration: next, foundAt: found, resolvedFrom: resolving))
      }
    }
    return reached
  }

  /// A registration met by a walk: where it is registered, and where the resolve that met it runs.
  private struct Step {
    let registration: AnyRegistration
    let foundAt: Int
    let resolvedFrom: Int
  }

  /// A registration whose dependencies were walked from one level: walked once.
  private struct Visit: Hashable {
    let identity: UInt
    let level: Int
  }

  /// The level a registration met by `step` resolves its dependencies from, as the resolve
  /// funnel does: where it is registered for a singleton or weak service (no captive
  /// dependencies), the nearest scope with its tag for a `scoped(tag)` one (`nil` if there is
  /// none), else where the resolve that met it runs.
  private func dependencyLevel(of registration: AnyRegistration, _ step: Step) -> Int? {
    switch registration.kind {
    case .singleton, .eagerSingleton, .weak: return step.foundAt
    case .scoped where registration.scopeTagID != 0:
      return levels.indices.dropFirst(step.resolvedFrom).first { levels[$0].tagID == registration.scopeTagID }
    case .transient, .graph, .scoped: return step.resolvedFrom
    }
  }

  /// The nearest registration of `key` at or above `level`, and the level holding it.
  private func lookup(_ key: ServiceKey, from level: Int) -> (AnyRegistration, Int)? {
    for index in levels.indices.dropFirst(level) {
      if let found = levels[index].registry?.latest(for: key) { return (found, index) }
    }
    return nil
  }

  /// The registration numbered `identity` among those of `key` seen from the scope, and its level.
  private func registration(_ identity: UInt, key: ServiceKey) -> (AnyRegistration, Int)? {
    for (index, level) in levels.enumerated() {
      if let found = level.registry?.all(for: key).first(where: { $0.identity == identity }) {
        return (found, index)
      }
    }
    return nil
  }
}
