import Synchronization

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
/// lives at least as long as the owner; a reader trusts it only while the generation stored with
/// it equals the one the reader asks about, and writers store whole (target, generation) pairs
/// under the owner's lock (see `Scope.refreshSkip`).
@usableFromInline
package struct SkipLink: ~Copyable, Sendable {
  @usableFromInline let generation = Atomic<UInt>(UInt.max)
  @usableFromInline let target = Atomic<UInt>(0)

  init() {}

  /// The cached target if the link is of `generation`: `.some(nil)` means no scope has
  /// registrations; `nil` means the link is stale.
  @inlinable @inline(__always)
  func target(ifOf generation: UInt) -> ScopeRef?? {
    guard self.generation.load(ordering: .acquiring) == generation else { return nil }
    return .some(
      UnsafeRawPointer(bitPattern: target.load(ordering: .acquiring)).map {
        ScopeRef(unmanaged: .fromOpaque($0))
      })
  }

  /// Stores a whole pair (under the owner's lock, or before the owner is shared).
  func store(_ scope: ScopeRef?, generation: UInt) {
    target.store(scope.map { UInt(bitPattern: $0.address) } ?? 0, ordering: .releasing)
    self.generation.store(generation, ordering: .releasing)
  }
}
