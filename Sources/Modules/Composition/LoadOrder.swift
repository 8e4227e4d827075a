/// The order modules load in: every module after the modules it requires, each once, ties broken
/// by declaration order (a depth-first walk in the order modules are given and required).
enum LoadOrder {
  /// The modules to load for `roots`, leaving out those `installed` says are installed.
  ///
  /// - Throws: ``ModuleError/Code/moduleCycle`` naming the first cycle found, from the module whose
  ///   name sorts first.
  static func of(_ roots: [any Module], skipping installed: (ModuleID) -> Bool) throws -> [any Module] {
    var order: [any Module] = []
    /// `false` while a module's requirements are being walked, `true` once it is in `order`.
    var done: [ModuleID: Bool] = [:]
    /// The walk, as an explicit stack, so that a long chain of requirements cannot overflow.
    var stack: [(module: any Module, id: ModuleID, requires: [any Module], next: Int)] = []

    func enter(_ module: any Module, id: ModuleID) {
      done[id] = false
      stack.append((module, id, module.requires, 0))
    }

    for root in roots {
      let id = root.moduleID
      guard !installed(id), done[id] == nil else { continue }
      enter(root, id: id)
      while let top = stack.last {
        guard top.next < top.requires.count else {
          stack.removeLast()
          done[top.id] = true
          // A composition stands for its parts: a module requiring one of them is satisfied.
          for part in top.module.partIDs where done[part] == nil { done[part] = true }
          order.append(top.module)
          continue
        }
        stack[stack.count - 1].next += 1
        let required = top.requires[top.next]
        let requiredID = required.moduleID
        if installed(requiredID) { continue }
        switch done[requiredID] {
        case true?: continue
        case false?:
          let start = stack.firstIndex { $0.id == requiredID } ?? 0
          throw ModuleError(code: .moduleCycle, modules: canonical(cycle: stack[start...].map(\.id)))
        case nil: enter(required, id: requiredID)
        }
      }
    }
    return order
  }

  /// `cycle` (its modules once each) starting at the module whose name sorts first, and closed by
  /// it again: the same text whichever module of the cycle the walk entered it by, so that
  /// listing the modules in another order does not change the error.
  private static func canonical(cycle: [ModuleID]) -> [ModuleID] {
    let names = cycle.map(\.description)
    guard let first = names.indices.min(by: { (names[$0], $0) < (names[$1], $1) }) else { return cycle }
    let rotated = Array(cycle[first...] + cycle[..<first])
    return rotated + rotated.prefix(1)
  }
}
