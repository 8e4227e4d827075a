import Synchronization

/// A registration with its types known: the factory, the lifetime's storage and the post-init hook.
///
/// Found by key in a ``Registry`` and typed through `RegistrationRef.withTyped`: the key holds the
/// service type and the argument types, so a registration found under a key always has exactly
/// these generic arguments.
///
/// `@unchecked Sendable`: the factory and hook are `@Sendable`; `shared` is a
/// ``SharedInstanceCell``, written only under the entry's ``CreationGuard`` (see its invariant);
/// `weakInstance` is accessed only under the guard.
@usableFromInline
final class Registration<Service, each Argument>: ServiceRegistration<Service>, @unchecked Sendable {
  @usableFromInline typealias Factory = @Sendable (borrowing Resolver, repeat each Argument) throws -> Service

  @usableFromInline let factory: Factory
  /// The singleton, once made (see ``SharedInstanceCell``).
  @usableFromInline let shared: SharedInstanceCell
  /// The once-guard of a singleton or weak instance, made the first time one is created (most
  /// registrations of a large container are never resolved); other lifetimes keep their instances
  /// elsewhere (or nowhere) and never make one. Written once, under `creationGuardLock`, before
  /// `hasCreationGuard` is set with a release; read only after an acquiring load saw it set.
  /// (Not `AtomicLazyReference`: its methods are not inlinable, and unspecialised they looked up
  /// metadata costing about 330 instructions per call.)
  @exclusivity(unchecked) private var creationGuard: CreationGuard?
  private let hasCreationGuard = Atomic<Bool>(false)
  /// The disposal kind of the last instance type this registration made, with that type: its
  /// `ObjectIdentifier` bits (type metadata is 8-byte aligned, so the low three bits are free)
  /// holding the kind's raw value in the low bits; 0 before the first. Making a shared instance of
  /// that type again skips the process-wide table of ``DisposalKind`` and the conformance casts
  /// (a type that needs no disposal is answered by ``mayNeedDisposal(_:)`` with one compare). One
  /// word, so the type and its kind are read and written together.
  @usableFromInline let knownDisposal = Atomic<UInt>(0)
  weak var weakInstance: AnyObject?

  @usableFromInline
  init(
    key: ServiceKey, lifetime: Lifetime, location: SourceLocation, dependencies: @escaping DependencyKeys,
    factory: @escaping Factory
  ) {
    self.factory = factory
    // Only singletons keep their instance here; other lifetimes need no storage. (No `Service?`
    // here: making a registration would look up `Optional<Service>`'s metadata each time.)
    shared = SharedInstanceCell(
      for: Service.self, holdsInstances: lifetime.kind.storage.home == .registration)
    super.init(key: key, lifetime: lifetime, location: location, dependencies: dependencies)
  }

  /// A registration of a ready-made instance, which every resolve returns.
  init(
    key: ServiceKey, location: SourceLocation, dependencies: @escaping DependencyKeys,
    factory: @escaping Factory,
    instance: Service
  ) {
    self.factory = factory
    shared = SharedInstanceCell(holding: instance)
    super.init(key: key, lifetime: .singleton, location: location, dependencies: dependencies)
  }

  deinit {
    // Only a cell with storage can hold a value. Asked first, because `Service.self` is read from
    // this class's metadata, a cache line of its own per service type: freeing a container of
    // many transient services of distinct types touched one such line per registration.
    if shared.hasStorage { shared.drop(as: Service.self) }
  }

  /// The once-guard of this registration's shared instance (see `creationGuard`).
  @usableFromInline
  var creation: CreationGuard {
    if hasCreationGuard.load(ordering: .acquiring), let existing = creationGuard { return existing }
    let made = CreationGuard()
    return creationGuardLock.withLock {
      if let existing = creationGuard { return existing }
      creationGuard = made
      hasCreationGuard.store(true, ordering: .releasing)
      return made
    }
  }

  /// The instance for a resolve reaching this registration through `resolver`, which is one level
  /// deeper than the caller's. `owner` is the scope whose registry holds this registration.
  @inlinable @inline(__always)
  final func instance(
    _ resolver: borrowing Resolver, owner: ScopeRef, _ arguments: repeat each Argument
  ) throws -> Service {
    if kind == .transient {
      // `make` written out: every level a pack of arguments is passed through copies it (a
      // retain and a release of each reference-counted argument).
      let instance = try construct(resolver, repeat each arguments)
      if activation != nil { try activate(instance, resolver) }
      return instance
    }
    if shared.isReady, let instance = readyInstance(owner: owner) {
      return instance
    }
    if kind == .scoped {
      return try ScopedStorage.instance(of: self, resolver, owner: owner, repeat each arguments)
    }
    return try sharedInstance(resolver, owner: owner, repeat each arguments)
  }

  /// The instance if it exists already, without running anything: a created singleton, or the
  /// scoped instance of the scope that owns it as seen from `scope`; `nil` otherwise.
  @inlinable @inline(__always)
  final func existingInstance(from scope: ScopeRef, registeredIn holder: ScopeRef) -> Service? {
    if kind == .transient { return nil }
    if shared.isReady { return readyInstance(owner: holder) }
    guard kind == .scoped else { return nil }
    return existingScopedInstance(from: scope)
  }

  /// The scoped instance of the scope that owns it as seen from `scope`, if it exists; `nil` too
  /// inside the factory (or deferred resolve) of a shared instance of `scope` for an untagged
  /// registration, which may be captive there: only the full path decides, whether or not the
  /// instance exists. Out of line: inlined, it made the shortcut too large to inline for every
  /// other lifetime.
  @inlinable @inline(never)
  final func existingScopedInstance(from scope: ScopeRef) -> Service? {
    if scopeTagID == 0, ThreadContext.isAmbientOwner(scope) { return nil }
    guard let owner = Scope.owningScopeIfPresent(from: scope, tagID: scopeTagID) else { return nil }
    return owner.with { $0.readyInlineInstance(self, Registration.unboxed) }
  }

  /// ``existingInstance(from:registeredIn:)`` of a registration found under this class's key.
  @inlinable @inline(__always)
  static func existingInstance(of found: Found, from scope: ScopeRef) -> Service? {
    found.registration.withTyped(Registration.self) {
      $0.existingInstance(from: scope, registeredIn: found.owner)
    }
  }

  /// The created singleton, read while `owner` (the scope whose registry holds this registration)
  /// cannot release it; `nil` if it is not there (any more).
  @inlinable @inline(__always)
  final func readyInstance(owner: ScopeRef) -> Service? {
    owner.with { owner in
      owner.readingCache {
        shared.readyValue(as: Service.self)
      }
    }
  }

  /// Drops the created singleton of a scope that closed, so that it is freed now rather than
  /// with the scope. Readers announce themselves (`Scope.readingCache`), and the closing scope
  /// waited for them before calling this.
  override func releaseSharedInstance() {
    guard kind.storage.home == .registration else { return }
    // `creation`, not a load of `creationGuard`: a creator that has not stored the guard yet must
    // still meet this release under one lock (and then see the scope closed), as when every
    // singleton had its guard from the start.
    let creation = creation
    // Not waited for while a factory runs (on another thread, or on this one: a disposer closing
    // the scope from inside that factory): the factory may itself be waiting for the closer, and
    // the close would never end. That creator releases what it made once it sees the scope
    // closing (`SingletonStorage.create`).
    let released = creation.withCreationLockIfFree { () -> Service? in
      guard shared.isReady else { return nil }
      return shared.clear(as: Service.self)
    }
    _ = consume released  // freed here, outside the guard: its `deinit` is user code
  }

  /// A singleton not yet created, and the `weak` and `graph` lifetimes: each lifetime's storage
  /// type (see ``LifetimeStorage``). (`transient` and `scoped` are dispatched before this in
  /// `instance`, to keep their paths inlined; they are listed here only to keep the switch total.)
  @inlinable
  final func sharedInstance(
    _ resolver: borrowing Resolver, owner: ScopeRef, _ arguments: repeat each Argument
  ) throws -> Service {
    switch kind {
    case .transient:
      return try TransientStorage.instance(of: self, resolver, owner: owner, repeat each arguments)
    case .singleton, .eagerSingleton:
      return try SingletonStorage.instance(of: self, resolver, owner: owner, repeat each arguments)
    case .weak:
      return try WeakStorage.instance(of: self, resolver, owner: owner, repeat each arguments)
    case .graph:
      return try GraphStorage.instance(of: self, resolver, owner: owner, repeat each arguments)
    case .scoped:
      return try ScopedStorage.instance(of: self, resolver, owner: owner, repeat each arguments)
    }
  }

  /// The disposal `instance` needs, if any: the conformance casts that fail run once per
  /// instance type.
  @inlinable
  final func disposal(for instance: Service) -> Disposal? {
    let type = UInt(bitPattern: ObjectIdentifier(Swift.type(of: instance)))
    let known = knownDisposal.load(ordering: .relaxed)
    if known & ~Self.kindBits == type, type & Self.kindBits == 0,
      let kind = DisposalKind(rawValue: known & Self.kindBits)
    {
      return Disposal.of(instance, kind: kind, key: key, registration: identity)
    }
    let kind = Disposal.kind(of: instance)
    // Not remembered for a wrapper (`Optional`, `AnyHashable`) or an existential (`any P`):
    // whether it needs disposal depends on the value inside, and a `nil` or a plain implementation
    // must not hide a later disposable one.
    if type & Self.kindBits == 0, !DisposalKind.variesPerInstance(instance) {
      knownDisposal.store(type | kind.rawValue, ordering: .relaxed)
    }
    return Disposal.of(instance, kind: kind, key: key, registration: identity)
  }

  /// The low bits of ``knownDisposal`` that hold the kind.
  @usableFromInline static var kindBits: UInt { 7 }

  /// `false` when `instance`'s type was found to need no disposal: the common case, answered with
  /// one load and no `Disposal` value made.
  @inlinable @inline(__always)
  final func mayNeedDisposal(_ instance: Service) -> Bool {
    let type = UInt(bitPattern: ObjectIdentifier(Swift.type(of: instance)))
    return knownDisposal.load(ordering: .relaxed) != type | DisposalKind.none.rawValue
      || type & Self.kindBits != 0
  }

  /// This registration typed as one without runtime arguments, if it takes none.
  var withoutArguments: Registration<Service>? {
    self as AnyRegistration as? Registration<Service>
  }

  override func materialize(into batch: inout [AnyRegistration]) throws {
    try materializeTyped(into: &batch)
  }

  override func failing(_ reason: ResolutionError.Reason) -> AnyRegistration { failingTyped(reason) }

  override var forwardCount: Int { forwardCountTyped }

  /// A ready-made instance's cell is ready from the start; a factory's, only once it made one,
  /// which cannot happen before its batch is published.
  override var isReadyMade: Bool { shared.isReady }

  override func forwards(madeFor replacement: AnyRegistration) -> [AnyRegistration]? {
    forwardsTyped(madeFor: replacement)
  }

  override func createEagerly(in scope: Scope) throws {
    guard let registration = withoutArguments else { return }
    _ = try scope.withResolver(captor: self, version: scope.registryVersion) {
      try SingletonStorage.create(registration, $0, owner: scope)
    }
  }
}

/// Serializes the making of creation guards (`Registration.creation`): held only to store one.
private let creationGuardLock = Lock()
