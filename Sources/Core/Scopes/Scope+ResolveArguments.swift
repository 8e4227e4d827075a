// The resolves with one, two or three runtime arguments. They behave exactly as
// `resolve(_:arguments:)` with a pack, which the compiler chooses for four or more: same keys,
// same errors. They exist for speed: the arguments reach the factory without being copied on
// the way (see `HeldArguments`).
extension Scope {
  /// Resolves a service registered with one runtime argument.
  ///
  /// ```swift
  /// registry.register(Greeting.self) { (_, name: String) in Greeting(name) }
  /// let greeting = try container.resolve(Greeting.self, arguments: "Ada")
  /// ```
  ///
  /// The same resolve as the variadic `resolve(_:arguments:)`, which takes any number of
  /// arguments; with one to three the compiler picks these overloads, which hand the arguments
  /// to the factory without copying them on the way. The last parameter is never passed: its
  /// default keeps each argument's static type as the key's (see ``StaticArgumentTypes``).
  ///
  /// - Throws: ``ResolutionError``; a mismatch of argument types names both lists.
  @inlinable
  public final func resolve<Service, Argument1>(
    _ type: Service.Type = Service.self, arguments argument1: Argument1,
    _ argumentTypes: StaticArgumentTypes<Argument1> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, arguments: Argument1.self), as: Service.self, argumentTypes: Argument1.self
    ) {
      try HeldArguments.instance(of: $0, $1, owner: $2, argument1)
    }
  }

  /// Resolves a service registered with two runtime arguments.
  ///
  /// ```swift
  /// let greeting = try container.resolve(Greeting.self, arguments: "Ada", 3)
  /// ```
  ///
  /// - Throws: ``ResolutionError``; a mismatch of argument types names both lists.
  @inlinable
  public final func resolve<Service, Argument1, Argument2>(
    _ type: Service.Type = Service.self, arguments argument1: Argument1, _ argument2: Argument2,
    _ argumentTypes: StaticArgumentTypes<(Argument1, Argument2)> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, arguments: Argument1.self, Argument2.self), as: Service.self,
      argumentTypes: Argument1.self, Argument2.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1, argument2) }
  }

  /// Resolves a service registered with three runtime arguments.
  ///
  /// ```swift
  /// let greeting = try container.resolve(Greeting.self, arguments: "Ada", 3, Tone.formal)
  /// ```
  ///
  /// - Throws: ``ResolutionError``; a mismatch of argument types names both lists.
  @inlinable
  public final func resolve<Service, Argument1, Argument2, Argument3>(
    _ type: Service.Type = Service.self, arguments argument1: Argument1, _ argument2: Argument2,
    _ argument3: Argument3, _ argumentTypes: StaticArgumentTypes<(Argument1, Argument2, Argument3)> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, arguments: Argument1.self, Argument2.self, Argument3.self), as: Service.self,
      argumentTypes: Argument1.self, Argument2.self, Argument3.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1, argument2, argument3) }
  }

  /// Resolves a named service registered with one runtime argument.
  ///
  /// ```swift
  /// let formal = try container.resolve(Greeting.self, name: Tone.formal, arguments: "Ada")
  /// ```
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:arguments:_:)`` does.
  @inlinable
  public final func resolve<Service, Name: Hashable & Sendable, Argument1>(
    _ type: Service.Type = Service.self, name: Name?, arguments argument1: Argument1,
    _ argumentTypes: StaticArgumentTypes<Argument1> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, name: name, arguments: Argument1.self), as: Service.self,
      argumentTypes: Argument1.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1) }
  }

  /// Resolves a named service registered with two runtime arguments.
  ///
  /// ```swift
  /// let formal = try container.resolve(Greeting.self, name: Tone.formal, arguments: "Ada", 3)
  /// ```
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:arguments:_:)`` does.
  @inlinable
  public final func resolve<Service, Name: Hashable & Sendable, Argument1, Argument2>(
    _ type: Service.Type = Service.self, name: Name?, arguments argument1: Argument1, _ argument2: Argument2,
    _ argumentTypes: StaticArgumentTypes<(Argument1, Argument2)> = .init()
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, name: name, arguments: Argument1.self, Argument2.self), as: Service.self,
      argumentTypes: Argument1.self, Argument2.self
    ) { try HeldArguments.instance(of: $0, $1, owner: $2, argument1, argument2) }
  }

  /// Resolves a named service registered with three runtime arguments.
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:arguments:_:)`` does.
  @inlinable
  public final func resolve<Service, Name: Hashable & Sendable, Argument1, Argument2, Argument3>(
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
