import Foundation
import Strata
import Testing

/// The two singletons of the cross-thread scenarios: `Outer`'s factory resolves `Inner`.
final class Outer: Sendable {}
final class Inner: Sendable {}

/// Cross-thread cycle detection is exact: plain contention is never reported as a cycle, and a real
/// cycle never deadlocks, whatever the interleaving.
@Suite struct CrossThreadCycleTests {
  /// T2 makes slow `Inner`; T1 makes `Outer` and waits for `Inner`; T2, done with `Inner`, asks
  /// for `Outer` while T1 is still waking up. That is contention, not a cycle.
  @Test func waitingForAnEntryWhoseHolderMovedOnIsNotACycle() async throws {
    for round in 0..<20 {
      let outerStarted = DispatchSemaphore(value: 0)
      let container = try Container { registry in
        registry.register(Inner.self, lifetime: .singleton) { _ in
          outerStarted.wait()
          pause(microseconds: 5_000)  // T1 is now blocked on Inner
          return Inner()
        }
        registry.register(Outer.self, lifetime: .singleton) { resolver in
          outerStarted.signal()
          _ = try resolver.resolve(Inner.self)
          return Outer()
        }
      }
      let outcomes = Collector<Outcome>()
      let innerTaken = DispatchSemaphore(value: 0)
      let finished = await runOnThreads(2) { index in
        if index == 0 {
          innerTaken.wait()
          outcomes.append(Outcome { try container.resolve(Outer.self) })
        } else {
          innerTaken.signal()
          outcomes.append(Outcome { try container.resolve(Inner.self) })
          outcomes.append(Outcome { try container.resolve(Outer.self) })
        }
      }
      #expect(finished, "deadlock in round \(round)")
      #expect(outcomes.elements.allSatisfy { $0.code == nil }, "round \(round): \(outcomes.elements)")
    }
  }

  /// `Outer` needs `Inner` and `Inner` needs `Outer`. T3's first attempt at `Inner` fails while T1
  /// (holding `Outer`) waits for it; T2 takes `Inner` over the moment T3 lets go and asks for
  /// `Outer`. A check that remembers whom T1 waited for (T3) instead of what (`Inner`) misses the
  /// cycle and deadlocks; nobody may deadlock, and the cycle is reported.
  @Test func aRealCycleWhoseEntryChangedHandsNeverDeadlocks() async throws {
    for round in 0..<20 {
      let attempts = Counter()
      let innerHeld = DispatchSemaphore(value: 0)
      let outerWaiting = DispatchSemaphore(value: 0)
      let firstAttemptOver = Flag()
      let container = try Container { registry in
        registry.register(Inner.self, lifetime: .singleton) { resolver in
          if attempts.increment() == 1 {
            innerHeld.signal()
            innerHeld.signal()
            outerWaiting.wait()
            pause(microseconds: 3_000)  // T1 is now blocked on Inner
            throw FixtureError(code: 1)
          }
          _ = try resolver.resolve(Outer.self)
          return Inner()
        }
        registry.register(Outer.self, lifetime: .singleton) { resolver in
          outerWaiting.signal()
          _ = try resolver.resolve(Inner.self)
          return Outer()
        }
      }
      let outcomes = Locked<[Int: Outcome]>([:])
      let finished = await runOnThreads(3, timeout: .seconds(20)) { index in
        let outcome: Outcome
        switch index {
        case 0:
          innerHeld.wait()
          outcome = Outcome { try container.resolve(Outer.self) }
        case 1:
          innerHeld.wait()
          while !firstAttemptOver.isRaised {}  // running, so that it takes Inner before T1 wakes
          outcome = Outcome { try container.resolve(Inner.self) }
        default:
          outcome = Outcome { try container.resolve(Inner.self) }
          firstAttemptOver.raise()
        }
        outcomes.withLock { $0[index] = outcome }
      }
      #expect(finished, "a real cycle deadlocked in round \(round)")
      let results = outcomes.withLock { $0 }
      #expect(results[2]?.code == .factoryFailed, "round \(round): \(results)")
      #expect(results[0]?.code == .cycle && results[1]?.code == .cycle, "round \(round): \(results)")
    }
  }

  /// Two threads each creating a request-scoped instance the other one needs: a cycle through
  /// scoped entries, detected the same way.
  @Test func aRealCycleThroughScopedInstancesNeverDeadlocks() async throws {
    for round in 0..<10 {
      let arrived = Barrier(parties: 2)
      let container = try Container { registry in
        registry.register(Inner.self, lifetime: .scoped(.request)) { resolver in
          arrived.arriveAndWait(timeout: .milliseconds(200))
          _ = try resolver.resolve(Outer.self)
          return Inner()
        }
        registry.register(Outer.self, lifetime: .scoped(.request)) { resolver in
          arrived.arriveAndWait(timeout: .milliseconds(200))
          _ = try resolver.resolve(Inner.self)
          return Outer()
        }
      }
      let request = try container.makeScope(.request)
      let outcomes = Collector<Outcome>()
      let finished = await runOnThreads(2, timeout: .seconds(20)) { index in
        outcomes.append(
          Outcome {
            index == 0 ? try request.resolve(Outer.self) as AnyObject : try request.resolve(Inner.self)
          })
      }
      #expect(finished, "a scoped cycle deadlocked in round \(round)")
      #expect(outcomes.elements.allSatisfy { $0.code == .cycle }, "round \(round): \(outcomes.elements)")
      try await request.close()
    }
  }

  /// `Outer`'s activation hook resolves `Inner`, whose factory resolves `Outer`: fine on one
  /// thread (the hook's instance is shared with its own thread), a cycle when another thread makes
  /// `Inner` meanwhile. The hint must not offer the hook the user already has as the fix.
  @Test func aCycleClosedInAnActivationHookMetAcrossThreadsGetsAHintThatFitsIt() async throws {
    let innerStarted = DispatchSemaphore(value: 0)
    let outerMade = DispatchSemaphore(value: 0)
    let hookRuns = Counter()
    let container = try Container { registry in
      registry.register(Outer.self, lifetime: .singleton) { _ in Outer() }
        .onActivated { resolver, _ in
          if hookRuns.increment() == 1 {  // T2 retries `Outer` after T1's hook failed
            outerMade.signal()
            innerStarted.wait()
            pause(microseconds: 20_000)  // T2 now waits for Outer
          }
          _ = try resolver.resolve(Inner.self)
        }
      registry.register(Inner.self, lifetime: .singleton) { resolver in
        innerStarted.signal()
        _ = try resolver.resolve(Outer.self)
        return Inner()
      }
    }
    let errors = Collector<ResolutionError>()
    let finished = await runOnThreads(2, timeout: .seconds(20)) { index in
      if index == 1 { outerMade.wait() }
      do {
        _ = try index == 0 ? container.resolve(Outer.self) as AnyObject : container.resolve(Inner.self)
      } catch let error as ResolutionError {
        errors.append(error)
      } catch {}
    }
    #expect(finished, "deadlock")
    let acrossThreads = errors.elements.filter { $0.hint?.contains("another thread") == true }
    let error = try #require(acrossThreads.first, "errors: \(errors.elements)")
    #expect(error.code == .cycle)
    #expect(
      error.hint
        == "`Inner` is being created by another thread that is waiting for a service this thread is "
        + "creating; break the cycle with Lazy or Provider, or make one of the two first (resolve it "
        + "at start-up, or register it as an eagerSingleton): an onActivated hook shares its instance "
        + "with its own thread only, until it returns")
  }
}
