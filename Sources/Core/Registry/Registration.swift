import Synchronization

/// A registration with its types known: the factory, the lifetime's storage and the post-init hook.
///
/// Found by key in a ``Registry`` and downcast with `unsafeDowncast`: the key holds the service type
/// and the argument types, so a registration found under a key always has exactly these generic
/// arguments.
///
/// `@unchecked Sendable`: the factory and hook are `@Sendable`; `storage` is written only while the
/// entry's ``CreationGuard`` is held and before `state` is set to `ready` with release ordering, and
/// read only after an acquiring load of `state` saw `ready`; `weakInstance` is accessed only under
/// the guard.
@usableFromInline
final class Registration<Service, each Argument>: AnyRegistration, @unchecked Sendable {
  @usableFromInline typealias Factory = @Sendable (borrowing Resolver, repeat each Argument) throws -> Service
  @usableFromInline typealias Activation = @Sendable (borrowing Resolver, Service) throws -> Void

  @usableFromInline let factory: Factory
  @usableFromInline let activation: Activation?
  /// `empty`, `ready` (a shared instance is in `storage`), or `provisional` (the creating thread
  /// stored it and runs the activation hook; only that thread may read it).
  @usableFromInline let state = Atomic<UInt8>(Registration.empty)
  @usableFromInline let storage: UnsafeMutablePointer<Service?>
  /// The once-guard of a singleton or weak instance; `nil` for other lifetimes, which keep their
  /// instances elsewhere (or nowhere), so that a transient registration costs no lock.
  private let creation: CreationGuard?
  /// `ObjectIdentifier` bits of the last instance type found to need no disposal, so that making
  /// a shared instance of that type again skips the (slow) conformance casts.
  @usableFromInline let undisposableType = Atomic<UInt>(0)
  private weak var weakInstance: AnyObject?

  @usableFromInline static var empty: UInt8 { 0 }
  @usableFromInline static var ready: UInt8 { 1 }
  @usableFromInline static var provisional: UInt8 { 2 }

  init(
    key: ServiceKey, lifetime: Lifetime, location: SourceLocation, dependencies: [ServiceKey]?,
    factory: @escaping Factory, activation: Activation?, instance: Service? = nil
  ) {
    self.factory = factory
    self.activation = activation
    switch lifetime.kind {
    case .singleton, .eagerSingleton, .weak: creation = CreationGuard()
    case .transient, .graph, .scoped: creation = nil
    }
    storage = .allocate(capacity: 1)
    storage.initialize(to: instance)
    super.init(key: key, lifetime: lifetime, location: location, dependencies: dependencies)
    if instance != nil { state.store(Registration.ready, ordering: .releasing) }
  }

  deinit {
    storage.deinitialize(count: 1)
    storage.deallocate()
  }

  /// The instance for a resolve reaching this registration through `resolver`, which is one level
  /// deeper than the caller's. `owner` is the scope whose registry holds this registration.
  @inlinable @inline(__always)
  final func instance(
    _ resolver: borrowing Resolver, owner: Unmanaged<Scope>, _ arguments: repeat each Argument
  ) throws -> Service {
    if kind == .transient { return try make(resolver, repeat each arguments) }
    if state.load(ordering: .acquiring) == Registration.ready, let instance = readyInstance(owner: owner) {
      return instance
    }
    if kind == .scoped { return try scoped(resolver, repeat each arguments) }
    return try sharedInstance(resolver, owner: owner.takeUnretainedValue(), repeat each arguments)
  }

  /// The instance if it exists already, without running anything: a created singleton, or the
  /// scoped instance of the scope that owns it as seen from `scope`; `nil` otherwise.
  @inlinable @inline(__always)
  final func existingInstance(from scope: Unmanaged<Scope>, registeredIn holder: Unmanaged<Scope>) -> Service?
  {
    if kind == .transient { return nil }
    if state.load(ordering: .acquiring) == Registration.ready { return readyInstance(owner: holder) }
    guard kind == .scoped, let owner = Scope.owningScopeIfPresent(from: scope, tagID: scopeTagID) else {
      return nil
    }
    return owner._withUnsafeGuaranteedRef { $0.readyInlineInstance(self, Registration.unbox) }
  }

  /// ``existingInstance(from:registeredIn:)`` of a registration found under this class's key.
  @inlinable @inline(__always)
  static func existingInstance(of found: Found, from scope: Unmanaged<Scope>) -> Service? {
    found.registration._withUnsafeGuaranteedRef {
      unsafeDowncast($0, to: Registration.self).existingInstance(from: scope, registeredIn: found.owner)
    }
  }

  /// The created singleton, read while `owner` (the scope whose registry holds this registration)
  /// cannot release it; `nil` if it is not there (any more).
  @inlinable @inline(__always)
  final func readyInstance(owner: Unmanaged<Scope>) -> Service? {
    owner._withUnsafeGuaranteedRef { owner in
      owner.readingCache {
        state.load(ordering: .acquiring) == Registration.ready ? storage.pointee.unsafelyUnwrapped : nil
      }
    }
  }

  /// Drops the created singleton of a scope that closed, so that it is freed now rather than
  /// with the scope. Readers announce themselves (`Scope.readingCache`), and the closing scope
  /// waited for them before calling this.
  override func releaseSharedInstance() {
    guard kind == .singleton || kind == .eagerSingleton, let creation else { return }
    // The creation guard keeps this from racing with a singleton being made right now. It
    // throws only if this very thread is making it (a disposer closing the scope from inside that
    // factory); then the instance stays until the registration is freed.
    let released = try? creation.withCreationLock(for: key) { () -> Service? in
      guard state.load(ordering: .acquiring) == Registration.ready else { return nil }
      state.store(Registration.empty, ordering: .releasing)
      defer { storage.pointee = nil }
      return storage.pointee
    }
    _ = consume released  // freed here, outside the guard: its `deinit` is user code
  }

  /// Runs the factory and the activation hook, adding this registration to any error's path.
  @inlinable @inline(__always)
  final func make(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    let instance = try construct(resolver, repeat each arguments)
    if activation != nil { try activate(instance, resolver) }
    return instance
  }

  @inlinable @inline(__always)
  final func construct(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    // The first level of every top-level resolve (which may itself run inside a factory, through
    // a captured scope), and every 8th level below it, checks the depth limit and that the stack
    // has room left: a frame-address compare against a thread-local floor.
    if resolver.depth & 7 == 1,
      resolver.depth > Resolver.maximumDepth || ThreadContext.isStackNearlyExhausted
    {
      try stopTooDeep(resolver.depth)
    }
    do {
      return try factory(resolver, repeat each arguments)
    } catch {
      throw ResolutionError.propagating(error, through: self)
    }
  }

  /// Runs the activation hook. If it throws, nobody will receive `instance`, so it is disposed
  /// here (its disposer's errors travel with the hook's error).
  @usableFromInline
  final func activate(_ instance: Service, _ resolver: borrowing Resolver) throws {
    do {
      try activation?(resolver, instance)
    } catch {
      var failure = ResolutionError.propagating(error, through: self, activating: true)
      if let disposal = Disposal.of(instance, key: key) {
        failure.disposalErrors += Scope.disposeNow(disposal)
      }
      throw failure
    }
  }

  /// A singleton not yet created, and the `weak` and `graph` lifetimes. (`transient` and `scoped`
  /// are dispatched before this in `instance`, to keep their paths inlined; they are listed here
  /// only to keep the switch total.)
  @inlinable
  final func sharedInstance(
    _ resolver: borrowing Resolver, owner: Scope, _ arguments: repeat each Argument
  ) throws -> Service {
    switch kind {
    case .transient:
      return try make(resolver, repeat each arguments)
    case .singleton, .eagerSingleton:
      // A singleton's dependencies come from the scope that registered it, never from the asker.
      return try owner.withResolver(depth: resolver.depth, captor: self, version: resolver.version) {
        try singleton($0, owner: owner, repeat each arguments)
      }
    case .weak:
      return try owner.withResolver(depth: resolver.depth, captor: self, version: resolver.version) {
        try weakShared($0, repeat each arguments)
      }
    case .graph:
      return try graphShared(resolver, repeat each arguments)
    case .scoped:
      return try scoped(resolver, repeat each arguments)
    }
  }

  /// The disposal `instance` needs, if any: the conformance casts run once per instance type.
  @usableFromInline
  final func disposal(for instance: Service) -> Disposal? {
    guard mayNeedDisposal(instance) else { return nil }
    let disposal = Disposal.of(instance, key: key)
    if disposal == nil {
      undisposableType.store(UInt(bitPattern: ObjectIdentifier(Swift.type(of: instance))), ordering: .relaxed)
    }
    return disposal
  }

  /// `false` when `instance`'s type was found to need no disposal: the common case, answered with
  /// one load and no `Disposal` value made.
  @inlinable @inline(__always)
  final func mayNeedDisposal(_ instance: Service) -> Bool {
    undisposableType.load(ordering: .relaxed) != UInt(bitPattern: ObjectIdentifier(Swift.type(of: instance)))
  }

  /// Files a new scoped instance's disposal with its owner before it is published.
  ///
  /// - Throws: `scopeClosed` if the owner closed while the factory ran; the instance was disposed
  ///   and the slot given up.
  @inlinable @inline(never)
  final func fileDisposal(of instance: Service, owner: Unmanaged<Scope>, slot: Int) throws {
    guard let disposal = disposal(for: instance) else { return }
    let filed = owner._withUnsafeGuaranteedRef { $0.fileScopedDisposal(self, slot: slot, disposal) }
    guard filed else {
      throw owner._withUnsafeGuaranteedRef { $0.closedWhileCreating(key, disposal: disposal) }
    }
  }

  /// The instance of a `scoped` registration in the scope its lifetime names, made once per
  /// owning scope. The factory runs without any lock; a second thread asking meanwhile waits for
  /// it, after checking that waiting closes no cycle. Generic glue only: the bookkeeping is in
  /// non-generic `Scope` methods.
  @inlinable
  final func scoped(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    // The owner is the resolving scope or one of its ancestors, all kept alive by the caller.
    let owner = try Scope.owningScope(from: resolver.scope, for: self, captor: resolver.captor)
    if let ready = owner._withUnsafeGuaranteedRef({ $0.readyInlineInstance(self, Registration.unbox) }) {
      return ready
    }
    let thread = currentThreadID()
    // The common case, a first instance in a free inline slot, reserves it without a call.
    if let slot = owner._withUnsafeGuaranteedRef({ $0.reserveFreeInlineSlot(self, thread: thread) }) {
      return try createScoped(resolver, owner: owner, slot: slot, repeat each arguments)
    }
    while true {
      switch try owner._withUnsafeGuaranteedRef({ try $0.scopedSlot(for: self, thread: thread) }) {
      case .ready(let stored):
        return Registration.unbox(stored)
      case .wait(let holder):
        try owner._withUnsafeGuaranteedRef { try $0.waitForScoped(self, holder: holder, thread: thread) }
      case .create(let slot):
        return try createScoped(resolver, owner: owner, slot: slot, repeat each arguments)
      }
    }
  }

  /// Makes the instance for the slot the calling thread reserved in `owner`, files its disposal
  /// and publishes it; on failure gives the slot up.
  @inlinable @inline(__always)
  final func createScoped(
    _ resolver: borrowing Resolver, owner: Unmanaged<Scope>, slot: Int, _ arguments: repeat each Argument
  ) throws -> Service {
    let instance: Service
    do {
      instance = try owner._withUnsafeGuaranteedRef { owner in
        try owner.withResolver(depth: resolver.depth, captor: self, version: resolver.version) { resolver in
          let instance = try construct(resolver, repeat each arguments)
          // Visible to this thread only, so that the activation hook can close a cycle.
          owner.provisionScoped(self, slot: slot, instance: Registration.box(instance))
          if activation != nil { try activate(instance, resolver) }
          return instance
        }
      }
    } catch {
      owner._withUnsafeGuaranteedRef { $0.releaseScoped(self, slot: slot) }
      throw error
    }
    if mayNeedDisposal(instance) { try fileDisposal(of: instance, owner: owner, slot: slot) }
    owner._withUnsafeGuaranteedRef { $0.publishScoped(self, slot: slot) }
    return instance
  }

  /// A class instance as itself; anything else in a ``ValueBox``, retained once for the slot that
  /// will hold it. After specialisation the test is a constant, so a class-typed scoped service
  /// costs no box.
  @inlinable @inline(__always)
  static func box(_ instance: Service) -> Unmanaged<AnyObject> {
    if Service.self is AnyObject.Type {
      return Unmanaged.passRetained(unsafeBitCast(instance, to: AnyObject.self))
    }
    return Unmanaged.passRetained(ValueBox(instance))
  }

  /// The inverse of ``box(_:)``.
  @inlinable @inline(__always)
  static func unbox(_ stored: AnyObject) -> Service {
    if Service.self is AnyObject.Type { return unsafeBitCast(stored, to: Service.self) }
    return unsafeDowncast(stored, to: ValueBox<Service>.self).value
  }

  @usableFromInline
  func singleton(
    _ resolver: borrowing Resolver, owner: Scope, _ arguments: repeat each Argument
  ) throws -> Service {
    let creation = self.creation ?? CreationGuard()  // always present for this lifetime
    if state.load(ordering: .acquiring) == Registration.provisional && creation.isHeldByCurrentThread {
      // Re-entered from this singleton's own activation hook: the instance exists; hand it out.
      return storage.pointee.unsafelyUnwrapped
    }
    return try creation.withCreationLock(for: key) {
      if state.load(ordering: .acquiring) == Registration.ready {
        return storage.pointee.unsafelyUnwrapped
      }
      // A closed scope makes nothing new: what it would make, nobody would dispose.
      if owner.isClosed { throw owner.closedError(key) }
      let instance = try construct(resolver, repeat each arguments)
      storage.pointee = instance
      if activation != nil {
        state.store(Registration.provisional, ordering: .releasing)
        do {
          try activate(instance, resolver)
        } catch {
          // State first: dropping the instance may run its `deinit`, which must not find a
          // provisional instance that is no longer there.
          state.store(Registration.empty, ordering: .releasing)
          storage.pointee = nil
          throw error
        }
      }
      do {
        try owner.adopt(disposal(for: instance))
      } catch {
        state.store(Registration.empty, ordering: .releasing)
        storage.pointee = nil
        throw error
      }
      state.store(Registration.ready, ordering: .releasing)
      return instance
    }
  }

  @usableFromInline
  func weakShared(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    try (creation ?? CreationGuard()).withCreationLock(for: key) {  // always present for `weak`
      if let existing = weakInstance as? Service { return existing }
      let instance = try make(resolver, repeat each arguments)
      guard Swift.type(of: instance as Any) is AnyObject.Type else { throw weakValueError(instance) }
      weakInstance = instance as AnyObject
      return instance
    }
  }

  @usableFromInline
  func graphShared(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    let graph: GraphCache
    if let existing = resolver.graph.pointee {
      graph = existing.takeUnretainedValue()
    } else {
      graph = GraphCache()
      resolver.graph.pointee = Unmanaged.passRetained(graph)
    }
    let id = identity
    switch graph.entries[id] {
    case .some(.some(let box)):
      return unsafeDowncast(box, to: ValueBox<Service>.self).value
    case .some(.none):
      throw ResolutionError.cycle(at: key)
    case .none:
      graph.entries[id] = .some(nil)  // under construction: asking again is a cycle
      do {
        let instance = try construct(resolver, repeat each arguments)
        graph.entries[id] = ValueBox(instance)
        if activation != nil { try activate(instance, resolver) }
        return instance
      } catch {
        graph.entries[id] = nil
        throw error
      }
    }
  }

  /// The error for a `weak` registration whose factory made a value: a value cannot be shared
  /// through a weak reference (it would silently be made anew on every resolve).
  private func weakValueError(_ instance: Service) -> ResolutionError {
    ResolutionError(.weakValue(descriptor, valueType: "\(Swift.type(of: instance))"))
  }

  /// This registration typed as one without runtime arguments, if it takes none.
  var withoutArguments: Registration<Service>? {
    self as AnyRegistration as? Registration<Service>
  }

  override func createEagerly(in scope: Scope) throws {
    guard let registration = withoutArguments else { return }
    _ = try scope.withResolver(captor: self, version: scope.registryVersion) {
      try registration.singleton($0, owner: scope)
    }
  }
}

/// The per-resolve cache behind the `graph` lifetime.
///
/// Not `Sendable`: it belongs to one top-level resolve, on one thread.
@usableFromInline
final class GraphCache {
  /// `nil` value: the entry is under construction.
  var entries: [UInt: AnyObject?] = [:]

  @usableFromInline init() {}
}
