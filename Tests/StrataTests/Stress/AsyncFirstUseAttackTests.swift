import Foundation
import Strata
import Synchronization
import Testing

/// Many request tasks ask at once for a shared instance that does not exist yet, while the scope
/// that owns it closes under them.
@Suite struct AsyncFirstUseAttackTests {
  /// A hundred requests of one session ask for the session's shared instance (`scoped(.session)`,
  /// or a singleton the session registered) while its factory is held; the session closes before
  /// the factory returns. The factory runs once; every request either gets that one instance or
  /// `scopeClosed`; no request gets an instance made after the close began; the instance is
  /// disposed exactly once; and then every scope is freed.
  @Test(.timeLimit(.minutes(2)), arguments: [false, true])
  func manyRequestsAskingForASharedInstanceWhileItsSessionClosesGetOneOrScopeClosed(
    singleton: Bool
  ) async throws {
    let requests = 100
    var failures: [String] = []
    for round in 0..<6 {
      let entered = Flag()
      let gate = StressSignal()
      let made = Collector<StressProbe>()
      let makeProbe: @Sendable () -> StressProbe = {
        entered.raise()
        gate.wait(seconds: 30)
        let probe = StressProbe("shared")
        made.append(probe)
        return probe
      }
      let container = Container()
      let session = try container.makeScope(.session) { registry in
        registry.register(StressProbe.self, lifetime: singleton ? .singleton : .scoped(.session)) { _ in
          makeProbe()
        }
      }
      let weakSession = StressWeak(session, "session")
      let outcomes = Collector<String>()
      let asking = Counter()
      let got = Collector<StressWeak>()
      let closing = WeakBox(session)  // the thread must not keep the session alive
      let closer = Thread {
        let deadline = ContinuousClock.now + .seconds(30)
        // Once the factory runs and another request asks (on a two-thread pool, the one waiter
        // blocks the other thread: more cannot arrive).
        while !entered.isRaised || asking.value < 2, ContinuousClock.now < deadline { usleep(100) }
        usleep(2_000)
        try? closing.object?.close()
        gate.signal()
      }
      closer.start()
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<requests {
          group.addTask {
            do {
              try await session.withScope(.request) { request in
                asking.increment()
                let probe = try request.resolve(StressProbe.self)
                got.append(StressWeak(probe, "probe"))
              }
              outcomes.append("ok")
            } catch let error as ResolutionError {
              outcomes.append("\(error.code)")
            } catch {
              outcomes.append("untyped: \(error)")
            }
          }
        }
      }
      let counts = Dictionary(grouping: outcomes.elements, by: { $0 }).mapValues(\.count)
      if counts != ["\(ResolutionError.Code.scopeClosed)": requests] {
        failures.append("round \(round): outcomes \(counts)")
      }
      if !got.elements.isEmpty {
        failures.append("round \(round): \(got.elements.count) requests got the instance")
      }
      let disposed = await stressWait(seconds: 20) { made.elements.allSatisfy { $0.disposeCount == 1 } }
      if made.elements.count != 1 || !disposed {
        failures.append(
          "round \(round): made \(made.elements.count), disposed \(made.elements.map(\.disposeCount))")
      }
      try await container.close()
      _ = consume session
      let freed = await stressWait(seconds: 20) { weakSession.object == nil }
      if !freed { failures.append("round \(round): the session was not freed") }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(6))")
  }
}
