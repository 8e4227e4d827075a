import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A plain mutual-exclusion lock with explicit `lock()`/`unlock()`.
///
/// Strata guards state whose values are not `Sendable` (user services), which `Mutex.withLock`
/// cannot hand out; this lock leaves that reasoning to the owner, who documents it.
///
/// `@unchecked Sendable`: the only state is the heap-allocated `pthread_mutex_t`, which is made to be
/// shared between threads; its address never changes and it is destroyed only in `deinit`.
final class Lock: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  func lock() { pthread_mutex_lock(mutex) }

  /// Takes the lock if nobody holds it; returns whether it did.
  func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }

  func unlock() { pthread_mutex_unlock(mutex) }

  func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}

/// An identifier of the calling thread, never 0.
@usableFromInline
func currentThreadID() -> UInt {
  #if canImport(Darwin)
    return UInt(bitPattern: pthread_self())
  #else
    return UInt(pthread_self())
  #endif
}

/// A lock for short critical sections that never run user code, built on one atomic word.
///
/// Strata uses it instead of `Synchronization.Mutex`, whose Linux implementation synchronizes in
/// code ThreadSanitizer does not instrument, so that every access it guards would be reported as a
/// race. The atomic operations here are compiled into Strata and seen by the sanitizer. It takes
/// no allocation, so a scope can hold one inline.
struct SpinLock: ~Copyable, @unchecked Sendable {
  private let word = Atomic<UInt32>(0)

  init() {}

  func lock() {
    if word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
    var spins = 0
    while true {
      if word.load(ordering: .relaxed) == 0
        && word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
      {
        return
      }
      spins += 1
      if spins > 64 { sched_yield() }
    }
  }

  func unlock() { word.store(0, ordering: .releasing) }
}
