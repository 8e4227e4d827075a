import Strata
import Testing

/// A cycle whose two ends are first resolved on two threads at once never deadlocks: one thread at
/// least gets `cycle`, and no thread gets anything but an instance or `cycle`.
@Suite struct AttackCycleTests {
  /// Where the two services of the cycle keep their instances.
  enum Storage: CaseIterable, Sendable {
    /// A request's inline slots.
    case inlineSlots
    /// A request's overflow, past six other scoped instances.
    case overflow
    /// The container, as singletons.
    case singleton
  }

  /// Two threads make `Outer` and `Inner` at once, `Outer`'s factory needing `Inner` and `Inner`'s
  /// needing `Outer` (a real cycle across threads; each factory waits, for at most 200 ms, until
  /// both have started). 150 rounds.
  @Test(arguments: Storage.allCases)
  func aCycleAcrossTwoThreadsIsReportedWithoutDeadlock(storage: Storage) async throws {
    let made = Counter()
    let disposed = Counter()
    let problems = Collector<String>()
    for round in 0..<150 {
      let bothStarted = Barrier(parties: 2)
      let lifetime: Lifetime = storage == .singleton ? .singleton : .scoped(.request)
      let container = try Container { registry in
        registerNumbered(registry, made: made, disposed: disposed)
        registry.register(Outer.self, lifetime: lifetime) { resolver in
          bothStarted.arriveAndWait(timeout: .milliseconds(200))
          _ = try resolver.resolve(Inner.self)
          return Outer()
        }
        registry.register(Inner.self, lifetime: lifetime) { resolver in
          bothStarted.arriveAndWait(timeout: .milliseconds(200))
          _ = try resolver.resolve(Outer.self)
          return Inner()
        }
      }
      let request = try container.makeScope(.request)
      if storage == .overflow {
        for index in 0..<6 { _ = try resolveNumbered(index, from: request) }
      }
      let outcomes = Collector<Outcome>()

      let finished = await runOnThreads(2) { index in
        outcomes.append(
          Outcome {
            index == 0 ? try request.resolve(Outer.self) as AnyObject : try request.resolve(Inner.self)
          })
      }

      guard finished else {
        problems.append("round \(round): deadlock")
        break
      }
      for outcome in outcomes.elements where !outcome.isSuccess && outcome != .failure(.cycle) {
        problems.append("round \(round): \(outcome)")
      }
      if !outcomes.elements.contains(.failure(.cycle)) {
        problems.append("round \(round): no cycle reported: \(outcomes.elements)")
      }
      try closeSynchronously(request)
      try closeSynchronously(container)
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(5))")
    #expect(made.value == disposed.value)
  }
}
