import Foundation
import Strata
import Testing

/// Checks, on Strata alone, that no scoped instance is ever observed outside the subtree of the
/// scope that owns it: not by a top-level route (resolve, `Lazy`, `Provider`, `@Injected`,
/// `Scope.current`), and not by any factory, whichever route it used inside (`resolve`, `Lazy`,
/// `Provider`, `Scope.current`).
final class IsolationChecker {
  private let driver: StrataDriver
  private var lifetimes: [Int: LifetimeSpec] = [:]
  private var checkedDependencies: Set<Int> = []
  /// How many scoped instances were checked.
  private(set) var observations = 0
  /// Every violation found, described.
  private(set) var violations: [String] = []

  /// Learns the lifetimes of `spec`'s registrations.
  init(_ spec: CaseSpec, driver: StrataDriver) {
    self.driver = driver
    for operation in spec.operations {
      switch operation {
      case .register(_, let batch), .makeScope(_, _, let batch?):
        for registration in batch { lifetimes[registration.id] = registration.lifetime }
      default: break
      }
    }
  }

  /// `scope` and its ancestors, by the driver's scope names.
  private func chain(from scope: String) -> [String] {
    var result: [String] = []
    var current: String? = scope
    while let node = current {
      result.append(node)
      current = driver.parents[node]
    }
    return result
  }

  /// Checks instance `id`, seen from `viewer` (a scope, or the scope a factory ran in), and
  /// every dependency its factory received, recursively.
  func check(_ id: Int, seenFrom viewer: String, route: String) {
    guard let info = driver.recorder.info(id) else { return }
    if case .scoped = lifetimes[info.registration], let owner = info.factoryScope {
      observations += 1
      if !chain(from: viewer).contains(owner) {
        violations.append("\(route): scoped instance #\(id) of r\(info.registration) seen outside its owner")
      }
    }
    guard checkedDependencies.insert(id).inserted, let scope = info.factoryScope else { return }
    for dependency in info.dependencies {
      check(dependency, seenFrom: scope, route: "a dependency of #\(id) (r\(info.registration))")
    }
  }
}

@Suite struct ScopeIsolationTests {
  static let cases = 1000
  static let baseSeed: UInt64 = 0x4953_4F4C

  @Test func noScopedInstanceIsObservedOutsideItsOwnersSubtree() async {
    let features = HarnessFeatures.isolation
    var observations = 0
    var violations: [String] = []
    let configuration = HarnessConfiguration.fromEnvironment(
      defaultCases: Self.cases, baseSeed: Self.baseSeed)
    for seed in configuration.seeds {
      await Task.yield()  // see ModelBasedTests: leave the task pool to other tests between cases
      var generator = CaseGenerator(seed: seed, features: features)
      let spec = generator.generate()
      if configuration.isReplay { print("STRATA_HARNESS_SEED=\(seed) runs\n\(spec)") }
      let driver = StrataDriver(features: features)
      let checker = IsolationChecker(spec, driver: driver)
      defer { driver.tearDown() }
      for operation in spec.operations {
        let viewer: Scope?
        if case .resolve(let index, _, _, _) = operation {
          viewer = driver.scopes[index % driver.scopes.count]
        } else if case .resolveAll(let index, _, _) = operation {
          viewer = driver.scopes[index % driver.scopes.count]
        } else {
          viewer = nil
        }
        let result = driver.step(operation)
        guard let viewer = driver.lastAmbientChild ?? viewer.map({ $0.name ?? "root" }) else { continue }
        for id in Self.instances(in: result.outcome) {
          checker.check(id, seenFrom: viewer, route: "\(operation)")
        }
      }
      observations += checker.observations
      violations += checker.violations.map { "seed \(seed): \($0)" }
    }
    #expect(violations.isEmpty, "\(violations.prefix(5).joined(separator: "\n"))")
    #expect(observations > configuration.seeds.count / 2, "scoped instances were observed")
  }

  private static func instances(in outcome: StepOutcome) -> [Int] {
    switch outcome {
    case .instance(let id): [id]
    case .many(let outcomes): outcomes.flatMap(instances)
    default: []
    }
  }
}
