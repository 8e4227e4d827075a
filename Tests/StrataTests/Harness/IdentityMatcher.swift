/// Relates the model's instance numbers to Strata's: the first time an instance is seen on both
/// sides, the pair is bound (after checking that both were made by the same registration from
/// matching dependencies); from then on each side must keep naming its partner, and no instance
/// may stand for two.
struct IdentityMatcher {
  private var strataOf: [Int: Int] = [:]
  private var modelOf: [Int: Int] = [:]

  /// Why the two steps differ, or `nil` if they agree.
  mutating func compare(
    expected: StepResult, actual: StepResult, model: ReferenceModel, driver: StrataDriver
  ) -> String? {
    if let problem = compare(expected.outcome, actual.outcome, model, driver) { return problem }
    guard expected.disposals.count == actual.disposals.count else {
      return "disposed \(actual.disposals.count) instance(s), the model expects \(expected.disposals.count)"
    }
    for (modelID, strataID) in zip(expected.disposals, actual.disposals) {
      if let problem = match(modelID, strataID, model, driver) { return "disposal order: \(problem)" }
    }
    return nil
  }

  private mutating func compare(
    _ expected: StepOutcome, _ actual: StepOutcome, _ model: ReferenceModel, _ driver: StrataDriver
  ) -> String? {
    switch (expected, actual) {
    case (.done, .done), (.absent, .absent): return nil
    case (.failure(let code, let alternative), .failure(let actualCode, _)):
      return actualCode == code || actualCode == alternative
        ? nil : "error \(actualCode), expected \(expected)"
    case (.instance(let modelID), .instance(let strataID)):
      return match(modelID, strataID, model, driver)
    case (.many(let expectedAll), .many(let actualAll)):
      guard expectedAll.count == actualAll.count else {
        return "\(actualAll.count) result(s), expected \(expectedAll.count)"
      }
      for (one, other) in zip(expectedAll, actualAll) {
        if let problem = compare(one, other, model, driver) { return problem }
      }
      return nil
    default:
      return "got \(actual), expected \(expected)"
    }
  }

  private mutating func match(
    _ modelID: Int, _ strataID: Int, _ model: ReferenceModel, _ driver: StrataDriver
  ) -> String? {
    if let partner = strataOf[modelID] {
      return partner == strataID ? nil : "got instance #\(strataID), expected the earlier #\(partner) again"
    }
    if let partner = modelOf[strataID] {
      return
        "got the earlier instance #\(strataID) (model #\(partner)), expected a new one (model #\(modelID))"
    }
    guard let expected = model.shape(of: modelID), let actual = driver.shape(of: strataID) else {
      return "instance #\(strataID) was never recorded"
    }
    guard expected.registration == actual.registration, expected.type == actual.type else {
      return "instance #\(strataID) came from r\(actual.registration) (type \(actual.type)), "
        + "expected one from r\(expected.registration) (type \(expected.type))"
    }
    guard expected.dependencies.count == actual.dependencies.count else {
      return "instance #\(strataID) of r\(actual.registration) has \(actual.dependencies.count) dependencies"
    }
    strataOf[modelID] = strataID
    modelOf[strataID] = modelID
    for (one, other) in zip(expected.dependencies, actual.dependencies) {
      if let problem = match(one, other, model, driver) {
        return "in the dependencies of r\(actual.registration): \(problem)"
      }
    }
    return nil
  }
}

/// Where a case's run by Strata first differs from the model.
struct Mismatch: CustomStringConvertible {
  let step: Int
  let operation: OperationSpec
  let expected: StepResult
  let actual: StepResult
  let problem: String

  var description: String {
    "step \(step) (\(operation)):\n    Strata: \(actual)\n    model:  \(expected)\n    \(problem)"
  }
}

/// What a campaign observed, to show that it exercised what it claims to.
struct CampaignStatistics: CustomStringConvertible {
  var cases = 0
  var steps = 0
  var instances = 0
  var disposals = 0
  var errors: [String: Int] = [:]

  mutating func record(_ outcome: StepOutcome) {
    switch outcome {
    case .instance: instances += 1
    case .failure(let code, _): errors[code, default: 0] += 1
    case .many(let outcomes): for one in outcomes { record(one) }
    case .done, .absent: break
    }
  }

  var description: String {
    let codes = errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    return
      "\(cases) cases, \(steps) steps, \(instances) instances compared, \(disposals) disposals compared; "
      + "errors: \(codes)"
  }
}

/// Runs one case through the model and Strata in lockstep.
enum CaseRunner {
  /// The first step where Strata and the model disagree, or `nil`. The container is closed at
  /// the end as one more compared step, so every disposal is checked.
  static func run(
    _ spec: CaseSpec, features: HarnessFeatures, statistics: inout CampaignStatistics
  ) -> Mismatch? {
    statistics.cases += 1
    let model = ReferenceModel(features: features)
    let driver = StrataDriver(features: features)
    defer { driver.tearDown() }
    var matcher = IdentityMatcher()
    for (index, operation) in (spec.operations + [.close(scope: 0)]).enumerated() {
      let expected = model.step(operation)
      let actual = driver.step(operation)
      statistics.steps += 1
      statistics.record(expected.outcome)
      statistics.disposals += expected.disposals.count
      if let problem = matcher.compare(expected: expected, actual: actual, model: model, driver: driver) {
        return Mismatch(
          step: index, operation: operation, expected: expected, actual: actual, problem: problem)
      }
    }
    return nil
  }

  /// ``run(_:features:statistics:)`` without statistics.
  static func run(_ spec: CaseSpec, features: HarnessFeatures) -> Mismatch? {
    var ignored = CampaignStatistics()
    return run(spec, features: features, statistics: &ignored)
  }
}
