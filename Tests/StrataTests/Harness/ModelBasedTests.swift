import Foundation
import Testing

/// How many cases to run and from which seed: fixed by default, so that CI is deterministic.
///
/// - `STRATA_HARNESS_SEED=1234` replays exactly that seed (and prints its case).
/// - `STRATA_HARNESS_CASES=100000` runs a longer campaign; `STRATA_HARNESS_BASE_SEED` moves it.
/// - `STRATA_HARNESS_ENABLE=…` switches on features left out of the generator (see
///   ``HarnessFeatures/enabling(_:)``).
struct HarnessConfiguration {
  var seeds: [UInt64]
  var isReplay: Bool

  static let defaultCases = 4000
  static let defaultBaseSeed: UInt64 = 0x5754_5241_5441

  static func fromEnvironment(
    defaultCases: Int = defaultCases, baseSeed: UInt64 = defaultBaseSeed
  ) -> HarnessConfiguration {
    let environment = ProcessInfo.processInfo.environment
    if let text = environment["STRATA_HARNESS_SEED"], let seed = UInt64(text) {
      return HarnessConfiguration(seeds: [seed], isReplay: true)
    }
    let count = environment["STRATA_HARNESS_CASES"].flatMap { Int($0) } ?? defaultCases
    let base = environment["STRATA_HARNESS_BASE_SEED"].flatMap { UInt64($0) } ?? baseSeed
    return HarnessConfiguration(seeds: (0..<UInt64(count)).map { base &+ $0 }, isReplay: false)
  }
}

/// Strata against the reference model on generated cases: every step must give the same
/// instance identities, the same error codes and the same disposals in the same order.
@Suite struct ModelBasedTests {
  @Test func strataAgreesWithTheReferenceModel() async {
    let configuration = HarnessConfiguration.fromEnvironment()
    let features = HarnessFeatures.modelBased.enabling(
      ProcessInfo.processInfo.environment["STRATA_HARNESS_ENABLE"])
    var failures = 0
    var statistics = CampaignStatistics()
    for seed in configuration.seeds {
      // Between cases, let other tests' tasks run: the campaign takes most of a minute under
      // ThreadSanitizer, and the task pool of a 2-core machine has two threads.
      await Task.yield()
      var generator = CaseGenerator(seed: seed, features: features)
      let spec = generator.generate()
      if configuration.isReplay { print("STRATA_HARNESS_SEED=\(seed) runs\n\(spec)") }
      guard let mismatch = CaseRunner.run(spec, features: features, statistics: &statistics) else { continue }
      failures += 1
      let shrunk = Shrinker.shrink(spec) { CaseRunner.run($0, features: features) != nil }
      let shrunkMismatch = CaseRunner.run(shrunk, features: features).map { "\($0)" } ?? "(passes)"
      Issue.record(
        """
        Strata disagrees with the model. Replay with STRATA_HARNESS_SEED=\(seed)
        first difference: \(mismatch)
        shrunk case (\(shrunk.operations.count) of \(spec.operations.count) operations), \
        \(shrunk)
        its difference: \(shrunkMismatch)
        """)
      if failures >= 5 { break }
    }
    print("model-based harness: \(statistics); ThreadSanitizer: \(Sanitizers.threadSanitizerIsActive)")
    #expect(failures == 0, "\(failures) failing seed(s) of \(configuration.seeds.count)")
    #expect(statistics.instances > statistics.cases, "cases resolved instances, not only errors")
  }

  /// Decision 6, which the campaign reaches now and then, on its own: a 500-long acyclic chain
  /// resolves (and agrees with the model) from a child scope and from the container.
  @Test func aDeepAcyclicChainResolvesAndAgreesWithTheModel() {
    var generator = CaseGenerator(seed: HarnessConfiguration.defaultBaseSeed, features: .modelBased)
    let spec = generator.deepChain()
    let driver = StrataDriver(features: .modelBased)
    defer { driver.tearDown() }
    let outcomes = spec.operations.map { driver.step($0).outcome }
    guard !Sanitizers.addressSanitizerIsActive else {
      // Too deep for the test thread's stack with ASan's frames: stopped, never overflowing.
      let stopped = outcomes.suffix(2).allSatisfy {
        switch $0 {
        case .instance, .failure("depthLimitExceeded", _): true
        default: false
        }
      }
      #expect(stopped, "\(outcomes)")
      return
    }
    #expect(CaseRunner.run(spec, features: .modelBased) == nil)
    #expect(outcomes.suffix(2).allSatisfy { if case .instance = $0 { true } else { false } }, "\(outcomes)")
  }
}
