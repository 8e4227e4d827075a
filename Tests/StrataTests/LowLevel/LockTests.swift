import Foundation
import Testing

@testable import Strata

/// A plain counter that only a lock keeps consistent.
///
/// `@unchecked Sendable`: `count` is read and written only while the test's lock is held, or after
/// every thread that wrote it has finished.
private final class GuardedCount: @unchecked Sendable {
  var count = 0
}

/// A `SpinLock` shared by several threads, as a scope shares its own.
private final class SpinLockHolder: Sendable {
  let lock = SpinLock()
}

extension LowLevel {
  /// `Lock`, `SpinLock` and `currentThreadID()` on their own: one holder at a time, the lock given
  /// back however its critical section ends.
  @Suite struct LockTests {
    private static let threads = 8
    private static let increments = 5_000

    @Test func withLockLetsOneThreadAtATimeIncrementAPlainCounter() async {
      let lock = Lock()
      let shared = GuardedCount()

      let finished = await runOnThreads(Self.threads) { _ in
        for _ in 0..<Self.increments {
          lock.withLock { shared.count += 1 }
        }
      }

      #expect(finished)
      #expect(lock.withLock { shared.count } == Self.threads * Self.increments)
    }

    @Test func lockAndUnlockLetOneThreadAtATimeIncrementAPlainCounter() async {
      let lock = Lock()
      let shared = GuardedCount()

      let finished = await runOnThreads(Self.threads) { _ in
        for _ in 0..<Self.increments {
          lock.lock()
          let read = shared.count
          shared.count = read + 1
          lock.unlock()
        }
      }

      #expect(finished)
      lock.lock()
      let total = shared.count
      lock.unlock()
      #expect(total == Self.threads * Self.increments)
    }

    @Test func tryLockFailsWhileAnotherThreadHoldsTheLockAndSucceedsOnceItIsFree() async {
      let lock = Lock()
      let tryFromAnotherThread: @Sendable () -> Bool = {
        let taken = lock.tryLock()
        if taken { lock.unlock() }
        return taken
      }

      lock.lock()
      let whileHeld = await withDeadline(.seconds(10), tryFromAnotherThread)
      lock.unlock()
      let whenFree = await withDeadline(.seconds(10), tryFromAnotherThread)

      #expect(whileHeld == false)
      #expect(whenFree == true)
    }

    @Test func tryLockTakesTheLockForItsCaller() async {
      let lock = Lock()
      #expect(lock.tryLock())

      let another = await withDeadline {
        let taken = lock.tryLock()
        if taken { lock.unlock() }
        return taken
      }

      #expect(another == false, "the lock taken by tryLock is held")
      lock.unlock()
    }

    @Test func withLockHoldsTheLockWhileItsBodyRunsAndReturnsItsResult() async {
      let lock = Lock()

      let result = await withDeadline {
        lock.withLock { () -> (Bool?, Int) in
          let semaphore = Slot<Bool>()
          // Another thread, while this body runs.
          let thread = Thread {
            let taken = lock.tryLock()
            if taken { lock.unlock() }
            semaphore.value = taken
          }
          thread.start()
          while semaphore.value == nil { pause(microseconds: 50) }
          return (semaphore.value, 42)
        }
      }

      #expect(result?.0 == false, "another thread could not take the lock")
      #expect(result?.1 == 42)
    }

    @Test func withLockRethrowsWhatItsBodyThrowsAndGivesTheLockBack() async {
      let lock = Lock()

      #expect(throws: FixtureError(code: 7)) {
        try lock.withLock { () throws -> Int in throw FixtureError(code: 7) }
      }
      let free = await withDeadline {
        let taken = lock.tryLock()
        if taken { lock.unlock() }
        return taken
      }

      #expect(free == true, "the lock was given back when the body threw")
    }

    @Test func aSpinLockLetsOneThreadAtATimeIncrementAPlainCounter() async {
      let holder = SpinLockHolder()
      let shared = GuardedCount()

      let finished = await runOnThreads(Self.threads) { _ in
        for _ in 0..<Self.increments {
          holder.lock.lock()
          shared.count += 1
          holder.lock.unlock()
        }
      }

      #expect(finished)
      holder.lock.lock()
      let total = shared.count
      holder.lock.unlock()
      #expect(total == Self.threads * Self.increments)
    }

    @Test func aSpinLockHeldByAThreadKeepsOthersWaitingUntilItIsGivenBack() async {
      let holder = SpinLockHolder()
      let order = Collector<String>()
      holder.lock.lock()

      let entered = Flag()
      let waiter = Thread {
        holder.lock.lock()
        order.append("waiter")
        entered.raise()
        holder.lock.unlock()
      }
      waiter.start()
      pause(microseconds: 20_000)
      order.append("holder")
      holder.lock.unlock()
      let done = await eventually(timeout: .seconds(10)) { entered.isRaised }

      #expect(done)
      #expect(order.elements == ["holder", "waiter"])
    }

    @Test func eachThreadHasItsOwnNonZeroIDThatStaysTheSame() async {
      let mine = currentThreadID()
      let mineAgain = currentThreadID()
      let ids = Collector<UInt>()
      let barrier = Barrier(parties: 4)

      let finished = await runOnThreads(4) { _ in
        let id = currentThreadID()
        // All four threads are alive at once, so none can reuse another's identity.
        barrier.arriveAndWait()
        ids.append(id == currentThreadID() ? id : 0)
      }

      #expect(finished)
      #expect(mine != 0)
      #expect(mine == mineAgain)
      #expect(!ids.elements.contains(0))
      #expect(Set(ids.elements).count == 4)
    }
  }
}
