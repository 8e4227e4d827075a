import Synchronization

/// The `singleton` and `eagerSingleton` lifetimes: one instance per registering scope, made once
/// under the registration's creation guard, its dependencies resolved in that scope.
@usableFromInline
enum SingletonStorage: LifetimeStorage {
  @usableFromInline static var home: InstanceHome { .registration }
  @usableFromInline static var disposer: Disposer { .registeringScope }

  /// A singleton's dependencies come from the scope that registered it, never from the asker.
  ///
  /// Inlined, with ``create(_:_:owner:_:)``, into code specialised for the service: generic, they
  /// looked up `Optional<Service>` and other metadata at run time for every singleton created
  /// (about 1,500 instructions each).
  @inlinable
  static func instance<Service, each Argument>(
    of registration: Registration<Service, repeat each Argument>, _ resolver: borrowing Resolver,
    owner: ScopeRef, _ arguments: repeat each Argument
  ) throws -> Service {
    let owner = owner.scope
    return try owner.withResolver(depth: resolver.depth, captor: registration, version: resolver.version) {
      try create(registration, $0, owner: owner, repeat each arguments)
    }
  }

  /// Makes the instance once, with `resolver` already in the registering scope `owner`.
  @inlinable
  static func create<Service, each Argument>(
    _ registration: Registration<Service, repeat each Argument>, _ resolver: borrowing Resolver,
    owner: Scope, _ arguments: repeat each Argument
  ) throws -> Service {
    let creation = registration.creation
    if creation.isHeldByCurrentThread,
      let provisional = registration.shared.provisionalValue(as: Service.self)
    {
      // Re-entered from this singleton's own activation hook: the instance exists; hand it out.
      return provisional
    }
    let instance = try creation.withCreationLock(for: registration.key) {
      if let ready = registration.shared.readyValue(as: Service.self) { return ready }
      // A closed scope makes nothing new: what it would make, nobody would dispose.
      if owner.isClosed { throw owner.closedError(registration.key) }
      let instance = try registration.construct(resolver, repeat each arguments)
      if registration.activation != nil {
        registration.shared.provision(instance)
        do {
          try registration.activate(instance, resolver)
        } catch {
          _ = registration.shared.clear(as: Service.self)
          throw error
        }
      }
      do {
        try owner.adopt(registration.disposal(for: instance))
      } catch {
        _ = registration.shared.clear(as: Service.self)
        throw error
      }
      registration.shared.publish(instance)
      return instance
    }
    registration.releaseIfClosing(owner)
    return instance
  }
}
