import Foundation
import Strata
import Synchronization
import Testing

/// Cycle detection across threads must be exact: a thread that waits for a slow service it needs
/// is no cycle, and a real cycle started from several threads at once ends in `cycle` errors,
/// never in a deadlock. Each scenario runs 20 rounds; a deadlock fails the test after 10 s.
@Suite struct CycleStressTests {
  static let rounds = 20

  /// Where the services of a round live.
  enum Placement: CustomStringConvertible {
    case singletons
    case scopedInOneRequest

    var description: String {
      switch self {
      case .singletons: "singletons"
      case .scopedInOneRequest: "scoped in one request"
      }
    }

    var lifetime: Lifetime {
      switch self {
      case .singletons: .singleton
      case .scopedInOneRequest: .scoped(.request)
      }
    }

    /// The scope to resolve from: the container, or a request of it.
    func scope(in container: Container) throws -> Scope {
      switch self {
      case .singletons: container
      case .scopedInOneRequest: try container.makeScope(.request)
      }
    }
  }

  /// T1 makes A, whose factory needs G, while T2 is still making a slow G; once G is done, T2
  /// resolves A, which T1 is finishing. T1 waits for T2 and then T2 for T1, never at once: no
  /// error, and both get the same A and G.
  private static func slowDependencyRound(_ placement: Placement) async -> [String] {
    let gEntered = StressSignal()
    let aEntered = StressSignal()
    let releaseG = StressSignal()
    let scope: Scope
    do {
      let container = try Container { registry in
        registry.register(StressNode.self, name: "G", lifetime: placement.lifetime) { _ in
          gEntered.signal()
          releaseG.wait()
          return StressNode("G")
        }
        registry.register(StressNode.self, name: "A", lifetime: placement.lifetime) { resolver in
          aEntered.signal()
          return StressNode("A", next: try resolver.resolve(StressNode.self, name: "G"))
        }
      }
      scope = try placement.scope(in: container)
    } catch {
      return ["setting up failed: \(error)"]
    }
    let results = Locked<[Int: [StressNode]]>([:])
    let failures = Locked<[String]>([])

    let finished = await stressRunThreads(3, seconds: 10) { index in
      do {
        switch index {
        case 0:  // T2: the slow G, then A
          let g = try scope.resolve(StressNode.self, name: "G")
          let a = try scope.resolve(StressNode.self, name: "A")
          results.withLock { $0[0] = [a, g] }
        case 1:  // T1: A, which needs G
          guard gEntered.wait() else { return }
          let a = try scope.resolve(StressNode.self, name: "A")
          results.withLock { $0[1] = [a] }
        default:  // let G finish once T1 is waiting for it
          aEntered.wait()
          usleep(5000)
          releaseG.signal()
        }
      } catch {
        failures.withLock { $0.append("thread \(index): \(error)") }
      }
    }
    guard finished else {
      releaseG.signal()
      return ["the resolves did not finish within 10 s (deadlock)"]
    }
    var result = failures.withLock { $0 }
    let nodes = results.withLock { $0 }
    if result.isEmpty {
      if let t2 = nodes[0], let t1 = nodes[1] {
        if t1[0] !== t2[0] { result.append("two instances of A") }
        if t1[0].next !== t2[1] { result.append("A holds a G other than the one T2 got") }
      } else {
        result.append("a thread got no result")
      }
    }
    return result
  }

  @Test(.timeLimit(.minutes(1)))
  func aThreadWaitingForASlowSingletonItNeedsIsNoCycle() async {
    var failures: [String] = []
    for round in 0..<Self.rounds {
      failures += await Self.slowDependencyRound(.singletons).map { "round \(round): \($0)" }
    }
    #expect(failures.isEmpty, "\(failures.count) of \(Self.rounds) rounds failed: \(failures.prefix(5))")
  }

  @Test(.timeLimit(.minutes(1)))
  func aThreadWaitingForASlowScopedInstanceItNeedsIsNoCycle() async {
    var failures: [String] = []
    for round in 0..<Self.rounds {
      failures += await Self.slowDependencyRound(.scopedInOneRequest).map { "round \(round): \($0)" }
    }
    #expect(failures.isEmpty, "\(failures.count) of \(Self.rounds) rounds failed: \(failures.prefix(5))")
  }

  /// A real cycle through `names` (each needs the next, the last the first), started from one
  /// thread per name at once: each factory waits, on its first run, until every thread holds
  /// its own service. Every thread must get a `cycle` error (an instance is impossible here),
  /// and the scope must stay usable.
  private static func realCycleRound(_ names: [String], _ placement: Placement) async -> [String] {
    let barrier = StressBarrier(names.count)
    let firstRuns = Locked<Set<Int>>([])
    let scope: Scope
    do {
      let container = try Container { registry in
        for (index, name) in names.enumerated() {
          let next = names[(index + 1) % names.count]
          registry.register(StressNode.self, name: name, lifetime: placement.lifetime) { resolver in
            if firstRuns.withLock({ $0.insert(index).inserted }) { barrier.arriveAndWait() }
            return StressNode(name, next: try resolver.resolve(StressNode.self, name: next))
          }
        }
        registry.register(StressNode.self, name: "unrelated", lifetime: placement.lifetime) { _ in
          StressNode("unrelated")
        }
      }
      scope = try placement.scope(in: container)
    } catch {
      return ["setting up failed: \(error)"]
    }
    let failures = Locked<[String]>([])

    let finished = await stressRunThreads(names.count, seconds: 10) { index in
      do {
        let node = try scope.resolve(StressNode.self, name: names[index])
        failures.withLock { $0.append("thread \(index) got \(node.name) out of a cycle") }
      } catch let error as ResolutionError where error.code == .cycle {
      } catch {
        failures.withLock { $0.append("thread \(index): \(error)") }
      }
    }
    guard finished else { return ["the resolves did not finish within 10 s (deadlock)"] }

    // Nothing is left locked: the cycle is reported again, and another service resolves.
    let healthy = await stressRunThreads(1, seconds: 10) { _ in
      do {
        _ = try scope.resolve(StressNode.self, name: names[0])
        failures.withLock { $0.append("a resolve after the round got an instance out of a cycle") }
      } catch let error as ResolutionError where error.code == .cycle {
      } catch {
        failures.withLock { $0.append("a resolve after the round: \(error)") }
      }
      do {
        _ = try scope.resolve(StressNode.self, name: "unrelated")
      } catch {
        failures.withLock { $0.append("an unrelated resolve after the round: \(error)") }
      }
    }
    guard healthy else { return ["a resolve after the round did not finish within 10 s (deadlock)"] }
    return failures.withLock { $0 }
  }

  @Test(.timeLimit(.minutes(1)), arguments: [["A", "G"], ["A", "G", "H"]])
  func aRealCycleOfSingletonsStartedFromEveryThreadEndsInCycleErrors(names: [String]) async {
    var failures: [String] = []
    for round in 0..<Self.rounds {
      failures += await Self.realCycleRound(names, .singletons).map { "round \(round): \($0)" }
      if failures.contains(where: { $0.contains("deadlock") }) { break }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(5))")
  }

  @Test(.timeLimit(.minutes(1)), arguments: [["A", "G"], ["A", "G", "H"]])
  func aRealCycleOfScopedServicesStartedFromEveryThreadEndsInCycleErrors(names: [String]) async {
    var failures: [String] = []
    for round in 0..<Self.rounds {
      failures += await Self.realCycleRound(names, .scopedInOneRequest).map { "round \(round): \($0)" }
      if failures.contains(where: { $0.contains("deadlock") }) { break }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(5))")
  }
}
