/// Makes a failing case smaller while it still fails: drops operations, registrations and
/// dependencies, and simplifies what remains, one greedy step at a time.
enum Shrinker {
  /// The smallest case found that `fails`; `spec` itself if nothing smaller fails.
  static func shrink(_ spec: CaseSpec, budget: Int = 600, fails: (CaseSpec) -> Bool) -> CaseSpec {
    var best = spec
    var tries = 0
    var progress = true
    while progress && tries < budget {
      progress = false
      for candidate in candidates(of: best) {
        tries += 1
        if tries > budget { break }
        if fails(candidate) {
          best = candidate
          progress = true
          break
        }
      }
    }
    return best
  }

  /// Every one-step simplification of `spec`, the biggest cuts first.
  static func candidates(of spec: CaseSpec) -> [CaseSpec] {
    var result: [CaseSpec] = []
    let operations = spec.operations
    // Drop halves, then single operations (latest first).
    if operations.count > 2 {
      let half = operations.count / 2
      result.append(CaseSpec(seed: spec.seed, operations: Array(operations[..<half])))
      result.append(CaseSpec(seed: spec.seed, operations: Array(operations[half...])))
    }
    for index in operations.indices.reversed() {
      var smaller = operations
      smaller.remove(at: index)
      result.append(CaseSpec(seed: spec.seed, operations: smaller))
    }
    for (index, operation) in operations.enumerated() {
      for simpler in simplifications(of: operation) {
        var changed = operations
        changed[index] = simpler
        result.append(CaseSpec(seed: spec.seed, operations: changed))
      }
    }
    return result
  }

  private static func simplifications(of operation: OperationSpec) -> [OperationSpec] {
    switch operation {
    case .register(let scope, let batch):
      return simplifications(of: batch).map { .register(scope: scope, $0) }
    case .makeScope(let parent, let tag, let batch?):
      return [.makeScope(parent: parent, tag, nil)]
        + simplifications(of: batch).map { .makeScope(parent: parent, tag, $0) }
    case .resolve(let scope, let key, let route, let keep):
      var result: [OperationSpec] = []
      if route != .resolve { result.append(.resolve(scope: scope, key, .resolve, keep: keep)) }
      if keep { result.append(.resolve(scope: scope, key, route, keep: false)) }
      if scope != 0 { result.append(.resolve(scope: 0, key, route, keep: keep)) }
      return result
    case .close(let scope) where scope != 0:
      return [.close(scope: 0)]
    default:
      return []
    }
  }

  private static func simplifications(of batch: [RegistrationSpec]) -> [[RegistrationSpec]] {
    var result: [[RegistrationSpec]] = []
    for index in batch.indices.reversed() where batch.count > 1 {
      var smaller = batch
      smaller.remove(at: index)
      result.append(smaller)
    }
    for (index, registration) in batch.enumerated() {
      var variants: [RegistrationSpec] = []
      for dependency in registration.dependencies.indices.reversed() {
        var fewer = registration
        fewer.dependencies.remove(at: dependency)
        variants.append(fewer)
      }
      if registration.fails {
        var succeeding = registration
        succeeding.fails = false
        variants.append(succeeding)
      }
      if registration.lifetime != .transient && !registration.isInstance {
        var transient = registration
        transient.lifetime = .transient
        variants.append(transient)
      }
      for variant in variants {
        var changed = batch
        changed[index] = variant
        result.append(changed)
      }
    }
    return result
  }
}
