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
      let got = Collector<StressWeak>()
      let closing = WeakBox(session)  // the thread must not keep the session alive
      let closer = Thread {
        let deadline = ContinuousClock.now + .seconds(30)
        // Once the factory runs, and a little later, when other requests have had a chance to
        // ask. (Waiting for them would wait for the pool, while the factory holds a pool thread
        // waiting for this one: with other tests doing the same, the pool could stall.)
        while !entered.isRaised, ContinuousClock.now < deadline { usleep(100) }
        usleep(5_000)
        try? closing.object?.close()
        gate.signal()
      }
      closer.start()
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<requests {
          group.addTask {
            do {
              try await session.withScope(.request) { request in
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

/// An asynchronous disposer that fails after a while.
private final class FailingRollback: AsyncDisposable, Sendable {
  let completed = Atomic<Int>(0)
  func dispose() async throws {
    try? await Task.sleep(for: .milliseconds(2))
    completed.add(1, ordering: .sequentiallyConsistent)
    throw StressDisposalFault(label: "rollback")
  }
}

extension AsyncFirstUseAttackTests {
  /// Eight tasks (some cancelled) close one request at once while its asynchronous disposer
  /// fails: the disposer runs once; every close returns only after it completed; exactly one
  /// close reports the failure, the others report nothing.
  @Test(.timeLimit(.minutes(1)))
  func concurrentClosesOfARequestReportItsDisposerErrorOnceAndWaitForIt() async throws {
    var failures: [String] = []
    for round in 0..<10 {
      let rollback = FailingRollback()
      let container = try Container { registry in
        registry.register(FailingRollback.self, lifetime: .scoped(.request)) { _ in rollback }
      }
      let request = try container.makeScope(.request)
      _ = try request.resolve(FailingRollback.self)
      let closes = (0..<8).map { index in
        Task { () -> (String, Int) in
          if index % 2 == 1 { withUnsafeCurrentTask { $0?.cancel() } }
          do {
            try await request.close()
            return ("ok", rollback.completed.load(ordering: .sequentiallyConsistent))
          } catch let error as ResolutionError where error.code == .disposalFailed {
            let carries = stressContains(error, StressDisposalFault.self)
            return (
              carries ? "failed" : "failed without the fault",
              rollback.completed.load(ordering: .sequentiallyConsistent)
            )
          } catch {
            return ("untyped: \(error)", 0)
          }
        }
      }
      var outcomes: [String] = []
      for close in closes {
        let (outcome, completed) = await close.value
        outcomes.append(outcome)
        if completed != 1 {
          failures.append("round \(round): a close returned before the disposer completed")
        }
      }
      if outcomes.filter({ $0 == "failed" }).count != 1 || outcomes.filter({ $0 == "ok" }).count != 7 {
        failures.append("round \(round): outcomes \(outcomes)")
      }
      let completed = rollback.completed.load(ordering: .sequentiallyConsistent)
      if completed != 1 { failures.append("round \(round): the disposer ran \(completed) times") }
      try await container.close()
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(6))")
  }
}

/// A request's asynchronous disposer that resolves from the request being closed (audit work at
/// rollback): what it already has, and something new.
private final class ResolvingRollback: AsyncDisposable, Sendable {
  let request = Slot<Scope>()
  let outcomes = Collector<String>()

  func dispose() async throws {
    await Task.yield()
    for name in ["cached", "new"] {
      do {
        _ = try request.value?.resolve(StressProbe.self, name: name)
        outcomes.append("\(name): resolved")
      } catch let error as ResolutionError {
        outcomes.append("\(name): \(error.code)")
      } catch {
        outcomes.append("\(name): untyped \(error)")
      }
    }
  }
}

extension AsyncFirstUseAttackTests {
  /// An asynchronous disposer asks the request it is disposed by (through `withScope`, in a
  /// cancelled task or not) for a cached and a new scoped instance: both throw `scopeClosed`,
  /// nothing new is made, and the cached instance is disposed once.
  @Test(.timeLimit(.minutes(1)), arguments: [false, true])
  func anAsyncDisposerResolvingFromItsClosingRequestIsRefused(cancelled: Bool) async throws {
    for round in 0..<5 {
      let made = Counter()
      let cached = StressProbe("cached")
      let rollback = ResolvingRollback()
      let container = try Container { registry in
        registry.register(StressProbe.self, name: "cached", lifetime: .scoped(.request)) { _ in cached }
        registry.register(StressProbe.self, name: "new", lifetime: .scoped(.request)) { _ in
          made.increment()
          return StressProbe("new")
        }
        registry.register(ResolvingRollback.self, lifetime: .scoped(.request)) { _ in rollback }
      }
      let task = Task {
        try await container.withScope(.request) { request in
          rollback.request.value = request
          _ = try request.resolve(StressProbe.self, name: "cached")
          _ = try request.resolve(ResolvingRollback.self)
          if cancelled { withUnsafeCurrentTask { $0?.cancel() } }
        }
      }
      try await task.value
      let closed = "\(ResolutionError.Code.scopeClosed)"
      #expect(rollback.outcomes.elements == ["cached: \(closed)", "new: \(closed)"], "round \(round)")
      #expect(made.value == 0, "round \(round): a closing request made a new instance")
      #expect(cached.disposeCount == 1, "round \(round)")
      try await container.close()
    }
  }
}
