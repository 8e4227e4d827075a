import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Strata

/// A condition, its count of waiters and the fact they wait for, shared by threads.
private final class Waitable: Sendable {
  let condition = WaitCondition()
  let waiting = Atomic<Int>(0)
  let done = Atomic<Bool>(false)

  func wait() { condition.wait(until: { done.load(ordering: .acquiring) }, countedIn: waiting) }

  /// Ends the work the waiters wait for, as a creator does: the fact, a fence, then the wake-up
  /// if anyone is counted.
  func finish(waking: Bool) {
    done.store(true, ordering: .releasing)
    atomicMemoryFence(ordering: .sequentiallyConsistent)
    if waking, waiting.load(ordering: .relaxed) != 0 { condition.wakeAll() }
  }
}

extension LowLevel {
  /// `WaitCondition` on its own: a waiter returns once its condition holds, is counted only while
  /// it blocks, and is never stranded by a wake-up that does not come.
  @Suite struct WaitConditionTests {
    @Test func aWaiterWhoseConditionHoldsReturnsAtOnceUncounted() {
      let waitable = Waitable()
      waitable.finish(waking: false)
      waitable.wait()
      #expect(waitable.waiting.load(ordering: .relaxed) == 0)
    }

    @Test func blockedWaitersAreCountedAndAllWokenByTheEndOfTheWork() {
      for _ in 0..<20 {
        let waitable = Waitable()
        let returned = DispatchSemaphore(value: 0)
        for _ in 0..<3 {
          Thread {
            waitable.wait()
            returned.signal()
          }.start()
        }
        // Past their turns of the scheduler, all three block, counted.
        let deadline = Date().addingTimeInterval(30)
        while waitable.waiting.load(ordering: .relaxed) < 3, Date() < deadline { usleep(1_000) }
        #expect(waitable.waiting.load(ordering: .relaxed) == 3)

        waitable.finish(waking: true)
        for _ in 0..<3 { #expect(returned.wait(timeout: .now() + 30) == .success) }
        #expect(waitable.waiting.load(ordering: .relaxed) == 0, "each waiter uncounted itself")
      }
    }

    @Test func aWaiterWhoseWakeUpNeverComesStillReturns() {
      let waitable = Waitable()
      let returned = DispatchSemaphore(value: 0)
      Thread {
        waitable.wait()
        returned.signal()
      }.start()
      let deadline = Date().addingTimeInterval(30)
      while waitable.waiting.load(ordering: .relaxed) == 0, Date() < deadline { usleep(1_000) }

      waitable.finish(waking: false)

      #expect(returned.wait(timeout: .now() + 30) == .success, "the waiter checks again on its own")
    }
  }
}
