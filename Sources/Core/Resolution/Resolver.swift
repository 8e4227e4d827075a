import Synchronization

/// Resolves services on behalf of a factory: the argument every factory closure receives.
///
/// A resolver knows the scope the resolve runs in and how deep the current resolution is, so that
/// cycles are caught and errors carry the whole path. Use it inside the factory to fetch
/// dependencies:
///
/// ```swift
/// registry.register(UserService.self) { resolver in
///   UserService(
///     repository: try resolver.resolve(UserRepository.self),
///     logger: try resolver.resolve(Logger.self, name: LogChannel.audit))
/// }
/// ```
///
/// To resolve later, after the factory returned, ask for a ``Lazy`` or a ``Provider`` instead:
/// they resolve as a fresh, top-level request. A resolver itself cannot outlive the factory call
/// it was passed to: it is non-copyable and only ever lent (`borrowing`), so the compiler rejects
/// storing it or capturing it in an escaping closure.
public struct Resolver: ~Copyable {
  /// How deep resolves may nest within one top-level resolve before Strata stops them; a thread
  /// whose stack runs low stops them sooner.
  @usableFromInline static var maximumDepth: Int { 4096 }

  /// The scope the resolve runs in. Unretained: the resolver never outlives the call that lends it,
  /// and that call's caller holds the scope (or a descendant, which holds its ancestors).
  @usableFromInline let scope: ScopeRef
  /// How many factories enclose this resolver.
  @usableFromInline let depth: Int
  /// The `graph` instances of this top-level resolve, in a variable of the frame that started it,
  /// made on first use and released by that frame.
  @usableFromInline let graph: GraphCacheSlot
  /// The shared registration (singleton, weak, scoped) whose instance this resolve is building,
  /// if any: a shorter-lived scoped dependency reached from it would be captured.
  @usableFromInline let captor: RegistrationRef?
  /// The registry version the top-level resolve began at: every lookup of this resolve, however
  /// deep, reads the snapshots as they were then, so that a batch published meanwhile never
  /// gives one resolve half old and half new dependencies.
  @usableFromInline let version: UInt

  @inlinable @inline(__always)
  init(
    scope: ScopeRef, depth: Int, graph: GraphCacheSlot,
    captor: RegistrationRef?, version: UInt
  ) {
    self.scope = scope
    self.depth = depth
    self.graph = graph
    self.captor = captor
    self.version = version
  }

  /// The resolver handed to the factories this one calls.
  @inlinable @inline(__always)
  var nested: Resolver {
    Resolver(scope: scope, depth: depth &+ 1, graph: graph, captor: captor, version: version)
  }

  /// The scope this resolve runs in: the scope that was asked; for the dependencies of a
  /// singleton or `weak` service, the scope that registered it; for those of a scoped service, the
  /// scope that owns its instance (the nearest `.session` scope for `scoped(.session)`).
  public var currentScope: Scope { scope.scope }
}

extension Scope {
  /// Runs `body` with a top-level resolver for this scope: depth 0 and a fresh `graph` cache.
  ///
  /// With a `captor` (a shared registration whose instance this scope will own), ``Scope/current``
  /// reads this scope while `body` runs, so that the factory cannot reach a shorter-lived scope
  /// through it.
  @inlinable @inline(__always)
  ///
  /// A shared instance's factory also checks the stack here, once for both (see
  /// `Registration.construct`).
  final func withResolver<Result>(
    depth: Int = 0, captor: AnyRegistration? = nil, version: UInt,
    _ body: (borrowing Resolver) throws -> Result
  ) throws -> Result {
    // (Not `guard let captor`: binding it, and capturing it below, would retain it.)
    guard captor != nil else {
      return try withFreshResolver(depth: depth, captor: nil, version: version, body)
    }
    if ThreadContext.isStackNearlyExhausted {
      throw tooDeep(creating: captor, depth: depth)
    }
    let outerOwner = ThreadContext.ambientOwner
    let outerHolder = ThreadContext.ambientHolder
    ThreadContext.ambientOwner = ScopeRef(self)
    ThreadContext.ambientHolder = captor.map(RegistrationRef.init)
    defer {
      ThreadContext.ambientOwner = outerOwner
      ThreadContext.ambientHolder = outerHolder
    }
    return try Scope.withAmbientTaskLocal(self) {
      try withFreshResolver(depth: depth, captor: captor, version: version, body)
    }
  }

  /// ``withResolver(depth:captor:version:_:)`` for a new top-level resolve: at the tree's
  /// current registry version.
  @inlinable @inline(__always)
  final func withResolver<Result>(_ body: (borrowing Resolver) throws -> Result) throws -> Result {
    try withResolver(version: Scope.currentVersion(of: ScopeRef(self)), body)
  }

  @inlinable @inline(__always)
  final func withFreshResolver<Result>(
    depth: Int, captor: AnyRegistration?, version: UInt, _ body: (borrowing Resolver) throws -> Result
  ) rethrows -> Result {
    try GraphCacheSlot.with { graph in
      try body(
        Resolver(
          scope: ScopeRef(self), depth: depth, graph: graph,
          captor: captor.map(RegistrationRef.init), version: version))
    }
  }
}

extension Scope {
  /// ``withResolver(depth:captor:_:)`` with `registration` lent to `body` without a retain: one
  /// closure for the caller's values to be captured in, where two nested ones would copy them
  /// twice.
  @inlinable @inline(__always)
  final func withResolver<Service, each Argument, Result>(
    borrowing registration: RegistrationRef, as type: Registration<Service, repeat each Argument>.Type,
    version: UInt, _ body: (borrowing Resolver, Registration<Service, repeat each Argument>) throws -> Result
  ) rethrows -> Result {
    try registration.withTyped(type) { registration in
      try withResolver(version: version) { try body($0, registration) }
    }
  }
}

extension Scope {
  /// The error for a shared instance whose factory would start too deep in the stack: about
  /// `captor`, or, without one, about this scope.
  @usableFromInline
  final func tooDeep(creating captor: AnyRegistration?, depth: Int) -> ResolutionError {
    guard let captor else { return ResolutionError(.tooDeepInScope(scope: chainDescription, depth: depth)) }
    return ResolutionError.tooDeep(at: captor.key, depth: depth)
  }
}

/// Where a lookup found a registration: the registration and the scope whose registry holds it.
@usableFromInline
struct Found {
  @usableFromInline let registration: RegistrationRef
  @usableFromInline let owner: ScopeRef
  /// The registry version the lookup read at, which the resolve goes on reading at.
  @usableFromInline let version: UInt

  @inlinable @inline(__always)
  init(registration: RegistrationRef, owner: ScopeRef, version: UInt) {
    self.registration = registration
    self.owner = owner
    self.version = version
  }
}

extension Resolver {
  /// The scope whose registry holds `registration`, searched from this resolver's scope upwards.
  /// Used by forwards, which reach their target without a lookup.
  borrowing func ownerHint(of registration: AnyRegistration) -> ScopeRef {
    if registration.lifetime.isShared {
      for (owner, registry) in currentScope.registryChainWithOwners(asOf: version)
      where registry.all(for: registration.key).contains(where: { $0 === registration }) {
        return ScopeRef(owner)
      }
    }
    return scope
  }
}
