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
