import Synchronization

/// The once-guard of one shared entry (a singleton, a weak instance, a scoped instance): the only
/// lock Strata holds while user code runs.
///
/// A thread that asks for an entry it is itself creating gets a cycle error instead of deadlocking
/// on its own lock, and a thread about to wait for an entry checks, through ``WaitGraph``, that the
/// thread creating it is not (transitively) waiting for this one.
///
/// `@unchecked Sendable`: `owner` is atomic; everything else is the lock itself.
final class CreationGuard: @unchecked Sendable {
  private let lock = Lock()
  /// The thread creating the entry while the lock is held; 0 otherwise.
  private let owner = Atomic<UInt>(0)

  /// Whether the calling thread is the one creating the entry (so it must not wait for it).
  var isHeldByCurrentThread: Bool { owner.load(ordering: .acquiring) == currentThreadID() }

  /// Runs `body` while holding the guard.
  ///
  /// - Throws: A `.cycle` error naming `key` if the calling thread already holds the guard, or if
  ///   waiting would close a cycle of threads waiting for each other; otherwise what `body` throws.
  func withCreationLock<Result>(for key: ServiceKey, _ body: () throws -> Result) throws -> Result {
    let me = currentThreadID()
    if owner.load(ordering: .acquiring) == me { throw ResolutionError.cycle(at: key) }
    while !lock.tryLock() {
      let holder = owner.load(ordering: .acquiring)
      if holder == 0 { continue }  // the holder is between taking the lock and naming itself
      try WaitGraph.shared.beginWaiting(me, for: holder, key: key)
      lock.lock()
      WaitGraph.shared.endWaiting(me)
      break
    }
    owner.store(me, ordering: .releasing)
    defer {
      owner.store(0, ordering: .releasing)
      lock.unlock()
    }
    return try body()
  }
}

/// Which thread waits for which, across all containers, so that two threads each creating a
/// singleton the other needs get a cycle error instead of a deadlock.
///
/// `@unchecked Sendable`: `edges` is read and written only under `lock`.
final class WaitGraph: @unchecked Sendable {
  static let shared = WaitGraph()

  private let lock = Lock()
  /// Guarded by `lock`. (A pthread lock, not `Mutex`: ThreadSanitizer sees it.)
  private var edges: [UInt: UInt] = [:]

  /// Records that `waiter` is about to wait for `holder`.
  ///
  /// - Throws: A `.cycle` error naming `key` if `holder` waits, directly or through others, for
  ///   `waiter`.
  func beginWaiting(_ waiter: UInt, for holder: UInt, key: ServiceKey) throws {
    try lock.withLock {
      var current: UInt? = holder
      while let thread = current {
        if thread == waiter { throw ResolutionError.cycle(at: key, acrossThreads: true) }
        current = edges[thread]
      }
      edges[waiter] = holder
    }
  }

  func endWaiting(_ waiter: UInt) {
    _ = lock.withLock { edges.removeValue(forKey: waiter) }
  }
}
