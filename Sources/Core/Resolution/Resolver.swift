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
/// To resolve later, after the factory returned, ask for a ``Lazy`` or a ``Provider`` instead of
/// keeping the resolver: they resolve as a fresh, top-level request.
public struct Resolver {
  /// How deep resolves may nest before Strata reports a cycle.
  @usableFromInline static var maximumDepth: Int { 128 }

  /// The scope the resolve runs in.
  @usableFromInline let scope: Scope
  /// How many factories enclose this resolver.
  @usableFromInline let depth: Int
  /// Instances of `graph` registrations made so far in this top-level resolve; `nil` if the scope
  /// tree has no `graph` registration.
  @usableFromInline let graph: GraphCache?

  @inlinable @inline(__always)
  init(scope: Scope, depth: Int, graph: GraphCache?) {
    self.scope = scope
    self.depth = depth
    self.graph = graph
  }

  /// A top-level resolver for `scope`.
  @inlinable @inline(__always)
  init(topLevelIn scope: Scope) {
    self.init(
      scope: scope, depth: 0, graph: scope.tree.usesGraph.load(ordering: .relaxed) ? GraphCache() : nil)
  }

  /// A resolver for a shared instance owned by `owner`, which shares no `graph` instances with the
  /// resolve that asked for it.
  init(owner: Scope, depth: Int) {
    self.init(
      scope: owner, depth: depth,
      graph: owner.tree.usesGraph.load(ordering: .relaxed) ? GraphCache() : nil)
  }

  /// The resolver handed to the factories this one calls.
  @inlinable @inline(__always)
  var nested: Resolver { Resolver(scope: scope, depth: depth &+ 1, graph: graph) }

  /// The scope this resolve runs in: the scope that was asked, or, for a singleton's dependencies,
  /// the scope that registered the singleton.
  public var currentScope: Scope { scope }
}

/// Where a lookup found a registration: the registration and the scope whose registry holds it.
@usableFromInline
struct Found {
  @usableFromInline let registration: Unmanaged<AnyRegistration>
  @usableFromInline let owner: Unmanaged<Scope>

  @inlinable @inline(__always)
  init(registration: Unmanaged<AnyRegistration>, owner: Unmanaged<Scope>) {
    self.registration = registration
    self.owner = owner
  }
}

extension Resolver {
  /// The scope whose registry holds `registration`, searched from this resolver's scope upwards.
  /// Used by forwards, which reach their target without a lookup.
  func ownerHint(of registration: AnyRegistration) -> Unmanaged<Scope> {
    if registration.lifetime.isShared {
      for (owner, registry) in scope.registryChainWithOwners()
      where registry.all(for: registration.key).contains(where: { $0 === registration }) {
        return Unmanaged.passUnretained(owner)
      }
    }
    return Unmanaged.passUnretained(scope)
  }
}
