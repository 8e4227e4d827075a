import Synchronization

/// A scope reached without reference counting: what the read path passes around instead of
/// `Scope` itself, because retaining and releasing the scope on every lookup cost about a third
/// of a resolve and kept two threads from scaling.
///
/// **Invariant.** A `ScopeRef` is made only from a scope that somebody holds for as long as the
/// `ScopeRef` is used, and is never stored beyond that: the caller of a resolve holds the scope it
/// resolves from (a `Resolver`, a `Found` and the ambient owner live only during that call), and a
/// scope holds its ancestors (its parent link is retained), so ``parent`` stays valid too.
@usableFromInline @frozen
package struct ScopeRef {
  @usableFromInline let unmanaged: Unmanaged<Scope>

  @inlinable @inline(__always)
  package init(_ scope: Scope) { unmanaged = .passUnretained(scope) }

  @inlinable @inline(__always)
  init(unmanaged: Unmanaged<Scope>) { self.unmanaged = unmanaged }

  /// Runs `body` on the scope, without a retain.
  @inlinable @inline(__always)
  package func with<Result>(_ body: (Scope) throws -> Result) rethrows -> Result {
    try unmanaged._withUnsafeGuaranteedRef(body)
  }

  /// The scope, retained: for slow paths that keep it.
  @inlinable
  package var scope: Scope { unmanaged.takeUnretainedValue() }

  /// The enclosing scope; `nil` for the root.
  @inlinable @inline(__always)
  package var parent: ScopeRef? { with { $0.links.parent } }

  /// The scope whose synchronous close runs on this thread (``ThreadContext/closingScope``), held
  /// by that close while it runs; `nil` if none does.
  static var closingOnThisThread: ScopeRef? {
    UnsafeRawPointer(bitPattern: ThreadContext.closingScope).map { ScopeRef(unmanaged: .fromOpaque($0)) }
  }

  /// The scope whose cached instances this thread releases at the end of its close
  /// (``ThreadContext/releasingScope``), held by that close while it runs; `nil` if none.
  static var releasingOnThisThread: ScopeRef? {
    UnsafeRawPointer(bitPattern: ThreadContext.releasingScope).map { ScopeRef(unmanaged: .fromOpaque($0)) }
  }

  /// Whether this scope is `ancestor` or lies below it.
  func isSelfOrDescendant(of ancestor: Scope) -> Bool {
    var current: ScopeRef? = self
    while let scope = current {
      if scope.address == UnsafeRawPointer(Unmanaged.passUnretained(ancestor).toOpaque()) { return true }
      current = scope.parent
    }
    return false
  }

  /// The scope's address, to compare with one a thread remembers (never to reach it).
  @inlinable @inline(__always)
  var address: UnsafeRawPointer { UnsafeRawPointer(unmanaged.toOpaque()) }

  @inlinable @inline(__always)
  package static func === (lhs: ScopeRef, rhs: ScopeRef) -> Bool {
    lhs.unmanaged.toOpaque() == rhs.unmanaged.toOpaque()
  }
}

/// A registration reached without reference counting.
///
/// **Invariant.** A registration lives at least as long as the registry snapshots that hold it,
/// and a scope keeps every snapshot it published until it is freed; a `RegistrationRef` is made
/// from a registration found in (or being built by) a scope that is held while it is used, as for
/// ``ScopeRef``. ``withTyped(_:_:)`` relies on the key: a registration found under a key was made
/// with exactly the service and argument types the key names (the key holds their identities), so
/// the downcast cannot fail.
@usableFromInline @frozen
package struct RegistrationRef {
  @usableFromInline let unmanaged: Unmanaged<AnyRegistration>

  @inlinable @inline(__always)
  init(_ registration: AnyRegistration) { unmanaged = .passUnretained(registration) }

  @inlinable @inline(__always)
  init(unmanaged: Unmanaged<AnyRegistration>) { self.unmanaged = unmanaged }

  /// Runs `body` on the registration, without a retain.
  @inlinable @inline(__always)
  func with<Result>(_ body: (AnyRegistration) throws -> Result) rethrows -> Result {
    try unmanaged._withUnsafeGuaranteedRef(body)
  }

  /// The registration, retained: for slow paths.
  @inlinable
  var registration: AnyRegistration { unmanaged.takeUnretainedValue() }

  /// The registration's address, to compare with one a thread remembers.
  @inlinable @inline(__always)
  var address: UnsafeRawPointer { UnsafeRawPointer(unmanaged.toOpaque()) }

  /// Runs `body` on the registration typed as the key it was found under says (see the
  /// invariant), without a retain.
  @inlinable @inline(__always)
  func withTyped<Service, each Argument, Result>(
    _ type: Registration<Service, repeat each Argument>.Type,
    _ body: (Registration<Service, repeat each Argument>) throws -> Result
  ) rethrows -> Result {
    try unmanaged._withUnsafeGuaranteedRef { try body(unsafeDowncast($0, to: type)) }
  }
}

/// Where one top-level resolve keeps its `graph` instances: a variable of the frame that started
/// the resolve, reached from every nested resolver, with the cache made on first use (most
/// resolves never need one, and then cost no allocation).
///
/// **Invariant.** The pointer is to a local of ``with(_:)``, valid while that call runs; only
/// resolvers carry a slot, and a resolver is non-copyable and only lent within that call, so no
/// slot outlives its variable. The variable holds one retain of the cache, given back when the
/// call returns.
@usableFromInline @frozen
package struct GraphCacheSlot {
  @usableFromInline let pointer: UnsafeMutablePointer<Unmanaged<GraphCache>?>

  @inlinable @inline(__always)
  init(pointer: UnsafeMutablePointer<Unmanaged<GraphCache>?>) { self.pointer = pointer }

  /// Runs `body` with a slot whose cache lives until `body` returns.
  @inlinable @inline(__always)
  package static func with<Result>(_ body: (GraphCacheSlot) throws -> Result) rethrows -> Result {
    var graph: Unmanaged<GraphCache>? = nil
    defer { if let graph { graph.release() } }
    // Without the stack protector that `withUnsafeMutablePointer` asks for: the pointer is to one
    // word, read and written whole through its type, never indexed, so there is no buffer to
    // overrun, and the canary (two thread-local loads, a store and a compare in every top-level
    // resolve) guarded nothing.
    return try _withUnprotectedUnsafeMutablePointer(to: &graph) { try body(GraphCacheSlot(pointer: $0)) }
  }

  /// The resolve's cache, made now if it was not yet.
  package var cache: GraphCache {
    if let existing = pointer.pointee { return existing.takeUnretainedValue() }
    let made = GraphCache()
    pointer.pointee = Unmanaged.passRetained(made)
    return made
  }
}

/// A registry snapshot reached without reference counting.
///
/// **Invariant.** Made only from a snapshot that a held scope keeps (see ``SnapshotCell``), and
/// used only while that scope is held.
@usableFromInline @frozen
package struct RegistryRef {
  @usableFromInline let unmanaged: Unmanaged<Registry>

  @inlinable @inline(__always)
  init(unmanaged: Unmanaged<Registry>) { self.unmanaged = unmanaged }

  @inlinable @inline(__always)
  init(_ registry: Registry) { unmanaged = .passUnretained(registry) }

  /// Runs `body` on the snapshot, without a retain.
  @inlinable @inline(__always)
  func with<Result>(_ body: (Registry) throws -> Result) rethrows -> Result {
    try unmanaged._withUnsafeGuaranteedRef(body)
  }
}

/// An object made on first use and owned until its owner is freed, reached without reference
/// counting: what a scope keeps its guarded state in.
///
/// Reading a class reference out of a stored property and handing it to a closure retained and
/// released it around the call: on the container's state, which every request that owns a
/// disposable reaches twice (to link into the container's list of children and to unlink), that
/// was four atomic operations per request on a line all threads share.
///
/// **Invariant.** Once made, the object is never replaced, and it is released only in `deinit`,
/// so it lives as long as the owner that holds this value. The owner reaches it only under its
/// own lock, so making it never races with reading it.
package struct LazyObject<Object: AnyObject>: ~Copyable {
  private var made: Unmanaged<Object>?

  package init() { made = nil }

  deinit { made?.release() }

  /// Runs `body` on the object, without a retain; `nil` if it was never made.
  package func withObjectIfMade<Result>(_ body: (Object?) throws -> Result) rethrows -> Result {
    guard let made else { return try body(nil) }
    return try made._withUnsafeGuaranteedRef { try body($0) }
  }

  /// Runs `body` on the object, made by `make` first if it was never made; without a retain.
  package mutating func withObject<Result>(
    making make: () -> Object, _ body: (Object) throws -> Result
  ) rethrows -> Result {
    let object: Unmanaged<Object>
    if let made {
      object = made
    } else {
      object = .passRetained(make())
      made = object
    }
    return try object._withUnsafeGuaranteedRef(body)
  }
}

/// An object made on first use by whichever thread needs it first, published with one
/// compare-and-exchange, and reached afterwards with one acquiring load: no lock, no reference
/// counting. What a scope keeps its children to close in, which threads linking children reach
/// at once.
///
/// **Invariant.** Once published, the object is never replaced, and it is released only in
/// `deinit`, so it lives as long as the owner that holds this value. A thread that loses the race
/// to publish releases its own object before anyone else could have seen it.
package struct PublishedObject<Object: AnyObject & Sendable>: ~Copyable, Sendable {
  private let word = Atomic<Unmanaged<Object>?>(nil)

  package init() {}

  deinit { word.load(ordering: .acquiring)?.release() }

  /// Runs `body` on the object, without a retain; `nil` if it was never made.
  package func withObjectIfMade<Result>(_ body: (Object?) throws -> Result) rethrows -> Result {
    guard let made = word.load(ordering: .acquiring) else { return try body(nil) }
    return try made._withUnsafeGuaranteedRef { try body($0) }
  }

  /// Runs `body` on the object, made by `make` and published first if it was never made; without
  /// a retain.
  package func withObject<Result>(
    making make: () -> Object, _ body: (Object) throws -> Result
  ) rethrows -> Result {
    if let made = word.load(ordering: .acquiring) {
      return try made._withUnsafeGuaranteedRef(body)
    }
    return try publish(make())._withUnsafeGuaranteedRef(body)
  }

  /// Publishes `object` unless another thread published first; returns what is published.
  private func publish(_ object: Object) -> Unmanaged<Object> {
    let made = Unmanaged.passRetained(object)
    let (exchanged, original) = word.compareExchange(
      expected: nil, desired: made, ordering: .acquiringAndReleasing)
    guard !exchanged, let original else { return made }
    made.release()
    return original
  }
}
