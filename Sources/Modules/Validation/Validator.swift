import Strata

/// Checks a ``GraphModel`` by walking its declared dependencies the way resolves would, without
/// running any factory, and collects every problem.
///
/// The lifetime rules are the core's, applied statically: a singleton's or weak service's
/// dependencies are resolved in the scope that holds its registration, a `scoped(tag)` service's
/// in the nearest scope with the tag, and everything else in the scope the resolve started from;
/// a shared service that reaches a `scoped(tag)` service whose tag does not enclose the scope
/// it is resolved in would capture it, and so would a singleton or weak service reaching an
/// untagged `scoped` one (the core hands it the instance of the singleton's own scope).
struct Validator {
  let graph: GraphModel
  private var problems: [ValidationProblem] = []
  /// Texts of the problems found, so that one reached on several paths is reported once.
  private var seen: Set<String> = []

  init(graph: GraphModel) {
    self.graph = graph
  }

  /// The report: duplicates, then each registration's problems in registration order, then cycles.
  mutating func report() -> ValidationReport {
    checkDuplicates()
    for index in graph.nodes.indices { checkResolves(startingAt: index) }
    checkCycles()
    return ValidationReport(
      problems: problems, unchecked: graph.nodes.filter { $0.edges == nil }.map(\.registration),
      registrationCount: graph.nodes.count, scopes: graph.chainDescription)
  }

  // MARK: Duplicates

  private mutating func checkDuplicates() {
    var firstByKey: [ServiceKey: Int] = [:]
    for (index, node) in graph.nodes.enumerated() where node.registration.module != nil {
      let registration = node.registration
      guard let first = firstByKey[registration.key] else {
        firstByKey[registration.key] = index
        continue
      }
      let earlier = graph.nodes[first].registration
      guard earlier.module != registration.module, !registration.isOverride, !earlier.isOverride else {
        continue
      }
      add(
        .duplicateRegistration, key: registration.key, path: [registration.key], at: earlier,
        .duplicate(first: earlier, second: registration))
    }
  }

  // MARK: Resolves

  /// Who resolves the dependencies being walked, and how sure the walk is of the scope.
  private struct Context {
    /// The position the dependencies are resolved from.
    let position: Int
    /// The shared registration whose instance is being made, if any.
    let captor: Int?
    /// Whether the resolve surely runs at `position` and not in some scope below it.
    let isFixed: Bool
    /// The node whose resolve is walked.
    let start: Int
  }

  /// Walks the dependencies of node `start` as a resolve of it would, through transient and graph
  /// services, and reports what is missing, mismatched or captured on the way.
  private mutating func checkResolves(startingAt start: Int) {
    let node = graph.nodes[start]
    let lifetime = node.registration.lifetime
    let context: Context
    if lifetime == .singleton || lifetime == .eagerSingleton || lifetime == .weak {
      context = Context(position: node.position, captor: start, isFixed: true, start: start)
    } else if let tag = lifetime.scopeTag {
      if let owner = graph.owner(tagged: tag, from: graph.deepest) {
        context = Context(position: owner, captor: start, isFixed: true, start: start)
      } else {
        if graph.isComplete {
          add(
            .noMatchingScope, key: node.registration.key, path: [node.registration.key],
            at: node.registration, .noMatchingScope(service: node.registration, scopes: scopesText()))
        }
        context = Context(position: graph.deepest, captor: start, isFixed: graph.isComplete, start: start)
      }
    } else {
      let isScoped = lifetime == .scoped
      context = Context(
        position: graph.deepest, captor: isScoped ? start : nil, isFixed: graph.isComplete, start: start)
    }

    // Depth-first through transient and graph services; each reached once per start.
    var visited: Set<Int> = [start]
    var stack: [(node: Int, path: [ServiceKey])] = [(start, [node.registration.key])]
    while let (current, path) = stack.popLast() {
      for edge in graph.nodes[current].edges ?? [] {
        let edgePath = path + [edge.key]
        guard let target = graph.lookup(edge.key, from: context.position) else {
          reportMissing(edge.key, path: edgePath, dependent: current, from: context.position)
          continue
        }
        let found = graph.nodes[target].registration
        if let tag = found.lifetime.scopeTag {
          // A `Lazy` or `Provider` resolves later, at the top level, from the same scope.
          checkTag(
            tag, of: target, path: edgePath, context: context, captor: edge.isDeferred ? nil : context.captor)
          continue
        }
        if edge.isDeferred { continue }
        if found.lifetime == .scoped, let captor = context.captor, isSingletonLike(captor) {
          add(
            .captiveDependency, key: found.key, path: edgePath, at: graph.nodes[captor].registration,
            .captive(
              captor: graph.nodes[captor].registration, captured: found, scopes: scopeText(context.position)))
        }
        if (found.lifetime == .transient || found.lifetime == .graph) && visited.insert(target).inserted {
          stack.append((target, edgePath))
        }
      }
    }
  }

  /// Reports a `scoped(tag)` service reached where no scope with `tag` encloses the resolve.
  private mutating func checkTag(
    _ tag: ScopeTag, of target: Int, path: [ServiceKey], context: Context, captor: Int?
  ) {
    guard context.isFixed, graph.owner(tagged: tag, from: context.position) == nil else { return }
    let found = graph.nodes[target].registration
    if let captor {
      let registration = graph.nodes[captor].registration
      add(
        .captiveDependency, key: found.key, path: path, at: registration,
        .captive(captor: registration, captured: found, scopes: scopeText(context.position)))
    } else {
      add(
        .noMatchingScope, key: found.key, path: path, at: graph.nodes[context.start].registration,
        .noMatchingScope(service: found, scopes: scopeText(context.position)))
    }
  }

  private mutating func reportMissing(
    _ key: ServiceKey, path: [ServiceKey], dependent: Int, from position: Int
  ) {
    let registration = graph.nodes[dependent].registration
    let variants = graph.argumentVariants(of: key, from: position)
    // One report per dependent and key, whichever resolve reached it first.
    guard seen.insert("\(registration.identity)|\(key)").inserted else { return }
    if variants.isEmpty {
      add(.missingDependency, key: key, path: path, at: registration, .missing)
    } else {
      add(
        .argumentMismatch, key: key, path: path, at: registration,
        .argumentMismatch(registered: variants.map { graph.nodes[$0].registration.key }))
    }
  }

  private func isSingletonLike(_ node: Int) -> Bool {
    let lifetime = graph.nodes[node].registration.lifetime
    return lifetime == .singleton || lifetime == .eagerSingleton || lifetime == .weak
  }

  // MARK: Cycles

  /// Reports every cycle of immediate (not deferred) dependencies found by a depth-first search:
  /// one per edge that closes a cycle.
  private mutating func checkCycles() {
    let targets: [[Int]] = graph.nodes.map { node in
      let position = graph.resolvingPosition(of: node)
      return (node.edges ?? []).filter { !$0.isDeferred }.compactMap { graph.lookup($0.key, from: position) }
    }
    /// 0: not reached, 1: on the current path, 2: done.
    var state = [UInt8](repeating: 0, count: graph.nodes.count)
    for root in graph.nodes.indices where state[root] == 0 {
      var stack: [(node: Int, next: Int)] = [(root, 0)]
      state[root] = 1
      while let (node, next) = stack.last {
        guard next < targets[node].count else {
          state[node] = 2
          stack.removeLast()
          continue
        }
        stack[stack.count - 1].next += 1
        let target = targets[node][next]
        switch state[target] {
        case 0:
          state[target] = 1
          stack.append((target, 0))
        case 1:
          let start = stack.firstIndex { $0.node == target } ?? 0
          let members = stack[start...].map(\.node)
          let keys = (members + [target]).map { graph.nodes[$0].registration.key }
          add(.cycle, key: keys[0], path: keys, at: graph.nodes[target].registration, .cycle)
        default: break
        }
      }
    }
  }

  // MARK: Helpers

  private mutating func add(
    _ code: ValidationProblem.Code, key: ServiceKey, path: [ServiceKey],
    at registration: RegistrationDescriptor,
    _ detail: ValidationProblem.Detail
  ) {
    let problem = ValidationProblem(
      code: code, key: key, path: path, registeredAt: registration.registeredAt, module: registration.module,
      detail: detail)
    if seen.insert(problem.description).inserted { problems.append(problem) }
  }

  /// The chain down to `position`: `root → session`.
  private func scopeText(_ position: Int) -> String {
    graph.tags[...min(position, graph.deepest)].map(\.name).joined(separator: " → ")
  }

  private func scopesText() -> String { scopeText(graph.deepest) }
}
