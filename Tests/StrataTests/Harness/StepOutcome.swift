/// What one operation produced, in the same words for the model and for Strata. Instance numbers
/// are each side's own; ``IdentityMatcher`` relates them.
indirect enum StepOutcome: Equatable, CustomStringConvertible {
  /// A registration, scope creation, close or release that did not throw.
  case done
  /// One resolved instance.
  case instance(Int)
  /// `resolveIfRegistered` found no registration.
  case absent
  /// A `ResolutionError` code (or, for Strata, another error's type). The model may accept a
  /// second code where the decisions allow either.
  case failure(String, alternative: String? = nil)
  /// The outcomes of several resolves in one operation (resolveAll, Lazy reads, Provider calls).
  case many([StepOutcome])

  var description: String {
    switch self {
    case .done: "done"
    case .instance(let id): "#\(id)"
    case .absent: "nil"
    case .failure(let code, let alternative?): "\(code) (or \(alternative))"
    case .failure(let code, nil): code
    case .many(let outcomes): "[" + outcomes.map(\.description).joined(separator: ", ") + "]"
    }
  }
}

/// What one operation did: its outcome and the instances disposed while it ran, in order.
struct StepResult: CustomStringConvertible {
  var outcome: StepOutcome
  var disposals: [Int] = []

  var description: String {
    disposals.isEmpty ? "\(outcome)" : "\(outcome), disposed \(disposals.map { "#\($0)" })"
  }
}

/// What an instance was made from, as both sides describe it: enough to tell two instances apart
/// and to compare their dependency trees.
struct InstanceShape: Equatable {
  let registration: Int
  let type: Int
  let dependencies: [Int]
}
