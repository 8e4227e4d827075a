import Synchronization

/// The `transient` lifetime: a new instance on every resolve, owned by whoever asked.
@usableFromInline
enum TransientStorage: LifetimeStorage {
  @usableFromInline static var home: InstanceHome { .nowhere }
  @usableFromInline static var disposer: Disposer { .caller }

  @inlinable @inline(__always)
  static func instance<Service, each Argument>(
    of registration: Registration<Service, repeat each Argument>, _ resolver: borrowing Resolver,
    owner: ScopeRef, _ arguments: repeat each Argument
  ) throws -> Service {
    try registration.make(resolver, repeat each arguments)
  }
}

// Making an instance: what a `transient` registration does on every resolve, and what every other
// lifetime does once, inside its own bookkeeping (see the other files of this folder).
extension Registration {
  /// Runs the factory and the activation hook, adding this registration to any error's path.
  @inlinable @inline(__always)
  final func make(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    let instance = try construct(resolver, repeat each arguments)
    if activation != nil { try activate(instance, resolver) }
    return instance
  }

  @inlinable @inline(__always)
  final func construct(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    try construct(resolver) { try factory($0, repeat each arguments) }
  }

  /// Runs `factory` (which calls this registration's factory with its arguments) after checking
  /// the depth, adding this registration to any error's path.
  @inlinable @inline(__always)
  final func construct(
    _ resolver: borrowing Resolver, calling factory: (borrowing Resolver) throws -> Service
  ) throws -> Service {
    // Every level checks the depth limit and that the stack has room left (a frame-address
    // compare against a thread-local floor): checked only every few levels, factories with large
    // frames ran past the end of the stack between two checks.
    if resolver.depth > Resolver.maximumDepth || ThreadContext.isStackNearlyExhausted {
      try stopTooDeep(resolver.depth)
    }
    do {
      return try factory(resolver)
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
      if let disposal = Disposal.of(instance, key: key, registration: identity) {
        failure.disposalErrors += Scope.disposeNow(disposal)
      }
      throw failure
    }
  }
}

extension Registration {
  /// ``instance(_:owner:_:)`` for a resolve that holds its runtime arguments itself (the resolves
  /// with one to three arguments): `factory` calls the factory with them, and `otherwise` hands
  /// them as a pack to ``instance(_:owner:_:)`` for any lifetime but `transient`.
  ///
  /// A pack passed from one function to the next is copied at every level (a retain and a release
  /// of each reference-counted argument: five of each in a resolve with a `String`), while a
  /// non-escaping closure reads the caller's arguments where they are.
  @inlinable @inline(__always)
  final func instance(
    _ resolver: borrowing Resolver, calling factory: (borrowing Resolver) throws -> Service,
    otherwise: (borrowing Resolver) throws -> Service
  ) throws -> Service {
    guard kind == .transient else { return try otherwise(resolver) }
    let instance = try construct(resolver, calling: factory)
    if activation != nil { try activate(instance, resolver) }
    return instance
  }
}
