import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where threads that wait for another thread's work block instead of spinning: a mutex and a
/// condition variable. The owner keeps a count of the threads waiting (an `Atomic<Int>` of its
/// own, which a hot path can read without touching this object), so that whoever ends such work
/// wakes them only when there are any: one atomic load on its path otherwise.
///
/// A waiter checks its condition after announcing itself, and the thread that ends the work
/// checks for waiters after ending it, both across a sequentially consistent fence: one of the two
/// sees the other. The condition is checked under the mutex, which the waker takes to wake, so a
/// wake-up between the check and the wait is not lost. A waiter also wakes on its own every few
/// milliseconds and checks again, so a wake-up that never comes delays it, never strands it.
///
/// `@unchecked Sendable`: the only state is the `pthread` mutex and condition, made to be shared
/// between threads. Their memory is allocated in `init`, never moves, and is freed in `deinit`.
package final class WaitCondition: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let condition: UnsafeMutablePointer<pthread_cond_t>

  package init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    _ = pthread_mutex_init(mutex, nil)
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    _ = pthread_cond_init(condition, nil)
  }

  deinit {
    _ = pthread_cond_destroy(condition)
    condition.deinitialize(count: 1)
    condition.deallocate()
    _ = pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// Returns once `isDone` holds: at once if it does, after a few turns of the scheduler if it
  /// soon does (most waited-for work is short), blocked otherwise, counted in `waiting` meanwhile.
  ///
  /// `isDone` runs under this condition's mutex once the thread blocks: it must not wait for
  /// anything that ``wakeAll()``'s caller holds.
  package func wait(until isDone: () -> Bool, countedIn waiting: borrowing Atomic<Int>) {
    for _ in 0..<64 {
      if isDone() { return }
      sched_yield()
    }
    waiting.add(1, ordering: .sequentiallyConsistent)
    // Orders the announcement before the checks below, against the waker's fence (see the type).
    atomicMemoryFence(ordering: .sequentiallyConsistent)
    _ = pthread_mutex_lock(mutex)
    while !isDone() { waitAWhile() }
    _ = pthread_mutex_unlock(mutex)
    waiting.subtract(1, ordering: .relaxed)
  }

  /// Wakes every waiting thread. The caller has ended the work they wait for, passed a
  /// sequentially consistent fence since, and seen the count of waiters above 0 (see the type).
  package func wakeAll() {
    _ = pthread_mutex_lock(mutex)
    _ = pthread_cond_broadcast(condition)
    _ = pthread_mutex_unlock(mutex)
  }

  /// Waits on the condition, the mutex held, for a wake-up or four milliseconds.
  private func waitAWhile() {
    var now = timespec()
    _ = clock_gettime(CLOCK_REALTIME, &now)
    var deadline = now
    deadline.tv_nsec += 4_000_000
    if deadline.tv_nsec >= 1_000_000_000 {
      deadline.tv_sec += 1
      deadline.tv_nsec -= 1_000_000_000
    }
    _ = pthread_cond_timedwait(condition, mutex, &deadline)
  }
}
