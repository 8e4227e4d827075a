import Synchronization

/// The `scoped` lifetime: one instance per owning scope, made once however many threads ask. The
/// generic half lives here and is specialised in the caller's module; the scope's bookkeeping (its
/// inline slots, overflow slots and waiting) is the non-generic half, in `Scope+Scoped.swift`.
@usableFromInline
enum ScopedStorage: LifetimeStorage {
  @usableFromInline static var home: InstanceHome { .owningScope }
  @usableFromInline static var disposer: Disposer { .owningScope }

  /// The instance in the scope the lifetime names, made once per owning scope. The factory runs
  /// without any lock; a second thread asking meanwhile waits for it, after checking that waiting
  /// closes no cycle. Generic glue only: the bookkeeping is in non-generic `Scope` methods.
  @inlinable
  static func instance<Service, each Argument>(
    of registration: Registration<Service, repeat each Argument>, _ resolver: borrowing Resolver,
    owner _: ScopeRef, _ arguments: repeat each Argument
  ) throws -> Service {
    try registration.scoped(resolver, repeat each arguments)
  }
}

extension Registration {
  /// Files a new scoped instance's disposal with its owner before it is published.
  ///
  /// - Throws: `scopeClosed` if the owner closed while the factory ran; the instance was disposed
  ///   and the slot given up.
  @inlinable @inline(never)
  final func fileDisposal(of instance: Service, owner: ScopeRef, slot: Int) throws {
    // Moved into the scope, not captured: a closure capturing the disposal would copy it (a
    // retain and a release of the instance and of its disposer).
    var pending = disposal(for: instance)
    let refused = owner.with { scope -> Disposal? in
      guard let disposal = pending.take() else { return nil }
      return scope.fileScopedDisposal(self, slot: slot, disposal)
    }
    if let refused {
      throw owner.with { $0.closedWhileCreating(key, disposal: refused) }
    }
  }

  /// ``ScopedStorage/instance(of:_:owner:_:)``.
  @inlinable
  final func scoped(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    // The owner is the resolving scope or one of its ancestors, all kept alive by the caller.
    let owner = try Scope.owningScope(from: resolver.scope, for: self, captor: resolver.captor)
    if let ready = owner.with({ $0.readyInlineInstance(self, Registration.unboxed) }) {
      return ready
    }
    let thread = currentThreadID()
    // The common case, a first instance in a free inline slot, reserves it without a call.
    if let slot = owner.with({ $0.reserveFreeInlineSlot(self, thread: thread) }) {
      return try createScoped(resolver, owner: owner, slot: slot, repeat each arguments)
    }
    while true {
      switch try owner.with({ try $0.scopedSlot(for: self, thread: thread) }) {
      case .ready(let stored):
        return Registration.unboxed(stored)
      case .wait(let holder):
        try owner.with { try $0.waitForScoped(self, holder: holder, thread: thread) }
      case .create(let slot):
        return try createScoped(resolver, owner: owner, slot: slot, repeat each arguments)
      }
    }
  }

  /// Makes the instance for the slot the calling thread reserved in `owner`, files its disposal
  /// and publishes it; on failure gives the slot up.
  @inlinable @inline(__always)
  final func createScoped(
    _ resolver: borrowing Resolver, owner: ScopeRef, slot: Int, _ arguments: repeat each Argument
  ) throws -> Service {
    let instance: Service
    do {
      instance = try owner.with { owner in
        try owner.withResolver(depth: resolver.depth, captor: self, version: resolver.version) { resolver in
          let instance = try construct(resolver, repeat each arguments)
          // Visible to this thread only, so that the activation hook can close a cycle.
          owner.provisionScoped(self, slot: slot, instance: ObjectBox.box(instance))
          if activation != nil { try activate(instance, resolver) }
          return instance
        }
      }
    } catch {
      owner.with { $0.releaseScoped(self, slot: slot) }
      throw error
    }
    if mayNeedDisposal(instance) { try fileDisposal(of: instance, owner: owner, slot: slot) }
    owner.with { $0.publishScoped(self, slot: slot) }
    // A close that began while the factory ran skipped this slot (it was being created): the
    // closed scope must not keep the instance. The caller still gets it.
    owner.with { $0.releaseIfClosing(slot: slot) }
    return instance
  }

  /// A scoped instance of this registration from the object its slot holds (see ``ObjectBox``).
  @inlinable @inline(__always)
  static func unboxed(_ stored: AnyObject) -> Service { ObjectBox.unbox(stored, as: Service.self) }
}
