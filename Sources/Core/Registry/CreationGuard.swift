import Synchronization

/// The once-guard of one shared entry (a singleton, a weak instance, a `Lazy`): the only lock
/// Strata holds while user code runs.
///
/// A thread that asks for an entry it is itself creating gets a cycle error instead of deadlocking
/// on its own lock, and a thread about to wait for an entry first records the wait in
/// ``WaitGraph``, which reports a cycle if the wait would close one.
///
/// `@unchecked Sendable`: `owner` is atomic; everything else is the lock itself.
@usableFromInline
final class CreationGuard: WaitTarget, @unchecked Sendable {
  private let lock = Lock()
  /// The thread creating the entry while the lock is held; 0 otherwise. Set after the lock is
  /// taken and before the creation runs; cleared before the lock is released.
  private let owner = Atomic<UInt>(0)

  /// Whether the calling thread is the one creating the entry (so it must not wait for it).
  @usableFromInline
  var isHeldByCurrentThread: Bool { owner.load(ordering: .acquiring) == currentThreadID() }

  var currentHolder: UInt { owner.load(ordering: .acquiring) }

  /// Runs `body` while holding the guard.
  ///
  /// - Throws: A `.cycle` error naming `key` if the calling thread already holds the guard, or if
  ///   waiting would close a cycle of threads waiting for each other; otherwise what `body` throws.
  @usableFromInline
  func withCreationLock<Result>(for key: ServiceKey, _ body: () throws -> Result) throws -> Result {
    let me = currentThreadID()
    if owner.load(ordering: .acquiring) == me { throw ResolutionError.cycle(at: key) }
    if !lock.tryLock() {
      try WaitGraph.shared.beginWaiting(me, for: self, key: key)
      lock.lock()
      // The wait ends before this thread names itself the owner, so that nobody can see it both
      // waiting for this guard and holding it.
      WaitGraph.shared.endWaiting(me)
    }
    owner.store(me, ordering: .releasing)
    defer {
      owner.store(0, ordering: .releasing)
      lock.unlock()
    }
    return try body()
  }
}

extension CreationGuard {
  /// Runs `body` under the lock if no thread holds it (this one included); `nil` otherwise,
  /// without waiting: for a close, which must not wait for a factory (the factory may be waiting
  /// for the closer, through a lock or a queue Strata cannot see).
  func withCreationLockIfFree<Result>(_ body: () -> Result) -> Result? {
    guard lock.tryLock() else { return nil }
    owner.store(currentThreadID(), ordering: .releasing)
    defer {
      owner.store(0, ordering: .releasing)
      lock.unlock()
    }
    return body()
  }
}

/// Something a thread can wait for: a creation guard, or a scoped instance being created.
protocol WaitTarget: AnyObject, Sendable {
  /// The thread creating the entry now, read afresh; 0 if nobody is (or the creator has not
  /// named itself yet, which it does before running any code that could wait).
  var currentHolder: UInt { get }
}

/// Which thread waits for what, across all containers, so that threads each creating an entry
/// another one needs get a cycle error instead of a deadlock.
///
/// Edges go from a waiting thread to the entry it waits for, never to the thread that held that
/// entry when the wait began: the holder is read afresh on every check. So a wait that outlived its
/// reason (the entry changed hands, or was finished) never makes a cycle appear, and of the
/// threads closing a real cycle, the last to start waiting always sees all of it: every thread
/// names itself an entry's holder before running code that could wait, and records its own wait
/// under the graph's lock before it waits.
///
/// `@unchecked Sendable`: `edges` is read and written only under `lock`.
final class WaitGraph: @unchecked Sendable {
  static let shared = WaitGraph()

  private let lock = Lock()
  /// Guarded by `lock`. (A pthread lock, not `Mutex`: ThreadSanitizer sees it.)
  private var edges: [UInt: any WaitTarget] = [:]

  /// Records that `waiter` is about to wait for `target`.
  ///
  /// - Throws: A `.cycle` error naming `key` if `target`'s holder waits, directly or through
  ///   others, for something `waiter` holds. Nothing is recorded then.
  func beginWaiting(_ waiter: UInt, for target: any WaitTarget, key: ServiceKey) throws {
    try lock.withLock {
      var next: (any WaitTarget)? = target
      // Each thread waits for at most one entry, so a walk longer than the graph is a loop
      // among other threads, which their own checks report.
      var steps = 0
      while let entry = next, steps <= edges.count {
        let holder = entry.currentHolder
        if holder == waiter { throw ResolutionError.cycle(at: key, acrossThreads: true) }
        guard holder != 0 else { break }
        next = edges[holder]
        steps += 1
      }
      edges[waiter] = target
    }
  }

  func endWaiting(_ waiter: UInt) {
    _ = lock.withLock { edges.removeValue(forKey: waiter) }
  }
}
