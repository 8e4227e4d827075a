import Strata

extension Validator {
  /// Reports the cycles of immediate (not deferred) dependencies: one per edge that closes a cycle
  /// in a depth-first search, then, for each service on a cycle that none of those passes
  /// through, its shortest cycle. So every service on a cycle is on a reported one, whatever the
  /// registration order (two cycles that share an edge, `A → B → D → A` and `A → C → D → A`, give
  /// the search only one edge back).
  ///
  /// The search runs over (registration, scope) pairs: a registration's dependencies are looked
  /// up from the scope it is resolved in, which for a transient depends on who resolves it (a
  /// transient that a root singleton needs resolves its own dependencies in the root, where a key
  /// a child scope shadows is not shadowed). Services on cycles are found as the strongly
  /// connected components of that graph (Tarjan's algorithm, run by the same search).
  mutating func checkCycles() {
    let positions = graph.tags.count
    let graph = graph
    /// The scope where the node's dependencies are looked up when the node is resolved from
    /// `position`.
    func dependencyPosition(_ node: Int, from position: Int) -> Int {
      let lifetime = graph.nodes[node].registration.lifetime
      if lifetime == .singleton || lifetime == .eagerSingleton || lifetime == .weak {
        return graph.nodes[node].position
      }
      if let tag = lifetime.scopeTag { return graph.owner(tagged: tag, from: position) ?? position }
      return position
    }
    /// The states a state leads to: a state is a node and the scope its dependencies are looked
    /// up from, encoded as `node * positions + position`.
    func targets(of state: Int) -> [Int] {
      let (node, position) = state.quotientAndRemainder(dividingBy: positions)
      return (graph.nodes[node].edges ?? []).filter { !$0.isDeferred }.compactMap { edge in
        graph.target(of: edge, from: node, at: position).map { target in
          target * positions + dependencyPosition(target, from: position)
        }
      }
    }
    /// The states the `Lazy` and `Provider` dependencies of a state resolve, later, at the top level.
    func deferredTargets(of state: Int) -> [Int] {
      let (node, position) = state.quotientAndRemainder(dividingBy: positions)
      return (graph.nodes[node].edges ?? []).filter(\.isDeferred).compactMap { edge in
        graph.target(of: edge, from: node, at: position).map { target in
          target * positions + dependencyPosition(target, from: position)
        }
      }
    }
    func keys(_ states: [Int]) -> [ServiceKey] { states.map { graph.nodes[$0 / positions].registration.key } }

    let count = graph.nodes.count * positions
    /// 0: not reached, 1: on the current path, 2: done.
    var state = [UInt8](repeating: 0, count: count)
    // Tarjan's bookkeeping: the order states were reached in, the lowest reachable on the stack.
    var order = [Int](repeating: -1, count: count)
    var low = [Int](repeating: 0, count: count)
    var component: [Int] = []
    var onComponent = [Bool](repeating: false, count: count)
    var components: [[Int]] = []
    var covered: Set<Int> = []  // nodes on a reported cycle
    var reachedCount = 0
    // Each registration where it is usually resolved; then what a `Lazy` or `Provider` of a state
    // met resolves later, where its holder lives (a singleton's, in the singleton's scope), as a
    // resolve of its own: a cycle there is met when the `Lazy` is read.
    var roots = graph.nodes.indices.map { $0 * positions + graph.resolvingPosition(of: graph.nodes[$0]) }
    var nextRoot = 0
    while nextRoot < roots.count {
      let start = roots[nextRoot]
      nextRoot += 1
      guard state[start] == 0 else { continue }
      func enter(_ reached: Int, _ stack: inout [(state: Int, targets: [Int], next: Int)]) {
        state[reached] = 1
        order[reached] = reachedCount
        reachedCount += 1
        low[reached] = order[reached]
        component.append(reached)
        onComponent[reached] = true
        stack.append((reached, targets(of: reached), 0))
        roots += deferredTargets(of: reached)
      }
      var stack: [(state: Int, targets: [Int], next: Int)] = []
      enter(start, &stack)
      while let (current, following, next) = stack.last {
        guard next < following.count else {
          state[current] = 2
          stack.removeLast()
          if let parent = stack.last?.state { low[parent] = min(low[parent], low[current]) }
          if low[current] == order[current], let first = component.lastIndex(of: current) {
            let members = Array(component[first...])
            component.removeSubrange(first...)
            for member in members { onComponent[member] = false }
            components.append(members)
          }
          continue
        }
        stack[stack.count - 1].next += 1
        let target = following[next]
        switch state[target] {
        case 0: enter(target, &stack)
        case 1:
          low[current] = min(low[current], order[target])
          let first = stack.firstIndex { $0.state == target } ?? 0
          let members = stack[first...].map(\.state) + [target]
          covered.formUnion(members.map { $0 / positions })
          add(
            .cycle, key: keys(members)[0], path: keys(members),
            at: graph.nodes[target / positions].registration,
            .cycle)
        default:
          if onComponent[target] { low[current] = min(low[current], order[target]) }
        }
      }
    }
    // A service on a cycle that no reported cycle passes through: a cycle through it, made from
    // the shortest ways from one state of its component to it and back, with the loops erased.
    // Linear in the component's size, plus the length of each cycle reported.
    for members in components where members.count > 1 {
      let inComponent = Set(members)
      var next: [Int: [Int]] = [:]
      var previous: [Int: [Int]] = [:]
      for member in members {
        let following = targets(of: member).filter(inComponent.contains)
        next[member] = following
        for target in following { previous[target, default: []].append(member) }
      }
      /// The state before each state on a shortest way from `origin` along `edges`.
      func ways(from origin: Int, along edges: [Int: [Int]]) -> [Int: Int] {
        var before: [Int: Int] = [origin: origin]
        var queue = [origin]
        var head = 0
        while head < queue.count {
          let current = queue[head]
          head += 1
          for target in edges[current] ?? [] where before[target] == nil {
            before[target] = current
            queue.append(target)
          }
        }
        return before
      }
      let origin = members.min() ?? members[0]
      let fromOrigin = ways(from: origin, along: next)
      let toOrigin = ways(from: origin, along: previous)
      for member in members.sorted() where !covered.contains(member / positions) {
        // The walk member ⇝ origin ⇝ member (through a next state, if member is the origin).
        var walk = [member]
        if member == origin, let first = next[member]?.first { walk.append(first) }
        while let last = walk.last, last != origin, let step = toOrigin[last], walk.count <= members.count {
          walk.append(step)
        }
        var back: [Int] = []
        var step = member
        while step != origin, let before = fromOrigin[step], back.count <= members.count {
          back.append(step)
          step = before
        }
        walk += back.reversed()
        // Erase the loops: a state met again cuts the way back to where it was first met.
        var cycle = [member]
        for state in walk.dropFirst() {
          if state == member { break }
          if let first = cycle.firstIndex(of: state) {
            cycle.removeSubrange((first + 1)...)
          } else {
            cycle.append(state)
          }
        }
        let path = cycle + [member]
        covered.formUnion(path.map { $0 / positions })
        add(
          .cycle, key: keys(path)[0], path: keys(path), at: graph.nodes[member / positions].registration,
          .cycle)
      }
    }
  }
}
