extension Resolver {
  /// Resolves the service registered for `type`.
  ///
  /// ```swift
  /// let repository = try resolver.resolve(UserRepository.self)
  /// ```
  ///
  /// - Parameter type: The service type, exactly as it was registered (the protocol, if a protocol
  ///   was registered).
  /// - Returns: The instance the registration's lifetime calls for.
  /// - Throws: ``ResolutionError`` when nothing is registered, a cycle is found, a factory throws,
  ///   or the scope is closed.
  @inlinable
  public borrowing func resolve<Service>(_ type: Service.Type = Service.self) throws -> Service {
    try resolve(Lookup(Service.self), as: Service.self)
  }

  /// Resolves the service registered for `type` under `name`.
  ///
  /// ```swift
  /// enum Database: Hashable, Sendable { case primary, replica }
  /// let replica = try resolver.resolve(Connection.self, name: Database.replica)
  /// ```
  ///
  /// - Parameters:
  ///   - type: The service type.
  ///   - name: The name it was registered with; names of different types never match.
  /// - Throws: ``ResolutionError``, as ``resolve(_:)`` does.
  @inlinable
  public borrowing func resolve<Service, Name: Hashable & Sendable>(
    _ type: Service.Type = Service.self, name: Name?
  ) throws -> Service {
    try resolve(Lookup(Service.self, name: name), as: Service.self)
  }

  /// Resolves a service registered with runtime arguments, passing `arguments` to its factory.
  ///
  /// ```swift
  /// registry.register(Greeting.self) { (_, name: String, times: Int) in Greeting(name, times) }
  /// let greeting = try resolver.resolve(Greeting.self, arguments: "Ada", 3)
  /// ```
  ///
  /// The argument types are part of the key: `(String, Int)` finds only a registration whose
  /// factory takes exactly a `String` and an `Int`. For one to three arguments the compiler picks
  /// the overloads that take them one by one, as on ``Scope``: the same resolve, without copies.
  ///
  /// - Throws: ``ResolutionError``, naming the registered argument types if they differ.
  @inlinable
  public borrowing func resolve<Service, each Argument>(
    _ type: Service.Type = Service.self, arguments: repeat each Argument
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, arguments: repeat (each Argument).self), as: Service.self,
      arguments: repeat each arguments)
  }

  /// Resolves a named service registered with runtime arguments.
  ///
  /// ```swift
  /// let formal = try resolver.resolve(Greeting.self, name: Tone.formal, arguments: "Ada", 3)
  /// ```
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:arguments:)`` does.
  @inlinable
  public borrowing func resolve<Service, Name: Hashable & Sendable, each Argument>(
    _ type: Service.Type = Service.self, name: Name?, arguments: repeat each Argument
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, name: name, arguments: repeat (each Argument).self), as: Service.self,
      arguments: repeat each arguments)
  }

  /// Resolves `type` if anything is registered for it, and returns `nil` if nothing is.
  ///
  /// ```swift
  /// let analytics = try resolver.resolveIfRegistered(Analytics.self) ?? NoAnalytics()
  /// ```
  ///
  /// - Throws: ``ResolutionError`` if a registration exists but resolving it fails: a missing
  ///   dependency further down is still an error, not `nil`.
  public borrowing func resolveIfRegistered<Service>(_ type: Service.Type = Service.self) throws -> Service? {
    // A `Lazy<T>` or `Provider<T>` is there when `T` is (or when it is registered itself).
    var registered = isRegistered(ServiceKey(Service.self, name: nil))
    if !registered, let implicit = Service.self as? any ImplicitDependency.Type {
      registered = isRegistered(implicit.targetKey)
    }
    guard registered else { return nil }
    return try resolve(Service.self)
  }

  /// Resolves `type` under `name` if it is registered, and returns `nil` if it is not.
  ///
  /// - Throws: ``ResolutionError`` if a registration exists but resolving it fails.
  public borrowing func resolveIfRegistered<Service, Name: Hashable & Sendable>(
    _ type: Service.Type = Service.self, name: Name?
  ) throws -> Service? {
    guard let name else { return try resolveIfRegistered(type) }
    guard isRegistered(ServiceKey(Service.self, name: ServiceName(name))) else { return nil }
    return try resolve(Service.self, name: name)
  }

  /// Resolves every registration of `type`, in the order documented below.
  ///
  /// ```swift
  /// registry.register(HealthCheck.self) { _ in DatabaseCheck() }
  /// registry.register(HealthCheck.self) { _ in CacheCheck() }
  /// let checks = try resolver.resolveAll(HealthCheck.self)   // [DatabaseCheck, CacheCheck]
  /// ```
  ///
  /// The order is the scope chain from the root down to the current scope, and within each scope
  /// the order of registration. Only unnamed registrations without arguments are included; use
  /// ``resolveAll(_:name:)`` for a name. `resolve(_:)` returns the last element of this list.
  ///
  /// - Returns: One instance per registration, each with its own lifetime; empty if none.
  /// - Throws: ``ResolutionError`` if any of them fails.
  public borrowing func resolveAll<Service>(_ type: Service.Type = Service.self) throws -> [Service] {
    try resolveAll(ServiceKey(Service.self, name: nil), as: Service.self)
  }

  /// Resolves every registration of `type` under `name`, in the order of ``resolveAll(_:)``.
  ///
  /// - Throws: ``ResolutionError`` if any of them fails.
  public borrowing func resolveAll<Service, Name: Hashable & Sendable>(
    _ type: Service.Type = Service.self, name: Name?
  ) throws -> [Service] {
    guard let name else { return try resolveAll(type) }
    return try resolveAll(ServiceKey(Service.self, name: ServiceName(name)), as: Service.self)
  }

  /// A ``Lazy`` that resolves `type` from this resolver's scope on first use.
  ///
  /// ```swift
  /// registry.register(Parent.self) { resolver in Parent(child: resolver.lazy(Child.self)) }
  /// ```
  @inlinable
  public borrowing func lazy<Service>(_ type: Service.Type = Service.self) -> Lazy<Service> {
    Lazy(scope: currentScope, holder: deferredHolder, key: ServiceKey(Service.self, name: nil)) {
      try $0.resolve(Service.self)
    }
  }

  /// A ``Provider`` that resolves `type` from this resolver's scope each time it is called.
  ///
  /// ```swift
  /// registry.register(Worker.self) { resolver in Worker(makeJob: resolver.provider(Job.self)) }
  /// ```
  @inlinable
  public borrowing func provider<Service>(_ type: Service.Type = Service.self) -> Provider<Service> {
    Provider(scope: currentScope, holder: deferredHolder) { try $0.resolve(Service.self) }
  }

  /// The shared registration a ``Lazy`` or ``Provider`` made now is made for: the instance this
  /// resolve builds, or the one whose factory made this scope current.
  @usableFromInline
  var deferredHolder: DeferredHolding {
    DeferredHolding.link(to: captor ?? ThreadContext.ambientHolder(resolvingIn: scope))
  }
}

extension Resolver {
  /// The error for a key that no scope in the chain registers. Cheap: the hint is worked out only
  /// when somebody reads it.
  @usableFromInline
  borrowing func missing(_ key: ServiceKey) -> ResolutionError {
    currentScope.missing(key)
  }

  borrowing func isRegistered(_ key: ServiceKey) -> Bool {
    currentScope.registryChainWithOwners(asOf: version).contains { $0.1.latest(for: key) != nil }
  }

  borrowing func resolveAll<Service>(_ key: ServiceKey, as type: Service.Type) throws -> [Service] {
    // As every resolve: nothing from a scope that, or whose ancestor, has begun closing.
    if Scope.isClosed(scope) { throw currentScope.closedError(key) }
    var result: [Service] = []
    for (owner, registry) in currentScope.registryChainWithOwners(asOf: version).reversed() {
      for registration in registry.all(for: key) {
        result.append(
          try RegistrationRef(registration).withTyped(Registration<Service>.self) {
            try $0.instance(nested, owner: ScopeRef(owner))
          })
      }
    }
    return result
  }
}

extension ServiceKey {
  @usableFromInline
  init<Service>(_ service: Service.Type, name: AnyServiceName?) {
    self.init(service: TypeIdentity(Service.self), arguments: .void, name: name)
  }
}
