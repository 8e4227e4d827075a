import Strata

/// The registrations visible from a scope, as a graph that validation and export read: one node
/// per registration, placed at the scope that holds it, and lookups that find what a resolve from
/// a given scope of the chain would find. Built from descriptors only: nothing is resolved.
struct GraphModel {
  /// One registration and where it is.
  struct Node {
    let registration: RegistrationDescriptor
    /// The index of the scope holding it in ``GraphModel/tags``.
    let position: Int
    /// Its dependencies; `nil` for a closure factory that declared none.
    let edges: [ServiceDependency]?
    /// For a forward, the node of the registration it leads to (which need not be the latest of
    /// its key: a later registration of the key does not change where a forward leads).
    var forwardTarget: Int?
  }

  /// The tags from the root down to the scope validated, then the expected scopes below it.
  let tags: [ScopeTag]
  /// `root → session("s1")`: the chain the graph was read from.
  let chainDescription: String
  /// Each scope of the chain as it reads in messages: `root`, `session("s1")`.
  let scopeTitles: [String]
  /// How many of `tags` are scopes that exist (the rest are expected ones, without registrations).
  let existingCount: Int
  /// Whether the expected scopes below were given: then no other scope is assumed to exist.
  let isComplete: Bool
  let nodes: [Node]
  /// Per position, the nodes of each key held there, in registration order.
  private let byKey: [[ServiceKey: [Int]]]
  /// Per service type and name, the nodes registering it with any arguments: for argument hints.
  private let byService: [ServiceKey: [Int]]

  init(scope: Scope, expecting expected: [ScopeTag]) {
    let chain = scope.registrationsByScope
    tags = chain.map(\.scope.tag) + expected
    scopeTitles = chain.map(\.scope.description)
    chainDescription = scopeTitles.joined(separator: " → ")
    existingCount = chain.count
    isComplete = !expected.isEmpty
    var nodes: [Node] = []
    var byKey: [[ServiceKey: [Int]]] = []
    var byService: [ServiceKey: [Int]] = [:]
    for (position, level) in chain.enumerated() {
      var keys: [ServiceKey: [Int]] = [:]
      for registration in level.registrations {
        keys[registration.key, default: []].append(nodes.count)
        byService[registration.key.withoutArguments, default: []].append(nodes.count)
        nodes.append(
          Node(
            registration: registration, position: position,
            edges: registration.resolvedEdges))
      }
      byKey.append(keys)
    }
    // Forwards lead to one registration, found by identity; most graphs have few of them.
    let forwardTargets = Set(nodes.lazy.map(\.registration.attributes.forwardTarget).filter { $0 != 0 })
    if !forwardTargets.isEmpty {
      var byIdentity: [UInt: Int] = [:]
      for (index, node) in nodes.enumerated() where forwardTargets.contains(node.registration.identity) {
        byIdentity[node.registration.identity] = index
      }
      for index in nodes.indices {
        let target = nodes[index].registration.attributes.forwardTarget
        if target != 0 { nodes[index].forwardTarget = byIdentity[target] }
      }
    }
    self.nodes = nodes
    self.byKey = byKey
    self.byService = byService
  }

  /// The deepest position: the scope validated, or the last expected scope below it.
  var deepest: Int { tags.count - 1 }

  /// The node a resolve of `key` from the scope at `position` finds: the latest registration in
  /// the nearest scope at or above it.
  func lookup(_ key: ServiceKey, from position: Int) -> Int? {
    var level = min(position, existingCount - 1)
    while level >= 0 {
      if let found = byKey[level][key]?.last { return found }
      level -= 1
    }
    return nil
  }

  /// The node that `edge` of the node at `dependent` leads to when resolved from `position`: a
  /// forward's own target, else what ``lookup(_:from:)`` finds.
  func target(of edge: ServiceDependency, from dependent: Int, at position: Int) -> Int? {
    if let target = nodes[dependent].forwardTarget, nodes[target].registration.key == edge.key {
      return target
    }
    return lookup(edge.key, from: position)
  }

  /// The nodes visible from `position` that register `key`'s service type and name with other
  /// runtime arguments.
  func argumentVariants(of key: ServiceKey, from position: Int) -> [Int] {
    // Looked up by type and name, not filtered from every registration of the type: a graph with
    // thousands of names of one type and many missing ones took quadratic time.
    (byService[key.withoutArguments] ?? []).filter { index in
      nodes[index].position <= position && nodes[index].registration.key != key
    }
  }

  /// The position of the scope that owns instances of a `scoped(tag)` registration resolved from
  /// `position`: the nearest at or above it with `tag`.
  func owner(tagged tag: ScopeTag, from position: Int) -> Int? {
    tags[...min(position, deepest)].lastIndex(of: tag)
  }

  /// The position a node's dependencies are usually resolved from: the scope holding a singleton
  /// or weak registration, the scope owning a `scoped(tag)` one, else the deepest scope.
  func resolvingPosition(of node: Node) -> Int {
    let lifetime = node.registration.lifetime
    if lifetime == .singleton || lifetime == .eagerSingleton || lifetime == .weak { return node.position }
    if let tag = lifetime.scopeTag, let owner = owner(tagged: tag, from: deepest) { return owner }
    return deepest
  }
}
