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
package struct Lock: @unchecked Sendable {
  private let storage = MutexStorage.make()

  package init() {}

  package func lock() { storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_lock($0) } }

  /// Takes the lock if nobody holds it; returns whether it did.
  package func tryLock() -> Bool {
    storage.withUnsafeMutablePointerToElements { pthread_mutex_trylock($0) == 0 }
  }

  package func unlock() { storage.withUnsafeMutablePointerToElements { _ = pthread_mutex_unlock($0) } }

  package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
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
package func currentThreadID() -> UInt {
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

/// A table of atomic words that any thread reads and writes without a lock, indexed by a hash of
/// a one-word key: the storage of process-wide caches whose entries fit in one word (see
/// `TypeFacts`). Two keys may share a word; the caller stores enough of the key in the word to
/// tell.
///
/// The table grows: ``grow(toAtLeast:entries:)`` publishes a block twice as large or more, filled
/// with the entries the owner still knows. A block replaced is kept until `deinit`, because a
/// reader may still be reading it (the blocks replaced add up to fewer words than the newest).
///
/// `@unchecked Sendable`: the words are atomics. A block is initialized before the releasing store
/// that publishes it, and read only after an acquiring load found it; blocks are freed only in
/// `deinit`, when nobody holds the table any more. `blocks` and `count` are written only by
/// ``grow(toAtLeast:entries:)``, which the owner calls under its lock, and read only there.
final class AtomicWordTable: @unchecked Sendable {
  /// The address of the newest block. A block's word 0 holds its shift (64 minus the base-2
  /// logarithm of its entry count); its entries follow.
  private let newest = Atomic<UInt>(0)
  private var blocks: [UnsafeMutablePointer<Atomic<UInt>>] = []
  /// The entry count of the newest block.
  private(set) var count = 0

  /// A table of at least `minimumCount` words, all 0.
  init(minimumCount: Int) {
    grow(toAtLeast: minimumCount, entries: [])
  }

  deinit {
    for block in blocks {
      let count = 1 << (64 - Int(block[0].load(ordering: .relaxed)))
      block.deinitialize(count: count + 1)
      block.deallocate()
    }
  }

  /// The word for `key` (0 if none was stored there).
  func load(for key: UInt) -> UInt {
    guard let block = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: newest.load(ordering: .acquiring)) else {
      return 0
    }
    return block[Self.index(of: key, shift: block[0].load(ordering: .relaxed))].load(ordering: .relaxed)
  }

  /// Stores `value` in the word for `key`, replacing what was there. (A store that meets a
  /// growth may land in the block being replaced: the entry is then missing, as if evicted.)
  func store(_ value: UInt, for key: UInt) {
    guard let block = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: newest.load(ordering: .acquiring)) else {
      return
    }
    block[Self.index(of: key, shift: block[0].load(ordering: .relaxed))].store(value, ordering: .relaxed)
  }

  /// Replaces the table by one of at least `minimumCount` words holding `entries` (key and word),
  /// unless it has that many already. Only one thread at a time may call this (the owner's lock).
  func grow(toAtLeast minimumCount: Int, entries: some Sequence<(key: UInt, word: UInt)>) {
    guard count < minimumCount else { return }
    var count = 2
    while count < minimumCount { count <<= 1 }
    let shift = UInt(64 - count.trailingZeroBitCount)
    let block = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: count + 1)
    block.initialize(to: Atomic(shift))
    for index in 1...count { (block + index).initialize(to: Atomic(0)) }
    for (key, word) in entries {
      block[Self.index(of: key, shift: shift)].store(word, ordering: .relaxed)
    }
    blocks.append(block)
    self.count = count
    newest.store(UInt(bitPattern: block), ordering: .releasing)
  }

  /// Fibonacci hashing: keys such as metadata addresses of related types are regularly spaced,
  /// and the multiplication spreads them over the whole table. Entry positions start at 1.
  private static func index(of key: UInt, shift: UInt) -> Int {
    1 + Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
  }
}

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
