import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A plain mutual-exclusion lock with explicit `lock()`/`unlock()`; a reference to one mutex (a
/// copy of a `Lock` is the same lock).
///
/// Strata guards state whose values are not `Sendable` (user services), which `Mutex.withLock`
/// cannot hand out; this lock leaves that reasoning to the owner, who documents it.
///
/// `@unchecked Sendable`: the only state is the `pthread_mutex_t` in ``MutexStorage``, which is
/// made to be shared between threads (see there).
struct Lock: @unchecked Sendable {
  private let storage = MutexStorage.make()

  init() {}

  func lock() { storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_lock($0) } }

  /// Takes the lock if nobody holds it; returns whether it did.
  func tryLock() -> Bool {
    storage.withUnsafeMutablePointerToElements { pthread_mutex_trylock($0) == 0 }
  }

  func unlock() { storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_unlock($0) } }

  func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}

/// The object a ``Lock`` refers to: the `pthread_mutex_t` lives in its tail storage, so a lock is
/// one allocation. Its address never changes; it is initialized in ``make()`` before anyone can
/// reach it, and destroyed only in `deinit`.
private final class MutexStorage: ManagedBuffer<Void, pthread_mutex_t> {
  static func make() -> MutexStorage {
    let buffer = MutexStorage.create(minimumCapacity: 1) { buffer in
      buffer.withUnsafeMutablePointerToElements { mutex in
        mutex.initialize(to: pthread_mutex_t())
        _ = pthread_mutex_init(mutex, nil)
      }
    }
    // `create` called on this subclass makes an instance of it.
    return unsafeDowncast(buffer, to: MutexStorage.self)
  }

  deinit {
    withUnsafeMutablePointerToElements { mutex in
      _ = pthread_mutex_destroy(mutex)
      _ = mutex.deinitialize(count: 1)
    }
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

/// A fixed table of atomic words that any thread reads and writes without a lock, indexed by a
/// hash of a one-word key: the storage of process-wide caches whose entries fit in one word (see
/// `DisposalKind`). Two keys may share a word; the caller stores enough of the key in the word to
/// tell.
///
/// `@unchecked Sendable`: the words are atomics, allocated and initialized in `init` before the
/// table can be shared, and freed only in `deinit`, when nobody holds the table any more.
final class AtomicWordTable: @unchecked Sendable {
  private let words: UnsafeMutablePointer<Atomic<UInt>>
  private let count: Int
  private let shift: UInt64

  /// A table of at least `minimumCount` words, all 0.
  init(minimumCount: Int) {
    var count = 2
    while count < minimumCount { count <<= 1 }
    self.count = count
    shift = UInt64(64 - count.trailingZeroBitCount)
    words = .allocate(capacity: count)
    for index in 0..<count { (words + index).initialize(to: Atomic(0)) }
  }

  deinit {
    words.deinitialize(count: count)
    words.deallocate()
  }

  /// The word for `key` (0 if none was stored there).
  func load(for key: UInt) -> UInt { words[index(of: key)].load(ordering: .relaxed) }

  /// Stores `value` in the word for `key`, replacing what was there.
  func store(_ value: UInt, for key: UInt) { words[index(of: key)].store(value, ordering: .relaxed) }

  /// Fibonacci hashing: keys such as metadata addresses of related types are regularly spaced,
  /// and the multiplication spreads them over the whole table.
  private func index(of key: UInt) -> Int {
    Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> shift)
  }
}
