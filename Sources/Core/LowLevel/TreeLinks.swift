import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A scope's links up the tree: to its parent, holding one retain of it, and to the root.
///
/// **Invariant.** The parent link holds exactly one retain, taken by whoever made the scope (see
/// ``init(retainedParent:)``) and given back once, by ``releaseParent()`` in the scope's `deinit`.
/// So a scope keeps its whole chain of ancestors alive, and the root link needs no retain of its
/// own. (Not a strong stored property: freeing one of those costs the compiler's generic teardown
/// three reference-count operations instead of one.)
@usableFromInline @frozen
package struct TreeLinks {
  @usableFromInline let parentLink: Unmanaged<Scope>?
  @usableFromInline let rootLink: Unmanaged<Scope>?

  /// The links of a scope whose parent is `parent`, retained once for it by the caller
  /// (``retain(_:)``); `nil` for a root.
  init(retainedParent parent: Unmanaged<Scope>?) {
    parentLink = parent
    rootLink = parent.map { parent in parent._withUnsafeGuaranteedRef { $0.links.rootLink } ?? parent }
  }

  /// Takes the retain a child's parent link holds.
  static func retain(_ parent: Scope) -> Unmanaged<Scope> { Unmanaged.passRetained(parent) }

  /// The parent, without a retain.
  @inlinable @inline(__always)
  var parent: ScopeRef? { parentLink.map(ScopeRef.init(unmanaged:)) }

  /// The root; `nil` for the root itself.
  @inlinable @inline(__always)
  var root: ScopeRef? { rootLink.map(ScopeRef.init(unmanaged:)) }

  /// Whether these are the links of the root.
  @inlinable @inline(__always)
  var isRoot: Bool { rootLink == nil }

  /// Gives the parent link's retain back: the owning scope's `deinit` only.
  func releaseParent() { parentLink?.release() }
}

/// A scope's published registry snapshot, loaded with one acquire and no reference count.
///
/// **Invariant.** The cell never owns what it points to: every snapshot stored here is also kept
/// in the scope's list of published snapshots (`ScopeState.snapshots`) until the scope is freed,
/// so a snapshot loaded from a scope that is held stays valid for as long as that scope is.
@usableFromInline
package struct SnapshotCell: ~Copyable, Sendable {
  @usableFromInline let word = Atomic<Unmanaged<Registry>?>(nil)

  init() {}

  /// Whether a snapshot was ever published.
  @inlinable @inline(__always)
  var isEmpty: Bool { word.load(ordering: .acquiring) == nil }

  /// Runs `body` on the current snapshot, without a retain; `nil` if there is none.
  @inlinable @inline(__always)
  func withCurrent<Result>(_ body: (Registry) throws -> Result) rethrows -> Result? {
    guard let current = word.load(ordering: .acquiring) else { return nil }
    return try current._withUnsafeGuaranteedRef(body)
  }

  /// The current snapshot, retained: for slow paths.
  var current: Registry? { word.load(ordering: .acquiring)?.takeUnretainedValue() }

  /// Publishes `snapshot`, which the caller keeps alive as the invariant says.
  func publish(_ snapshot: Registry) {
    word.store(Unmanaged.passUnretained(snapshot), ordering: .releasing)
  }
}

/// A scope's cached answer to "which scope at or above me has registrations?", valid for one
/// registry generation of the tree.
///
/// **Invariant.** A target is a scope at or above the one that owns the link (or none), so it
/// lives at least as long as the owner. Writers store whole (target, generation) pairs under the
/// owner's lock (see `Scope.refreshSkip`), as a sequence lock: the generation is first set to
/// ``SkipLink/writing``, then the target, then the new generation. A reader trusts a target only
/// if the generation it asks about was there both before and after it loaded the target, so it
/// never pairs one generation with another's target.
@usableFromInline
package struct SkipLink: ~Copyable, Sendable {
  @usableFromInline let generation = Atomic<UInt>(SkipLink.writing)
  @usableFromInline let target = Atomic<UInt>(0)

  /// The generation of a link being written (and of one never written): no generation a reader
  /// asks about.
  @usableFromInline package static var writing: UInt { UInt.max }

  init() {}

  /// The cached target if the link is of `generation`: `.some(nil)` means no scope has
  /// registrations; `nil` means the link is stale (or being written).
  @inlinable @inline(__always)
  func target(ifOf generation: UInt) -> ScopeRef?? {
    guard self.generation.load(ordering: .acquiring) == generation else { return nil }
    let bits = target.load(ordering: .acquiring)
    // The acquiring load of the target orders this one after it: a writer that changed the
    // target had set `writing` first, and this load sees that or a later generation.
    guard self.generation.load(ordering: .acquiring) == generation else { return nil }
    return .some(UnsafeRawPointer(bitPattern: bits).map { ScopeRef(unmanaged: .fromOpaque($0)) })
  }

  /// Stores a whole pair (under the owner's lock, or before the owner is shared).
  func store(_ scope: ScopeRef?, generation: UInt) {
    self.generation.store(SkipLink.writing, ordering: .releasing)
    target.store(scope.map { UInt(bitPattern: $0.address) } ?? 0, ordering: .releasing)
    self.generation.store(generation, ordering: .releasing)
  }
}

/// A scope's place among its parent's linked children: the sibling links of an intrusive,
/// doubly linked list (see ``ChildList``).
///
/// Guarded by the parent's state lock, like the list itself.
struct SiblingLinks {
  var next: Unmanaged<Scope>?
  var previous: Unmanaged<Scope>?
  /// Whether the scope is in its parent's list.
  var isLinked = false
}

/// The children a scope must close before itself: an intrusive list through the children's
/// ``SiblingLinks``, newest first. A scope joins its parent's list only once it owns something to
/// dispose, so a plain request scope costs its parent no lock and is freed as soon as nobody holds
/// it.
///
/// **Invariant.** The list holds exactly one retain of each linked child: taken by ``link(_:)``,
/// and either given back by ``giveBack(_:)`` after ``unlink(_:)`` said the child was linked, or
/// moved into the array ``takeAll()`` returns. Every operation runs under the parent's state lock,
/// the only place the children's sibling links are touched. So an unlinked scope has no links to
/// release when it is freed, and a linked one cannot be freed.
struct ChildList {
  private var first: Unmanaged<Scope>?

  /// Whether no child is linked.
  var isEmpty: Bool { first == nil }

  /// Links `child` (not linked yet) at the front, taking the list's retain of it.
  mutating func link(_ child: Scope) {
    let linked = Unmanaged.passRetained(child)
    if let first {
      first._withUnsafeGuaranteedRef { $0.siblings.previous = linked }
      child.siblings.next = first
    }
    first = linked
    child.siblings.isLinked = true
  }

  /// Unlinks `child` if it is linked; then the caller gives the list's retain back with
  /// ``giveBack(_:)`` once outside the lock (the release may free the child).
  ///
  /// - Returns: Whether `child` was linked.
  mutating func unlink(_ child: Scope) -> Bool {
    guard child.siblings.isLinked else { return false }
    let next = child.siblings.next
    let previous = child.siblings.previous
    if let previous {
      previous._withUnsafeGuaranteedRef { $0.siblings.next = next }
    } else {
      first = next
    }
    next?._withUnsafeGuaranteedRef { $0.siblings.previous = previous }
    child.siblings = SiblingLinks()
    return true
  }

  /// Gives back the retain the list held of a child that ``unlink(_:)`` removed.
  static func giveBack(_ child: Scope) {
    Unmanaged.passUnretained(child).release()
  }

  /// Takes every child out, newest first; the list's retains move into the returned array.
  mutating func takeAll() -> [Scope] {
    var children: [Scope] = []
    var current = first
    first = nil
    while let child = current {
      current = child._withUnsafeGuaranteedRef { child in
        let next = child.siblings.next
        child.siblings = SiblingLinks()
        return next
      }
      children.append(child.takeRetainedValue())
    }
    return children
  }
}

/// A scope's linked children (the scopes it must close before itself), split into shards, each
/// with its own lock, list and hand-overs, so that threads linking children into the same parent
/// at once do not queue on one lock nor write the same cache lines.
///
/// Every request scope that takes a disposable instance links into its parent's list, and
/// unlinks when it closes: with one list per parent, requests running on different cores took the
/// container's lock twice each and wrote the list head and their neighbours' links, so that two
/// cores served requests hardly faster than one (`strata-bench`'s `concurrent-server-request`). A child uses the shard of the thread that
/// made it (``ThreadContext/childShard``): requests made on different threads of a server meet only
/// when two threads share a shard, or when one closes what another made.
///
/// The root gets about two shards per processor; any other scope gets one, since its children
/// rarely link at once and sessions are many.
///
/// **Invariant.** A child's sibling links and whether it is linked are read and written only
/// under the lock of one shard: the one its ``Scope/childShard`` picks, which never changes. A
/// close takes each shard under its lock once `closing` is set; a link checks that the parent is
/// open under the same lock, so every child a close does not take sees the parent closing (see
/// ``ScopeLifecycle``).
final class ChildShards: ChildShard, @unchecked Sendable {
  /// The shards past the first, which is this object itself; each retained once, released in
  /// `deinit` (reached without reference counting: a retain and release of a shard per link and
  /// unlink wrote its object's header from every thread that used it).
  private let others: [Unmanaged<ChildShard>]
  /// The number of shards minus 1; the count is a power of two.
  private let mask: Int

  /// The shards of the children of a root (`isRoot`) or of any other scope.
  init(isRoot: Bool) {
    let count = isRoot ? ChildShards.rootCount : 1
    others = (1..<count).map { _ in Unmanaged.passRetained(ChildShard()) }
    mask = count - 1
  }

  deinit {
    for shard in others { shard.release() }
  }

  /// About two shards per processor, a power of two from 2 to 32.
  private static let rootCount: Int = {
    let processors = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    var count = 2
    while count < min(2 * processors, 32) { count *= 2 }
    return count
  }()

  /// Runs `body` under the lock of `child`'s shard.
  ///
  /// `body` must not run user code, nor free anything whose `deinit` might.
  func withShard<Result>(of child: Scope, _ body: (ChildShard) -> Result) -> Result {
    let index = Int(child.childShard) & mask
    let shard: Unmanaged<ChildShard> = index == 0 ? .passUnretained(self) : others[index - 1]
    return shard._withUnsafeGuaranteedRef { shard in
      shard.lock.lock()
      defer { shard.lock.unlock() }
      return body(shard)
    }
  }

  /// Takes every linked child and every hand-over out of every shard (each under its lock).
  /// Called by a close once it has set `closing`, so nothing is linked or handed over afterwards.
  ///
  /// - Returns: The children, each shard's newest first, and the hand-overs, each shard's oldest
  ///   first. The list's retain of each child moves into the array.
  func takeAll() -> (children: [Scope], leftBehind: [LeftDisposal]) {
    var children: [Scope] = []
    var leftBehind: [LeftDisposal] = []
    for shard in [Unmanaged<ChildShard>.passUnretained(self)] + others {
      shard._withUnsafeGuaranteedRef { shard in
        shard.lock.lock()
        if !shard.children.isEmpty { children += shard.children.takeAll() }
        leftBehind += shard.leftBehind.takeAll()
        shard.lock.unlock()
      }
    }
    return (children, leftBehind)
  }
}

/// One shard of ``ChildShards``: a lock, the children linked through it, and what those children,
/// closed on their own, handed over. Padded (112 bytes in all), so that the lock and lists of one
/// shard are at least 80 bytes from those of the next and never share a cache line with them.
///
/// Not `Sendable`: reached through ``ChildShards``, and its lists only under `lock`, which makes
/// every access exclusive (so the properties skip the run-time exclusivity check).
class ChildShard {
  let lock = SpinLock()
  /// The linked children of this shard, newest first (see ``ChildList``).
  @exclusivity(unchecked) var children = ChildList()
  /// What children of this shard, closed on their own, left to background tasks, still running
  /// when they were handed over: the parent's close waits for them before its own disposals.
  @exclusivity(unchecked) var leftBehind = LeftBehindList()
  private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (
    0, 0, 0, 0, 0, 0, 0, 0
  )
}
