// The resolves with one, two or three runtime arguments from inside a factory: the overloads of
// Scope+ResolveArguments.swift, at the resolver's registry version.
extension Resolver {
  /// Resolves a service registered with one runtime argument, from inside a factory.
  ///
  /// ```swift
  /// registry.register(Greeting.self) { (_, name: String) in Greeting(name) }
  /// let greeting = try resolver.resolve(Greeting.self, arguments: "Ada")
  /// ```
  ///
  /// As ``Scope/resolve(_:arguments:_:)``: the arguments reach the factory without
  /// being copied; four or more take the variadic overload.
  ///
  /// - Throws: ``ResolutionError``; a mismatch of argument types names both lists.
  @inlinable
  public borrowing func resolve<Service, Argument1>(
    _ type: Service.Type = Service.self, arguments argument1: Argument1,
    _ argumentTypes: StaticArgumentTypes<Argument1> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, arguments: Argument1.self), as: Service.self, argumentTypes: Argument1.self
    ) {
      try HeldArguments.instance(of: $0, $1, owner: $2, argument1)
    }
  }

  /// Resolves a service registered with two runtime arguments, from inside a factory, as
  /// ``Scope/resolve(_:arguments:_:_:)`` does.
  ///
  /// - Throws: ``ResolutionError``; a mismatch of argument types names both lists.
  @inlinable
  public borrowing func resolve<Service, Argument1, Argument2>(
    _ type: Service.Type = Service.self, arguments argument1: Argument1, _ argument2: Argument2,
    _ argumentTypes: StaticArgumentTypes<(Argument1, Argument2)> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, arguments: Argument1.self, Argument2.self), as: Service.self,
      argumentTypes: Argument1.self, Argument2.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1, argument2) }
  }

  /// Resolves a service registered with three runtime arguments, from inside a factory, as
  /// ``Scope/resolve(_:arguments:_:_:_:)`` does.
  ///
  /// - Throws: ``ResolutionError``; a mismatch of argument types names both lists.
  @inlinable
  public borrowing func resolve<Service, Argument1, Argument2, Argument3>(
    _ type: Service.Type = Service.self, arguments argument1: Argument1, _ argument2: Argument2,
    _ argument3: Argument3, _ argumentTypes: StaticArgumentTypes<(Argument1, Argument2, Argument3)> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, arguments: Argument1.self, Argument2.self, Argument3.self), as: Service.self,
      argumentTypes: Argument1.self, Argument2.self, Argument3.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1, argument2, argument3) }
  }

  /// Resolves a named service registered with one runtime argument, from inside a factory, as
  /// ``Scope/resolve(_:name:arguments:_:)`` does.
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:arguments:_:)`` does.
  @inlinable
  public borrowing func resolve<Service, Name: Hashable & Sendable, Argument1>(
    _ type: Service.Type = Service.self, name: Name?, arguments argument1: Argument1,
    _ argumentTypes: StaticArgumentTypes<Argument1> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, name: name, arguments: Argument1.self), as: Service.self,
      argumentTypes: Argument1.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1) }
  }

  /// Resolves a named service registered with two runtime arguments, from inside a factory, as
  /// ``Scope/resolve(_:name:arguments:_:_:)`` does.
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:arguments:_:)`` does.
  @inlinable
  public borrowing func resolve<Service, Name: Hashable & Sendable, Argument1, Argument2>(
    _ type: Service.Type = Service.self, name: Name?, arguments argument1: Argument1, _ argument2: Argument2,
    _ argumentTypes: StaticArgumentTypes<(Argument1, Argument2)> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, name: name, arguments: Argument1.self, Argument2.self), as: Service.self,
      argumentTypes: Argument1.self, Argument2.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1, argument2) }
  }

  /// Resolves a named service registered with three runtime arguments, from inside a factory, as
  /// ``Scope/resolve(_:name:arguments:_:_:_:)`` does.
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:arguments:_:)`` does.
  @inlinable
  public borrowing func resolve<Service, Name: Hashable & Sendable, Argument1, Argument2, Argument3>(
    _ type: Service.Type = Service.self, name: Name?, arguments argument1: Argument1,
    _ argument2: Argument2, _ argument3: Argument3,
    _ argumentTypes: StaticArgumentTypes<(Argument1, Argument2, Argument3)> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, name: name, arguments: Argument1.self, Argument2.self, Argument3.self),
      as: Service.self, argumentTypes: Argument1.self, Argument2.self, Argument3.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1, argument2, argument3) }
  }
}
