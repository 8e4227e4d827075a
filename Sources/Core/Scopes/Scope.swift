import Synchronization

/// A node of the scope tree: the ``Container`` at the root, and request, session or custom scopes
/// below it.
///
/// A scope resolves services by looking for the nearest registration, from itself up to the root.
/// It owns the instances its registrations' lifetimes give it, and disposes them when it closes.
///
/// ```swift
/// let request = try container.makeScope(.request)
/// let handler = try request.resolve(RequestHandler.self)
/// try handler.handle()
/// try request.close()   // disposes the request's scoped instances
/// ```
///
/// Scopes are safe to use from any number of threads and tasks at once.
///
/// `@unchecked Sendable`: immutable `let`s, atomics, state reached only through `withState` (under
/// its lock), and the sibling links, which are read and written only under the parent's lock. The class is not
/// `open`; ``Container`` is its only subclass.
public class Scope: @unchecked Sendable, CustomStringConvertible {
  // Stored properties in this order on purpose: those set from the arguments first, then 152
  // bytes that start zeroed, 16-byte aligned, so that making a scope clears them with aligned
  // stores (with the flags between the atomic words, it took split stores that crossed cache lines);
  // the disposal stack and the closer thread come last.

  /// What kind of scope this is: `.root` for a ``Container``, `.request`, `.session`, or custom.
  public let tag: ScopeTag
  /// An optional label for messages, such as a session or request id.
  public let name: String?
  /// The enclosing scope; `nil` for the ``Container``.
  public final var parent: Scope? { links.parent?.scope }
  /// The links to the parent (retained) and to the root (see ``TreeLinks``).
  @usableFromInline let links: TreeLinks
  /// The nearest scope at or above this one that has registrations, cached for one registry
  /// generation of the tree (see ``SkipLink``). Lets a lookup pass over scopes without
  /// registrations in O(1).
  @usableFromInline let skip = SkipLink()
  /// Used on the root only: the tree's registry version, bumped by every publish in any scope of
  /// the tree (under `Scope.publishLock`). It stamps each new snapshot, so that one resolve reads
  /// one version throughout, and it invalidates every scope's cached `skipTarget`.
  @usableFromInline let registryGeneration = Atomic<UInt>(0)
  /// This scope's current registry snapshot; empty while it has no registrations of its own.
  @usableFromInline let registry = SnapshotCell()
  private let stateLock = SpinLock()
  /// Where the scope is in its life (see ``ScopeLifecycle``). A scope is closed (resolves
  /// nothing) when it or any ancestor has begun closing.
  @usableFromInline let lifecycle = ScopeLifecycle()
  /// Guarded by `stateLock`; reached through `withState`, which makes it on first use. Most
  /// request scopes never need it, and then making and freeing them touches no part of it.
  @exclusivity(unchecked) private var guardedState = LazyObject<ScopeState>()
  /// This scope's place in its parent's list of children to close (see ``ChildList``), guarded
  /// by the lock of its shard of that list (see ``ChildShards``).
  var siblings = SiblingLinks()
  /// This scope's children to close, made when the first links (see ``ChildShards``).
  let childShards = PublishedObject<ChildShards>()
  /// The first scoped instances of this scope, reached without a lock (see ``InlineSlots``).
  @usableFromInline let inlineSlots = InlineSlots()
  /// How many threads are reading this scope's cached instances right now (see `readingCache`):
  /// a close waits for them to finish before it releases what the cache holds.
  @usableFromInline let cacheReaders = Atomic<UInt>(0)
  /// What to dispose on close, in creation order. Guarded by `stateLock`; kept here rather than in
  /// ``ScopeState`` so that a request scope owning a disposable service makes no state object,
  /// and, with its first disposal inline, allocates nothing to file it.
  @exclusivity(unchecked) var guardedDisposals = DisposalStack()
  /// The thread running a synchronous close of this scope, once it disposes anything: a second
  /// close on the same thread comes from one of its disposers and must not wait for it. Guarded
  /// by `stateLock`.
  @exclusivity(unchecked) var synchronousCloser: UInt = 0
  /// Which shard of its parent's list of children this scope links into: that of the thread that
  /// made it (see ``ChildShards``).
  let childShard: UInt8

  /// - Parameter links: The links to the parent (retained once for this scope, see
  ///   ``TreeLinks``) and the root.
  init(tag: ScopeTag, name: String?, links: TreeLinks) {
    self.tag = tag
    self.name = name
    self.links = links
    childShard = links.isRoot ? 0 : UInt8(truncatingIfNeeded: ThreadContext.childShard)
    guard let parent = links.parent else { return }
    parent.with { parent in
      // A new scope has no registrations: its nearest scope with some is the parent, if the
      // parent has any, or else the parent's cached answer, if that is current.
      let generation = Scope.currentGeneration(of: ScopeRef(parent))
      if !parent.registry.isEmpty {
        skip.store(ScopeRef(parent), generation: generation)
      } else if let target = parent.skip.target(ifOf: generation) {
        skip.store(target, generation: generation)
      }
    }
  }

  deinit {
    defer { links.releaseParent() }
    inlineSlots.releaseAll()
  }

  /// Whether this scope itself has begun closing (its ancestors are not consulted).
  @inlinable @inline(__always)
  final var isClosing: Bool { lifecycle.hasBegunClosing }

  /// Whether this scope, or any scope above it, has started closing: a closed scope resolves
  /// nothing and makes no children.
  public final var isClosed: Bool { Scope.isClosed(ScopeRef(self)) }

  /// Whether `scope` or an ancestor has started closing: plain loads up the chain, no lock.
  @inlinable @inline(__always)
  static func isClosed(_ scope: ScopeRef) -> Bool {
    var current = scope
    while true {
      if current.with({ $0.isClosing }) { return true }
      guard let parent = current.parent else { return false }
      current = parent
    }
  }

  /// This scope's registry snapshot as a resolve that began at registry `version` sees it: the
  /// newest one published at or before `version`; `nil` if there was none yet. One load and a
  /// compare, unless a batch was published since the resolve began.
  @inlinable @inline(__always)
  final func registry(asOf version: UInt) -> RegistryRef? {
    let current = registry.withCurrent { current in (RegistryRef(current), current.version <= version) }
    guard let current else { return nil }
    if _fastPath(current.1) { return current.0 }
    return publishedRegistry(asOf: version)
  }

  /// ``registry(asOf:)`` when the current snapshot is newer than `version`: an older snapshot
  /// from the list that keeps every published snapshot alive as long as this scope lives.
  ///
  /// A factory that registered something itself sees it: when this thread published a snapshot
  /// of this scope after the resolve began, the resolve reads this scope from the newest such
  /// snapshot. Other scopes it reads as of the resolve's own version, so that a factory that
  /// registers in one scope does not see, half, a batch another thread published in another scope
  /// meanwhile. (Within this scope, the snapshot includes what was published here before it.)
  ///
  /// A thread's identifier is reused only after that thread ended, and so after anything it
  /// published: a snapshot newer than a resolve that this thread is running was published by this
  /// thread if its publisher reads as this thread.
  @usableFromInline
  final func publishedRegistry(asOf version: UInt) -> RegistryRef? {
    let thread = currentThreadID()
    return withStateIfMade { state in
      guard let snapshots = state?.snapshots else { return nil }
      if let own = snapshots.last(where: { $0.version > version && $0.publisher == thread }) {
        return RegistryRef(own)
      }
      guard let index = snapshots.lastIndex(where: { $0.version <= version }) else { return nil }
      return RegistryRef(snapshots[index])
    }
  }

  /// The registry version a top-level resolve starting in `scope` reads at: the tree's newest.
  @inlinable @inline(__always)
  static func currentVersion(of scope: ScopeRef) -> UInt { currentGeneration(of: scope) }

  /// The root's registry generation.
  @inlinable @inline(__always)
  static func currentGeneration(of scope: ScopeRef) -> UInt {
    let root = scope.with { $0.links.root } ?? scope
    return root.with { $0.registryGeneration.load(ordering: .acquiring) }
  }

  /// The nearest scope at or above `scope` with registrations, from its cache when the cache is
  /// of `generation`.
  @inlinable @inline(__always)
  static func withRegistry(from scope: ScopeRef, generation: UInt) -> ScopeRef? {
    scope.with { scope in
      guard let target = scope.skip.target(ifOf: generation) else {
        return scope.refreshSkip(generation: generation)
      }
      return target
    }
  }

  /// Walks up to the nearest scope with registrations and caches it.
  ///
  /// Under the state lock, with the generation read afresh, so that concurrent refreshes store
  /// whole (target, generation) pairs and the last pair is never older than the generation it
  /// names. A reader that sees a generation then sees that pair's target or a newer one.
  @usableFromInline
  final func refreshSkip(generation _: UInt) -> ScopeRef? {
    withStateIfMade { _ in
      let generation = Scope.currentGeneration(of: ScopeRef(self))
      var current: ScopeRef? = ScopeRef(self)
      while let scope = current {
        if scope.with({ !$0.registry.isEmpty }) { break }
        current = scope.parent
      }
      skip.store(current, generation: generation)
      return current
    }
  }

  /// Runs `body` with exclusive access to the scope's guarded state, made on first use. `body` must
  /// not run user code, nor free anything whose `deinit` might.
  func withState<Result>(_ body: (ScopeState) throws -> Result) rethrows -> Result {
    stateLock.lock()
    defer { stateLock.unlock() }
    return try guardedState.withObject(making: ScopeState.init, body)
  }

  /// Runs `body` under the state lock, with the guarded state if it was ever made.
  func withStateIfMade<Result>(_ body: (ScopeState?) throws -> Result) rethrows -> Result {
    stateLock.lock()
    defer { stateLock.unlock() }
    return try guardedState.withObjectIfMade(body)
  }

  /// The current snapshots from this scope up to the root, nearest first.
  func registryChain() -> [Registry] {
    registryChainWithOwners().map(\.1)
  }

  /// The snapshots with the scope holding each, nearest first: the current ones, or, for a
  /// resolve that began at registry `version`, the ones it reads (see ``registry(asOf:)``).
  func registryChainWithOwners(asOf version: UInt? = nil) -> [(Scope, Registry)] {
    var result: [(Scope, Registry)] = []
    var current: Scope? = self
    while let scope = current {
      let registry =
        version.map { version in scope.registry(asOf: version)?.with { $0 } } ?? scope.registry.current
      if let registry { result.append((scope, registry)) }
      current = scope.parent
    }
    return result
  }

  /// Publishes a snapshot with `additions` appended, stamped with the tree's next registry
  /// version. Only the snapshot build runs under the locks; no user code does.
  ///
  /// Versions are handed out under one process-wide lock, held only to stamp and store (the
  /// snapshot is built before, under this scope's lock), so that the snapshots of every scope of
  /// a tree are stamped in the order they become visible: the snapshot is stored before the
  /// root's version moves on, and a resolve that loaded version `v` then finds every snapshot of
  /// version `v` or older (and skips newer ones, see ``registry(asOf:)``). Lock order: a scope's
  /// state lock, then the publish lock; nothing takes them the other way round.
  func publish(_ additions: [AnyRegistration]) throws {
    try publish(RegistrationRun(additions))
  }

  /// ``publish(_:)-([AnyRegistration])`` of a run whose keys are known already.
  func publish(_ additions: RegistrationRun) throws {
    guard let first = additions.keys.first else { return }
    try withState { state in
      guard !isClosed else {
        throw ResolutionError(.registeredInClosedScope(first, scope: chainDescription))
      }
      // The build, proportional to the registrations, runs under this scope's lock only.
      let snapshot = Registry(previous: registry.current, adding: additions)
      return Scope.publishLock.withLock {
        let root = links.root?.scope ?? self
        let version = root.registryGeneration.load(ordering: .relaxed) &+ 1
        snapshot.version = version
        snapshot.publisher = currentThreadID()
        state.snapshots.append(snapshot)
        registry.publish(snapshot)
        root.registryGeneration.store(version, ordering: .releasing)
      }
    }
  }

  /// The `treeID` of the container at the root of this scope's tree.
  final var treeID: UInt { ((links.root?.scope ?? self) as? Container)?.containerID ?? 0 }

  /// Serializes the stamping of published snapshots (see ``publish(_:)``).
  static let publishLock = Lock()

  /// `root → session("s1") → request`.
  var chainDescription: String {
    var names: [String] = []
    var current: Scope? = self
    while let scope = current {
      names.append(scope.description)
      current = scope.parent
    }
    return names.reversed().joined(separator: " → ")
  }

  /// `request`, or `session("s1")` for a named scope.
  public var description: String {
    guard let name else { return tag.name }
    return "\(tag.name)(\"\(name)\")"
  }

  /// The error for resolving `key` from this closed scope.
  @usableFromInline
  func closedError(_ key: ServiceKey) -> ResolutionError {
    ResolutionError(.resolvedFromClosedScope(key, scope: chainDescription))
  }
}

/// What a scope guards with its state lock: everything a plain request scope does not need, in
/// one object made on first use.
///
/// Not `Sendable`: reached only through `Scope.withState`, under the owning scope's lock. The lock
/// already makes every access exclusive, so the properties skip the run-time exclusivity check
/// (about 100 instructions per access, six accesses in a request that owns a disposable).
final class ScopeState {
  /// Every snapshot this scope published, kept alive for readers that may still hold one.
  @exclusivity(unchecked) var snapshots: [Registry] = []
  /// Scoped instances past the inline slots, and those being created.
  @exclusivity(unchecked) var scoped: [ScopedSlot] = []
  /// The identities of the modules installed in this scope (see `Scope+Inspection.swift`).
  @exclusivity(unchecked) var installedModules: [AnyHashable] = []
  /// The same identities as a set, for membership checks.
  @exclusivity(unchecked) var installedModuleSet: Set<AnyHashable> = []
  /// What this scope's own synchronous close left to a background task (see ``LeftDisposal``).
  @exclusivity(unchecked) var leftBehind: LeftDisposal?
}
