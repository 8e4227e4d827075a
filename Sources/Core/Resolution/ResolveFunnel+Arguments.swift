/// The funnel's entries for the resolves with one to three runtime arguments.
///
/// The same steps as ``Scope/resolve(_:as:arguments:)`` and ``Resolver/resolve(_:as:arguments:)``,
/// but the arguments stay with the public overload that received them: it passes `invoke`, a
/// closure that reads them where they are, instead of a pack that every level would copy (see
/// ``Registration/instance(_:calling:otherwise:)``). Only the argument types travel here.
extension Scope {
  /// The top-level entry: a resolve with arguments from outside any factory. `invoke` gets the
  /// registration, a resolver one level down, and the scope whose registry holds the registration.
  @inlinable @inline(__always)
  final func resolve<Service, Name, each Argument>(
    _ lookup: Lookup<Name>, as _: Service.Type, argumentTypes: repeat (each Argument).Type,
    invoke: (Registration<Service, repeat each Argument>, borrowing Resolver, ScopeRef) throws -> Service
  ) throws -> Service {
    let start = ScopeRef(self)
    try Scope.checkOpen(start, for: lookup, as: Service.self, arguments: repeat each argumentTypes)
    let version = Scope.currentVersion(of: start)
    guard let found = Scope.find(lookup, from: start, version: version, afterPublishes: false) else {
      throw missing(lookup.key(Service.self, arguments: repeat each argumentTypes))
    }
    return try withResolver(
      borrowing: found.registration, as: Registration<Service, repeat each Argument>.self,
      version: found.version
    ) { resolver, registration in
      try invoke(registration, resolver.nested, found.owner)
    }
  }
}

extension Resolver {
  /// The nested entry: a resolve with arguments from inside a factory, at this resolver's
  /// registry version.
  @inlinable @inline(__always)
  borrowing func resolve<Service, Name, each Argument>(
    _ lookup: Lookup<Name>, as _: Service.Type, argumentTypes: repeat (each Argument).Type,
    invoke: (Registration<Service, repeat each Argument>, borrowing Resolver, ScopeRef) throws -> Service
  ) throws -> Service {
    try Scope.checkOpen(scope, for: lookup, as: Service.self, arguments: repeat each argumentTypes)
    guard let found = Scope.find(lookup, from: scope, version: version, afterPublishes: true) else {
      throw missing(lookup.key(Service.self, arguments: repeat each argumentTypes))
    }
    return try found.registration.withTyped(Registration<Service, repeat each Argument>.self) {
      try invoke($0, nested, found.owner)
    }
  }
}

/// What the resolves with one, two or three runtime arguments run once the registration is found:
/// the arguments arrive as plain parameters (which a call lends without copying) and reach the
/// factory through a closure; only a lifetime other than `transient` gets them as a pack.
@usableFromInline
enum HeldArguments {
  @inlinable @inline(__always)
  static func instance<Service, Argument1>(
    of registration: Registration<Service, Argument1>, _ resolver: borrowing Resolver, owner: ScopeRef,
    _ argument1: Argument1
  ) throws -> Service {
    try registration.instance(resolver) {
      let factory = registration.factory
      return try factory($0, argument1)
    } otherwise: {
      try registration.instance($0, owner: owner, argument1)
    }
  }

  @inlinable @inline(__always)
  static func instance<Service, Argument1, Argument2>(
    of registration: Registration<Service, Argument1, Argument2>, _ resolver: borrowing Resolver,
    owner: ScopeRef, _ argument1: Argument1, _ argument2: Argument2
  ) throws -> Service {
    try registration.instance(resolver) {
      let factory = registration.factory
      return try factory($0, argument1, argument2)
    } otherwise: {
      try registration.instance($0, owner: owner, argument1, argument2)
    }
  }

  @inlinable @inline(__always)
  static func instance<Service, Argument1, Argument2, Argument3>(
    of registration: Registration<Service, Argument1, Argument2, Argument3>, _ resolver: borrowing Resolver,
    owner: ScopeRef, _ argument1: Argument1, _ argument2: Argument2, _ argument3: Argument3
  ) throws -> Service {
    try registration.instance(resolver) {
      let factory = registration.factory
      return try factory($0, argument1, argument2, argument3)
    } otherwise: {
      try registration.instance($0, owner: owner, argument1, argument2, argument3)
    }
  }
}
