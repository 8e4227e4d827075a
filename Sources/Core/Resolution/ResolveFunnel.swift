/// The one path every `resolve` takes.
///
/// The eight public `resolve` overloads (four on ``Scope``, four on ``Resolver``: with or without
/// a name, with or without runtime arguments) only build a ``Lookup`` and call one of two entries
/// below, which share every step:
///
/// 1. ``Scope/checkOpen(_:for:as:arguments:)`` — nothing is resolved from a scope that is closing,
///    or whose ancestor is: the top-level resolve's scope, or the factory's resolver's.
/// 2. ``Scope/find(_:from:version:afterPublishes:)`` — the only registry lookup: from a scope up to the root, as
///    published at the resolve's registry version.
/// 3. ``Found/instance(_:as:arguments:)`` — the registration, typed as its key says, makes or
///    finds the instance its lifetime calls for.
/// 4. On a miss, ``Resolver/resolveUnregistered(_:as:arguments:)`` — an implicit ``Lazy`` or
///    ``Provider`` (``Resolver/resolveImplicit(_:)``), or the `notRegistered` error.
///
/// The top-level entry (``Scope/resolve(_:as:arguments:)``) adds what only a resolve from outside
/// a factory needs: the registry version is the tree's newest, a shared instance that exists
/// already is returned before any resolver is set up, and a resolver is made.
/// The nested entry (``Resolver/resolve(_:as:arguments:)``) reads at its resolver's version.
///
/// Both are `@inline(__always)`: specialised into each public overload, a name that is `nil` and
/// an empty argument pack fold away, so the unnamed resolve without arguments costs what it did
/// when it was written by hand.
@usableFromInline @frozen
struct Lookup<Name: Hashable & Sendable> {
  /// `ObjectIdentifier` bits of the service type.
  @usableFromInline let service: UInt
  /// `ObjectIdentifier` bits of the argument list type (see ``argumentListType(_:)``).
  @usableFromInline let arguments: UInt
  /// The name, if the key has one.
  @usableFromInline let name: Name?

  @inlinable @inline(__always)
  init<Service, each Argument>(_: Service.Type, name: Name?, arguments: repeat (each Argument).Type) {
    service = UInt(bitPattern: ObjectIdentifier(Service.self))
    self.arguments = argumentListBits(repeat (each Argument).self)
    self.name = name
  }

  /// The key as errors and tools show it.
  @usableFromInline
  func key<Service, each Argument>(_: Service.Type, arguments: repeat (each Argument).Type) -> ServiceKey {
    ServiceKey(Service.self, arguments: repeat each arguments, name: name.map { ServiceName($0) })
  }
}

extension Lookup where Name == Never {
  /// An unnamed lookup.
  @inlinable @inline(__always)
  init<Service, each Argument>(_: Service.Type, arguments: repeat (each Argument).Type) {
    self.init(Service.self, name: nil, arguments: repeat each arguments)
  }
}

extension Registry {
  /// The latest registration for `lookup` in this snapshot.
  @inlinable @inline(__always)
  func lookup<Name>(_ lookup: Lookup<Name>) -> RegistrationRef? {
    guard let name = lookup.name else {
      return self.lookup(service: lookup.service, arguments: lookup.arguments)
    }
    return self.lookup(service: lookup.service, arguments: lookup.arguments, name: name)
  }
}

extension Scope {
  /// The nearest registration for `lookup`, from `start` up to the root, as published at registry
  /// `version` (see ``registry(asOf:)``).
  ///
  /// - Parameter afterPublishes: Whether something may have been published since the resolve
  ///   read `version`: `false` for a top-level resolve, which read it just now; `true` for a
  ///   factory's resolve, whose factory (or an earlier one of the resolve) may have registered.
  @inlinable @inline(__always)
  static func find<Name>(
    _ lookup: Lookup<Name>, from start: ScopeRef, version: UInt, afterPublishes: Bool
  ) -> Found? {
    // The scope itself first: for the container (and any scope with registrations) that is the
    // whole lookup, without touching the skip cache.
    let own = start.with { $0.registry(asOf: version) }
    if let own, let registration = own.with({ $0.lookup(lookup) }) {
      return Found(registration: registration, owner: start, version: version)
    }
    // The skip cache passes over scopes that had no registrations at the resolve's version; but
    // a factory of this resolve may have published since, in such a scope, registrations that the
    // resolve sees (see ``publishedRegistry(asOf:)``), and that shadow a scope further up.
    // Nothing was published since the resolve began unless the tree's version moved on.
    if afterPublishes, Scope.currentGeneration(of: start) != version {
      guard let parent = start.parent else { return nil }
      return findInEveryScope(lookup, from: parent, version: version)
    }
    // A scope without registrations (a request) caches the nearest one above it itself: its own
    // link is read, on a line the lookup has just loaded, rather than its parent's, one dependent
    // load further. (If `start` has registrations newer than the resolve, the link names `start`,
    // whose snapshot as of `version` was just found missing, and the walk goes on to its parent.)
    var next: ScopeRef?
    if own == nil {
      next = withRegistry(from: start, generation: version)
    } else {
      guard let parent = start.parent else { return nil }
      next = withRegistry(from: parent, generation: version)
    }
    while let current = next {
      if let registry = current.with({ $0.registry(asOf: version) }),
        let registration = registry.with({ $0.lookup(lookup) })
      {
        return Found(registration: registration, owner: current, version: version)
      }
      guard let parent = current.parent else { break }
      next = withRegistry(from: parent, generation: version)
    }
    return nil
  }

  /// ``find(_:from:version:afterPublishes:)`` once something was published since the resolve began, walking
  /// every scope from `start` up rather than the skip cache: a scope that had no registrations
  /// when the resolve began is skipped there, but a factory of this resolve may have published its
  /// first batch in it since, and sees its own registrations (see ``publishedRegistry(asOf:)``),
  /// which may shadow a registration further up. Only resolves that began before a publish
  /// anywhere in the tree and look up after it pay for the walk.
  @usableFromInline @inline(never)
  static func findInEveryScope<Name>(_ lookup: Lookup<Name>, from start: ScopeRef, version: UInt) -> Found? {
    var next: ScopeRef? = start
    while let current = next {
      if let registry = current.with({ $0.registry(asOf: version) }),
        let registration = registry.with({ $0.lookup(lookup) })
      {
        return Found(registration: registration, owner: current, version: version)
      }
      next = current.parent
    }
    return nil
  }

  /// The top-level entry of the funnel: a resolve from outside any factory.
  @inlinable @inline(__always)
  final func resolve<Service, Name, each Argument>(
    _ lookup: Lookup<Name>, as _: Service.Type, arguments: repeat each Argument
  ) throws -> Service {
    let start = ScopeRef(self)
    try Scope.checkOpen(start, for: lookup, as: Service.self, arguments: repeat (each Argument).self)
    let version = Scope.currentVersion(of: start)
    guard let found = Scope.find(lookup, from: start, version: version, afterPublishes: false) else {
      return try resolveUnregistered(lookup, as: Service.self, arguments: repeat (each Argument).self)
    }
    guard hasArguments(repeat (each Argument).self) else {
      // A transient is made here, without the call to `make`; a created singleton or an
      // existing scoped instance needs no resolver at all.
      if found.registration.with({ $0.kind == .transient }) {
        return try withResolver(version: found.version) { try found.instance($0, as: Service.self) }
      }
      if let existing = Registration<Service>.existingInstance(of: found, from: start) { return existing }
      return try make(found, as: Service.self)
    }
    // Inlined here rather than passed to `make`: every call boundary and every closure that takes
    // the arguments as a pack copies them (a retain and release per reference-counted argument).
    // (Shared lifetimes take no arguments, so there is no existing instance to look for.)
    return try withResolver(
      borrowing: found.registration, as: Registration<Service, repeat each Argument>.self,
      version: found.version
    ) { resolver, registration in
      try registration.instance(resolver.nested, owner: found.owner, repeat each arguments)
    }
  }

  /// The error for resolving `lookup` from this closed scope: the key with its name and argument
  /// types. Out of line, and not inlinable, so that the caller's module cannot see that it ignores
  /// `marks` (see ``SpecializationMarks``).
  @usableFromInline @inline(never)
  final func closedError<Service, Name, each Argument>(
    _ lookup: Lookup<Name>, as _: Service.Type, arguments: repeat (each Argument).Type, marks _: UInt
  ) -> ResolutionError {
    closedError(lookup.key(Service.self, arguments: repeat each arguments))
  }

  /// The rest of a top-level resolve without arguments once a shared registration is found and has
  /// no instance yet: runs its lifetime with a fresh resolver. Out of line, so that the frame of its
  /// bookkeeping is set up only when an instance is made. (A transient is made in the funnel itself:
  /// this call cost `transient` about 0.8 of its 32 ns.)
  @inlinable @inline(never)
  final func make<Service>(_ found: Found, as _: Service.Type) throws -> Service {
    try withResolver(version: found.version) { try found.instance($0, as: Service.self) }
  }

  /// The rest of a top-level resolve that found no registration, decided where the name and the
  /// arguments are known statically (see ``Resolver/resolveUnregistered(_:as:arguments:)``).
  @inlinable @inline(__always)
  final func resolveUnregistered<Service, Name, each Argument>(
    _ lookup: Lookup<Name>, as _: Service.Type, arguments: repeat (each Argument).Type
  ) throws -> Service {
    if lookup.name == nil && !hasArguments(repeat (each Argument).self) {
      return try resolveImplicit(Service.self)
    }
    throw missing(lookup.key(Service.self, arguments: repeat each arguments))
  }

  /// ``Resolver/resolveImplicit(_:)`` from the top level. Out of line.
  @inlinable @inline(never)
  final func resolveImplicit<Service>(_: Service.Type) throws -> Service {
    try withResolver { try $0.resolveImplicit(Service.self) }
  }

  /// The `notRegistered` error for `key`, seen from this scope.
  @usableFromInline
  final func missing(_ key: ServiceKey) -> ResolutionError {
    ResolutionError(.notRegistered(key, visible: registryChain()))
  }
}

extension Resolver {
  /// The nested entry of the funnel: a resolve from inside a factory, at this resolver's
  /// registry version.
  @inlinable @inline(__always)
  borrowing func resolve<Service, Name, each Argument>(
    _ lookup: Lookup<Name>, as _: Service.Type, arguments: repeat each Argument
  ) throws -> Service {
    try Scope.checkOpen(scope, for: lookup, as: Service.self, arguments: repeat (each Argument).self)
    guard let found = Scope.find(lookup, from: scope, version: version, afterPublishes: true) else {
      return try resolveUnregistered(lookup, as: Service.self, arguments: repeat (each Argument).self)
    }
    return try found.instance(self, as: Service.self, arguments: repeat each arguments)
  }

  /// A resolve that found no registration: a ``Lazy`` or ``Provider`` the container builds by
  /// itself (unnamed, without arguments), or the `notRegistered` error. Decided here, where the
  /// name and the arguments are known statically; what follows is out of line.
  @inlinable @inline(__always)
  borrowing func resolveUnregistered<Service, Name, each Argument>(
    _ lookup: Lookup<Name>, as _: Service.Type, arguments: repeat (each Argument).Type
  ) throws -> Service {
    if lookup.name == nil && !hasArguments(repeat (each Argument).self) {
      return try resolveImplicit(Service.self)
    }
    throw missing(lookup.key(Service.self, arguments: repeat each arguments))
  }

  /// An unnamed resolve without arguments that found no registration: a ``Lazy`` or ``Provider``
  /// the container builds by itself, or a `notRegistered` error.
  @inlinable @inline(never)
  borrowing func resolveImplicit<Service>(_ type: Service.Type) throws -> Service {
    guard let implicit = Service.self as? any ImplicitDependency.Type else {
      throw missing(ServiceKey(Service.self, name: nil))
    }
    // No `as? Service`: unspecialised, its `Service?` looked up `Optional<Service>`'s metadata
    // in the runtime (about 450 instructions) for every `Lazy` or `Provider` parameter resolved.
    return try implicit.make(as: Service.self, in: currentScope, holder: deferredHolder)
  }
}

extension Found {
  /// The instance the registration's lifetime calls for, made or found with `resolver`.
  @inlinable @inline(__always)
  func instance<Service, each Argument>(
    _ resolver: borrowing Resolver, as _: Service.Type, arguments: repeat each Argument
  ) throws -> Service {
    try registration.withTyped(Registration<Service, repeat each Argument>.self) {
      try $0.instance(resolver.nested, owner: owner, repeat each arguments)
    }
  }
}
