import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The states of ``Scope/lifecycle``: open → closing → closed, never back.
///
/// | state | resolves | what a `close()` does |
/// |---|---|---|
/// | `open` | yes | moves it to `closing` and closes it |
/// | `closing` | no (`scopeClosed`) | waits until it is `closed` (unless it is the closer itself) |
/// | `closed` | no (`scopeClosed`) | returns |
@usableFromInline
enum ScopeLifecycle {
  @usableFromInline static var open: UInt8 { 0 }
  @usableFromInline static var closing: UInt8 { 1 }
  @usableFromInline static var closed: UInt8 { 2 }
}

/// The scopes whose asynchronous close is running in the current task, innermost first: a
/// disposer that closes one of them must not wait for the close that runs it.
final class ClosingChain: Sendable {
  let scope: ObjectIdentifier
  let next: ClosingChain?

  init(scope: Scope, next: ClosingChain?) {
    self.scope = ObjectIdentifier(scope)
    self.next = next
  }

  func contains(_ scope: Scope) -> Bool {
    var link: ClosingChain? = self
    while let current = link {
      if current.scope == ObjectIdentifier(scope) { return true }
      link = current.next
    }
    return false
  }
}

extension Scope {
  /// The scopes being closed asynchronously by the current task (see ``ClosingChain``).
  @TaskLocal static var closingChain: ClosingChain?

  /// Whether this scope's close has run to its end.
  var isFullyClosed: Bool { lifecycle.load(ordering: .acquiring) == ScopeLifecycle.closed }

  /// Whether the caller is the close of this scope itself (a disposer closing its own scope, or a
  /// child's disposer closing this parent while this close waits for the child): waiting would
  /// wait forever.
  private var isClosedByCaller: Bool {
    if Scope.closingChain?.contains(self) == true { return true }
    return withStateIfMade { $0?.synchronousCloser } == currentThreadID()
  }

  /// Blocks until another close of this scope has run to its end.
  func waitUntilClosed() {
    guard !isFullyClosed, !isClosedByCaller else { return }
    var pause: UInt32 = 20
    while !isFullyClosed {
      usleep(pause)
      pause = min(pause * 2, 1_000)
    }
  }

  /// Suspends until another close of this scope has run to its end. Cancellation does not end the
  /// wait early: the caller relies on everything being disposed. The wait never blocks a thread
  /// (the close it waits for may need one of the few the task pool has): a cancelled task, whose
  /// `Task.sleep` returns at once, yields instead.
  func waitUntilClosed() async {
    guard !isFullyClosed, !isClosedByCaller else { return }
    var pause = 20
    while !isFullyClosed {
      if Task.isCancelled {
        await Task.yield()
      } else {
        try? await Task.sleep(for: .microseconds(pause))
        pause = min(pause * 2, 1_000)
      }
    }
  }
}

extension Scope {
  /// Runs `read` (which takes a reference from this scope's cache) unless the scope is closing,
  /// announced in `cacheReaders` so that the close waits for it before releasing the cache.
  ///
  /// The root's cache is released only when the root is freed, so its readers skip the
  /// announcement: the container's singletons are read by every request of every thread.
  ///
  /// - Returns: What `read` returns; `nil` if this scope is closing.
  @inlinable @inline(__always)
  final func readingCache<Result>(_ read: () -> Result?) -> Result? {
    guard rootReference != nil else { return read() }
    cacheReaders.add(1, ordering: .sequentiallyConsistent)
    defer { cacheReaders.subtract(1, ordering: .releasing) }
    // Announced before this load, and the close sets `lifecycle` before it waits for readers:
    // one of the two sees the other.
    guard lifecycle.load(ordering: .sequentiallyConsistent) == ScopeLifecycle.open else { return nil }
    return read()
  }

  /// Releases what this scope caches (its inline scoped instances, its overflow slots, the
  /// singletons of its own registrations) once a close has disposed them, so that a closed scope
  /// someone still holds keeps nothing alive. Not for the root (see ``readingCache(_:)``).
  func releaseCachedInstances() {
    guard rootReference != nil else { return }
    if registry.load(ordering: .acquiring) != nil { releaseOwnSingletons() }
    while cacheReaders.load(ordering: .sequentiallyConsistent) != 0 { sched_yield() }
    for index in 0..<InlineSlots.count {
      let tag = inlineSlots.tag(index)
      if tag == 0 { return }  // slots are taken in order, overflow only past them
      guard tag & InlineSlot.stateMask == InlineSlot.ready else { continue }
      // Readers are out and see `closing`; only `deinit` reads a ready slot after this. No lock
      // is held, so the instance's `deinit` may run here.
      _ = inlineSlots.takeInstance(index)
    }
    var overflow: [ScopedSlot] = []
    withStateIfMade { state in if let state { swap(&overflow, &state.scoped) } }
    overflow.removeAll()
  }

  /// The singletons of this scope's own registrations, released by ``releaseCachedInstances()``.
  private func releaseOwnSingletons() {
    for registration in registry.load(ordering: .acquiring)?.takeUnretainedValue().registrations ?? [] {
      registration.releaseSharedInstance()
    }
  }
}
