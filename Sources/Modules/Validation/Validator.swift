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
    for (index, node) in graph.nodes.enumerated() where node.registration.moduleAttribution != nil {
      let registration = node.registration
      guard let first = firstByKey[registration.key] else {
        firstByKey[registration.key] = index
        continue
      }
      let earlier = graph.nodes[first].registration
      // An earlier override counts too: a plain registration of another module that comes after
      // it (a session's module installed before the container's override) is the duplicate the
      // install reports when the modules are installed the other way round.
      guard earlier.moduleAttribution != registration.moduleAttribution, !registration.isOverride
      else {
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
    /// The keys from the resolve that led here to `start` (excluded), when `start` is made inside
    /// another service's resolve: an untagged scoped service made where its captor is, or what a
    /// `Lazy` or `Provider` resolves where its holder lives.
    var prefix: [ServiceKey] = []
  }

  /// A `scoped` service reachable from a node through transient and graph services only (whose
  /// dependencies are resolved where the node's are).
  private struct Reached {
    /// The scoped node.
    let target: Int
    /// The next node on the way there: `target` itself for a direct dependency.
    let hop: Int
    /// Whether the way there goes through a `Lazy` or `Provider` (then it is resolved later, at
    /// the top level, without a captor).
    let isDeferred: Bool
  }

  /// ``reach(from:at:deferredCaptures:)`` per node, position and way of counting deferred edges.
  private var reachMemo: [Int: [Reached]] = [:]
  private var reachInProgress: Set<Int> = []

  /// Checks the resolve of node `start` as the core would make it: its context (where its
  /// dependencies are resolved, and whether it captures what it reaches), then each scoped service
  /// it reaches through transient services. Missing dependencies are reported on the way.
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

    var checked: Set<Int> = []
    checkReached(from: context, checked: &checked)
  }

  /// Checks what the resolve of `context.start` reaches: each scoped service against the context's
  /// rules, then, where the resolve makes them at a known position (`context.isFixed`), the
  /// untagged scoped services it makes there and what its `Lazy` and `Provider` dependencies
  /// resolve there later, each as a resolve of its own at that position. `checked` holds the
  /// nested resolves already checked (see ``nestedKey(_:at:captor:)``).
  private mutating func checkReached(from context: Context, checked: inout Set<Int>) {
    let start = context.start
    // A `Lazy` or `Provider` made for a holder the rules constrain (a singleton, a weak service)
    // resolves later under that holder's rules: for captures, its edges count as direct ones.
    let deferredCaptures =
      context.captor.map {
        LifetimeRules.constrainsLookups(by: graph.nodes[$0].registration.lifetime)
      } ?? false
    var nested: [Context] = []
    for reached in reach(
      from: start, at: context.position, deferredCaptures: deferredCaptures, prefix: context.prefix)
    {
      let found = graph.nodes[reached.target].registration
      if let tag = found.lifetime.scopeTag {
        checkTag(
          tag, of: reached, context: context, captor: reached.isDeferred ? nil : context.captor,
          deferredCaptures: deferredCaptures)
        continue
      }
      if !reached.isDeferred, found.lifetime == .scoped, let captor = context.captor,
        LifetimeRules.capture(of: found.lifetime, by: graph.nodes[captor].registration.lifetime) == .captive
      {
        add(
          .captiveDependency, key: found.key,
          path: context.prefix
            + path(to: reached, from: start, at: context.position, deferredCaptures: deferredCaptures),
          at: graph.nodes[captor].registration,
          .captive(
            captor: graph.nodes[captor].registration, captured: found, scopes: scopeText(context.position)))
        continue
      }
      // An untagged scoped service made at a known position above the deepest scope, or what a
      // `Lazy` or `Provider` resolves there later: its own dependencies are resolved there, which
      // its own check (at the deepest scope) does not see. Checked as a resolve of its own.
      let madeWhereResolved = [Lifetime.scoped, .transient, .graph].contains(found.lifetime)
      guard context.isFixed, context.position != graph.deepest, madeWhereResolved,
        found.lifetime == .scoped || reached.isDeferred
      else { continue }
      let captor = found.lifetime == .scoped ? reached.target : nil
      guard checked.insert(nestedKey(reached.target, at: context.position, captor: captor)).inserted
      else { continue }
      let keys =
        context.prefix
        + path(to: reached, from: start, at: context.position, deferredCaptures: deferredCaptures)
      nested.append(
        Context(
          position: context.position, captor: captor, isFixed: true, start: reached.target,
          prefix: Array(keys.dropLast())))
    }
    for inner in nested { checkReached(from: inner, checked: &checked) }
  }

  /// Identifies a nested resolve of `node` at `position`, made for itself as `captor` or for no
  /// captor.
  private func nestedKey(_ node: Int, at position: Int, captor: Int?) -> Int {
    (node * graph.tags.count + position) * 2 + (captor == nil ? 0 : 1)
  }

  /// The scoped services reachable from `start` through transient and graph services, with its
  /// dependencies resolved from `position`, in the order a depth-first walk meets them. Reports
  /// missing dependencies of every node it passes. Memoized per node and position, and iterative,
  /// so that long chains cost linear time and no stack.
  ///
  /// With `deferredCaptures`, `Lazy` and `Provider` edges are walked as direct ones (they resolve
  /// under the rules of the holder they were made for). `prefix` is the way to `start`, for the
  /// path of a dependency missing only here (see ``reportMissing(_:dependent:from:way:)``).
  private mutating func reach(
    from start: Int, at position: Int, deferredCaptures: Bool, prefix: [ServiceKey] = []
  ) -> [Reached] {
    func memoKey(_ node: Int) -> Int { self.memoKey(node, at: position, deferredCaptures: deferredCaptures) }
    if let done = reachMemo[memoKey(start)] { return done }

    struct Frame {
      let node: Int
      let edges: [ServiceDependency]
      var next = 0
      var found: [Reached] = []
      var seen: Set<Int> = []

      mutating func merge(_ reached: [Reached], via hop: Int) {
        for entry in reached where seen.insert(entry.target).inserted {
          found.append(Reached(target: entry.target, hop: hop, isDeferred: entry.isDeferred))
        }
      }
    }

    var frames = [Frame(node: start, edges: graph.nodes[start].edges ?? [])]
    reachInProgress.insert(memoKey(start))
    while let top = frames.last {
      guard top.next < top.edges.count else {
        frames.removeLast()
        reachInProgress.remove(memoKey(top.node))
        reachMemo[memoKey(top.node)] = top.found
        if !frames.isEmpty { frames[frames.count - 1].merge(top.found, via: top.node) }
        continue
      }
      let edge = top.edges[top.next]
      let isDeferred = edge.isDeferred && !deferredCaptures
      frames[frames.count - 1].next += 1
      guard let target = graph.target(of: edge, from: top.node, at: position) else {
        reportMissing(
          edge.key, dependent: top.node, from: position,
          way: prefix + frames.map { graph.nodes[$0.node].registration.key })
        continue
      }
      let lifetime = graph.nodes[target].registration.lifetime
      if lifetime.scopeTag != nil || (lifetime == .scoped && !isDeferred) {
        frames[frames.count - 1].merge(
          [Reached(target: target, hop: target, isDeferred: isDeferred)], via: target)
      } else if !isDeferred && (lifetime == .transient || lifetime == .graph) {
        if let done = reachMemo[memoKey(target)] {
          frames[frames.count - 1].merge(done, via: target)
        } else if reachInProgress.insert(memoKey(target)).inserted {  // else a cycle, reported apart
          frames.append(Frame(node: target, edges: graph.nodes[target].edges ?? []))
        }
      } else if isDeferred && [Lifetime.scoped, .transient, .graph].contains(lifetime) {
        // Resolved later, where the holder lives: checked there as a resolve of its own.
        frames[frames.count - 1].merge(
          [Reached(target: target, hop: target, isDeferred: true)], via: target)
      }
    }
    return reachMemo[memoKey(start)] ?? []
  }

  private func memoKey(_ node: Int, at position: Int, deferredCaptures: Bool) -> Int {
    (node * graph.tags.count + position) * 2 + (deferredCaptures ? 1 : 0)
  }

  /// The keys from `start` to the scoped service of `reached`, following the recorded hops.
  private func path(
    to reached: Reached, from start: Int, at position: Int, deferredCaptures: Bool
  ) -> [ServiceKey] {
    var keys = [graph.nodes[start].registration.key]
    var hop = reached.hop
    while keys.count <= graph.nodes.count {
      keys.append(graph.nodes[hop].registration.key)
      guard hop != reached.target,
        let next = reachMemo[memoKey(hop, at: position, deferredCaptures: deferredCaptures)]?
          .first(where: { $0.target == reached.target })
      else { break }
      hop = next.hop
    }
    return keys
  }

  /// Reports a `scoped(tag)` service reached where no scope with `tag` encloses the resolve.
  private mutating func checkTag(
    _ tag: ScopeTag, of reached: Reached, context: Context, captor: Int?, deferredCaptures: Bool
  ) {
    guard context.isFixed, graph.owner(tagged: tag, from: context.position) == nil else { return }
    let found = graph.nodes[reached.target].registration
    let path =
      context.prefix
      + path(to: reached, from: context.start, at: context.position, deferredCaptures: deferredCaptures)
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

  /// Reports `key` missing for `dependent` when resolved from `position`, reached on `way` (the
  /// keys from the resolve's start to `dependent`).
  ///
  /// A key that the deepest scope sees is missing only because a resolve runs above the scope
  /// that registers it (a root singleton reaching a session's service through transient ones):
  /// its path starts at that resolve, as the resolve's error does, since the dependent resolved
  /// on its own finds the key. A key nobody registers is reported with the dependent alone.
  private mutating func reportMissing(
    _ key: ServiceKey, dependent: Int, from position: Int, way: [ServiceKey]
  ) {
    let registration = graph.nodes[dependent].registration
    let isMissingEverywhere = graph.lookup(key, from: graph.deepest) == nil
    let path = (isMissingEverywhere ? [registration.key] : way) + [key]
    let variants = graph.argumentVariants(of: key, from: position)
    // One report per dependent and key (and scope, for a key missing only there), whichever
    // resolve reached it first.
    let place = isMissingEverywhere ? "" : "|\(position)"
    guard seen.insert("\(registration.identity)|\(key)\(place)").inserted else { return }
    if variants.isEmpty {
      add(.missingDependency, key: key, path: path, at: registration, .missing)
    } else {
      add(
        .argumentMismatch, key: key, path: path, at: registration,
        .argumentMismatch(registered: variants.map { graph.nodes[$0].registration.key }))
    }
  }

  // MARK: Helpers

  /// Adds a problem, unless the same one was added already.
  mutating func add(
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
