import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A scope's life as a state machine: open → closing → closed, never back, with the one fact a
/// close needs about the scope's past: did it ever take something to dispose or ask to be linked
/// into its parent. Transitions are named and return what the caller must do; the storage (two
/// atomics) is kept apart from the domain code that acts on it.
///
/// | state | resolves | makes children, takes instances | a `close()` |
/// |---|---|---|---|
/// | `open` | yes | yes | ``beginClose()``: `closing`, then disposes (or finishes at once) |
/// | `closing` | no (`scopeClosed`) | no | waits until `closed` (unless it is the closer itself) |
/// | `closed` | no (`scopeClosed`) | no | returns |
///
/// **Who waits for whom.** The first `close()` (the closer) runs the disposers and then calls
/// ``finishClose()``. Every other close of the same scope (another thread, a parent closing its
/// children, an `await`) waits for `closed`, except a disposer of the closer itself, which
/// returns at once (`Scope.waitUntilClosed`). A resolve never waits: past `open` it throws.
///
/// **Ordering.** ``takeOwnership()`` and ``requestLink()`` record the fact before they read the
/// state, and ``beginClose()`` sets `closing` before it reads the facts, all sequentially
/// consistent: of a close and a scope taking something (or linking) at the same time, at least
/// one sees the other, so nothing is taken that no close will dispose.
@usableFromInline
package struct ScopeLifecycle: ~Copyable, Sendable {
  /// Where the scope is in its life.
  @usableFromInline
  package enum State: UInt8 {
    case open, closing, closed
  }

  /// What a close must do, as ``beginClose()`` decides.
  package enum CloseStart {
    /// Another close began first: wait for it (see the type's discussion).
    case anotherCloseRuns
    /// This close began, and the scope never took anything nor asked to be linked: only
    /// ``finishClose()`` is left.
    case nothingToDispose
    /// This close began: dispose what the scope owns, then ``finishClose()``.
    case dispose
  }

  @usableFromInline let word = Atomic<UInt8>(State.open.rawValue)
  /// Whether the scope ever took something to dispose or asked to be linked into its parent: one
  /// fact, not two, because a scope below the root that takes something asks to be linked first
  /// (and one that is linked takes what its children leave), so recording the second cost an
  /// atomic exchange on every request that owns a disposable and told a close nothing new.
  private let ownedOrLinked = Atomic<Bool>(false)

  package init() {}

  /// The current state.
  package var state: State { State(rawValue: word.load(ordering: .acquiring)) ?? .closed }

  /// Whether a close has begun (the scope is `closing` or `closed`): the read path's check.
  @inlinable @inline(__always)
  package var hasBegunClosing: Bool { word.load(ordering: .acquiring) != State.open.rawValue }

  /// Whether the close has run to its end.
  package var isFullyClosed: Bool { word.load(ordering: .acquiring) == State.closed.rawValue }

  /// Whether the scope is open, read in the total order of ``takeOwnership()``, ``requestLink()``
  /// and ``beginClose()``.
  @inlinable @inline(__always)
  package var isOpenInOrder: Bool { word.load(ordering: .sequentiallyConsistent) == State.open.rawValue }

  /// open → closing, for the first close only.
  package func beginClose() -> CloseStart {
    let began = word.compareExchange(
      expected: State.open.rawValue, desired: State.closing.rawValue, ordering: .sequentiallyConsistent
    ).exchanged
    guard began else { return .anotherCloseRuns }
    return everOwnedOrLinked ? .dispose : .nothingToDispose
  }

  /// closing → closed: everything the close depends on is disposed; waiting closes may return.
  package func finishClose() {
    word.store(State.closed.rawValue, ordering: .releasing)
  }

  /// Records that the scope is about to take something to dispose (an instance or a linked
  /// child), then says whether it may: only while open. Called under a lock that a close takes
  /// once it has set `closing`: the scope's state lock, or the lock of the shard of its children
  /// that the child links into (see ``ChildShards``).
  package func takeOwnership() -> Bool { recordOwnedOrLinked() }

  /// Records that the scope asks to be linked into its parent, then says whether it may: only
  /// while open.
  package func requestLink() -> Bool { recordOwnedOrLinked() }

  /// Records the fact, then reads the state.
  ///
  /// Once the fact is recorded, it is read instead of written again: the container takes
  /// ownership of a linked child on every request that owns a disposable, and rewriting its flag
  /// cost an atomic exchange on a line every thread shares. The read is sequentially consistent,
  /// so the order argument holds: the store that recorded the fact precedes it in the total
  /// order, and a close whose state write comes after this thread's state read sees the fact.
  private func recordOwnedOrLinked() -> Bool {
    if !ownedOrLinked.load(ordering: .sequentiallyConsistent) {
      ownedOrLinked.store(true, ordering: .sequentiallyConsistent)
    }
    return isOpenInOrder
  }

  /// Whether the scope ever took something to dispose (an instance or a linked child) or asked
  /// to be linked into its parent.
  package var everOwnedOrLinked: Bool { ownedOrLinked.load(ordering: .sequentiallyConsistent) }
}

/// The scopes whose asynchronous close is running in the current task, innermost first: a
/// disposer that closes one of them must not wait for the close that runs it.
///
/// A task that a disposer starts inherits the chain, and may outlive that close: a link counts
/// only until its close has ended (``end()``). Past that, a close in such a task is no disposer's:
/// it waits for another close of the same scope, as any other caller does.
final class ClosingChain: Sendable {
  let scope: Scope
  let next: ClosingChain?
  /// The ``LeftDisposal`` whose task this link stands for, if it does: the disposals a
  /// synchronous close of `scope` left behind.
  let leftDisposal: LeftDisposal.Identity?
  /// Raised once the close (or background task) this link stands for has ended.
  private let ended = Atomic<Bool>(false)

  init(scope: Scope, next: ClosingChain?, leftDisposal: LeftDisposal.Identity? = nil) {
    self.scope = scope
    self.next = next
    self.leftDisposal = leftDisposal
  }

  /// Marks the close this link stands for as ended: it runs no disposer any more.
  func end() { ended.store(true, ordering: .releasing) }

  /// Whether the close this link stands for still runs.
  private var isRunning: Bool { !ended.load(ordering: .acquiring) }

  /// Whether the current task runs the task of `left`, or of one `left` waits for.
  ///
  /// The walk ends at the first link that stands for a ``LeftDisposal``: the links past it belong
  /// to the task that started that background task (a disposer of another one that closed a scope
  /// synchronously), which does not wait for it. Counting them would let a parent's background
  /// task skip the child's task that its synchronous close was called from, and dispose alongside
  /// it instead of after it.
  func runs(_ left: LeftDisposal.Identity) -> Bool {
    var link: ClosingChain? = self
    while let current = link {
      if let running = current.leftDisposal { return current.isRunning && left.waits(for: running) }
      link = current.next
    }
    return false
  }

  /// Whether `scope`, or a scope below it, is being closed by the current task.
  ///
  /// A link that stands for a ``LeftDisposal`` counts for the scopes above its scope, not for its
  /// scope itself: what is left of that scope's close is the synchronous close that started the
  /// task, which never waits for it. A disposer in the task that closes an ancestor which is
  /// closing that scope as a child must wait for that close to end (and take what it left behind),
  /// not dispose the ancestor's instances while the task still runs.
  func containsScopeOrDescendant(of scope: Scope) -> Bool {
    var link: ClosingChain? = self
    while let current = link {
      if current.isRunning, current.leftDisposal == nil || current.scope !== scope,
        ScopeRef(current.scope).isSelfOrDescendant(of: scope)
      {
        return true
      }
      link = current.next
    }
    return false
  }
}

extension Scope {
  /// The scopes being closed asynchronously by the current task (see ``ClosingChain``).
  @TaskLocal static var closingChain: ClosingChain?

  /// Whether this scope's close has run to its end.
  var isFullyClosed: Bool { lifecycle.isFullyClosed }

  /// Whether the caller is the close of this scope itself or of a scope below it (a disposer
  /// closing its own scope, or a descendant's disposer closing this ancestor, whose close, here or
  /// on another thread, waits for that descendant): waiting would wait forever.
  private var isClosedByCaller: Bool {
    if Scope.closingChain?.containsScopeOrDescendant(of: self) == true { return true }
    // A `deinit` run by releasing this scope's cache, or a descendant's (whose close an ancestor's
    // close, here or on another thread, waits for), closing this scope.
    if let releasing = ScopeRef.releasingOnThisThread, releasing.isSelfOrDescendant(of: self) { return true }
    if let running = ScopeRef.closingOnThisThread, running.isSelfOrDescendant(of: self) { return true }
    return withStateIfMade { _ in synchronousCloser } == currentThreadID()
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
  /// (the close it waits for may need one of the few the task pool has), and never keeps one busy
  /// either, cancelled or not (see ``pause(microseconds:)``).
  func waitUntilClosed() async {
    guard !isFullyClosed, !isClosedByCaller else { return }
    var pause = 20
    while !isFullyClosed {
      await Scope.pause(microseconds: pause)
      pause = min(pause * 2, 1_000)
    }
  }

  /// Suspends for about `microseconds`, in a cancelled task too. A cancelled task's `Task.sleep`
  /// returns at once: looping on it (or on `Task.yield()`, as this wait did) kept a thread of the
  /// pool busy for as long as the other close ran, a server's shutdown cancelling its requests
  /// while the container closed them. So a cancelled task sleeps in a task of its own, which
  /// nobody cancels.
  private static func pause(microseconds: Int) async {
    if Task.isCancelled {
      await Task { try? await Task.sleep(for: .microseconds(microseconds)) }.value
    } else {
      try? await Task.sleep(for: .microseconds(microseconds))
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
    guard !links.isRoot else { return read() }
    // Wrapping: one locked increment and one locked decrement. The checked `add`/`subtract`
    // compiled to a load and a compare-and-exchange loop (to trap on overflow), which retried
    // while other threads read the same scope. The count cannot overflow: each reader adds one
    // and takes it back.
    cacheReaders.wrappingAdd(1, ordering: .sequentiallyConsistent)
    defer { cacheReaders.wrappingSubtract(1, ordering: .releasing) }
    // Announced before this load, and the close sets `lifecycle` before it waits for readers:
    // one of the two sees the other.
    guard lifecycle.isOpenInOrder else { return nil }
    return read()
  }

  /// The end of every close: lets go of the cache, then marks the scope closed, so that a close
  /// waiting for this one returns only once nothing is cached. Releasing runs the `deinit` of what
  /// the scope cached, which may close this scope again (a token that holds its scope): that close,
  /// on this thread, returns at once instead of waiting for the close that runs it (see
  /// `isClosedByCaller`).
  func releaseCachedInstancesThenFinish() {
    if !links.isRoot {
      let outer = ThreadContext.releasingScope
      ThreadContext.releasingScope = UInt(bitPattern: ObjectIdentifier(self))
      releaseCachedInstances()
      ThreadContext.releasingScope = outer
    }
    lifecycle.finishClose()
  }

  /// Releases what this scope caches (its inline scoped instances, its overflow slots, the
  /// singletons of its own registrations) once a close has disposed them, so that a closed scope
  /// someone still holds keeps nothing alive. Not for the root (see ``readingCache(_:)``).
  func releaseCachedInstances() {
    guard !links.isRoot else { return }
    // Readers first: one that announced itself before the close began may still be reading a
    // singleton's cell or a slot, and clearing either under it would free what it is retaining.
    // (Both sides' operations are sequentially consistent: the reader's announcement and its
    // load of `lifecycle`, and the close's change of `lifecycle` and this load.)
    while cacheReaders.load(ordering: .sequentiallyConsistent) != 0 { sched_yield() }
    if !registry.isEmpty {
      // Orders `closing` before the attempts at each creation lock: a creator that releases the
      // lock after them sees `closing` and releases what it made itself (`releaseIfClosing(_:)`),
      // each side's fence against the other's.
      atomicMemoryFence(ordering: .sequentiallyConsistent)
      releaseOwnSingletons()
    }
    // The slots need no fence (it cost an atomic operation per request): the close changed
    // `lifecycle` with a sequentially consistent exchange before it got here (in this thread, or
    // in the one that started the task finishing this close), and reads each tag sequentially
    // consistently; a creator publishes its tag, then fences, then loads `lifecycle`
    // (`releaseIfClosing(slot:)`). If this scan missed a tag, it precedes the creator's fence in
    // the total order, and so does the close's exchange before it, which the creator's load then
    // sees: whichever takes the instance first takes it alone (an exchange).
    for index in 0..<InlineSlots.count {
      let tag = inlineSlots.tagInOrder(index)
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

  /// Releases the singleton of `registration` (one of this scope's), made while this scope began
  /// closing: the close did not wait for its factory. As in ``releaseCachedInstances()``, readers
  /// go first; the root keeps its singletons until it is freed (its readers do not announce).
  func releaseLateSingleton(_ registration: AnyRegistration) {
    guard !links.isRoot else { return }
    while cacheReaders.load(ordering: .sequentiallyConsistent) != 0 { sched_yield() }
    registration.releaseSharedInstance()
  }

  /// The singletons of this scope's own registrations, released by ``releaseCachedInstances()``.
  private func releaseOwnSingletons() {
    for registration in registry.current?.registrations ?? [] {
      registration.releaseSharedInstance()
    }
  }
}
