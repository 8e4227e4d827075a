import Synchronization

extension Scope {
  /// Resolves the service registered for `type`, looking from this scope up to the root.
  ///
  /// ```swift
  /// let service = try container.resolve(UserService.self)
  /// ```
  ///
  /// - Parameter type: The service type, exactly as it was registered.
  /// - Returns: The instance the registration's lifetime calls for.
  /// - Throws: ``ResolutionError`` when nothing is registered, a cycle is found, a factory throws,
  ///   or the scope is closed. The error names the key, the path and the registration site.
  @inlinable
  public final func resolve<Service>(_ type: Service.Type = Service.self) throws -> Service {
    try resolve(Lookup(Service.self), as: Service.self)
  }

  /// Resolves the service registered for `type` under `name`.
  ///
  /// ```swift
  /// let audit = try container.resolve(Logger.self, name: LogChannel.audit)
  /// ```
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:)`` does.
  @inlinable
  public final func resolve<Service, Name: Hashable & Sendable>(
    _ type: Service.Type = Service.self, name: Name?
  ) throws -> Service {
    try resolve(Lookup(Service.self, name: name), as: Service.self)
  }

  /// Resolves a service registered with runtime arguments.
  ///
  /// ```swift
  /// let greeting = try container.resolve(Greeting.self, arguments: "Ada", 3)
  /// ```
  ///
  /// Any number of arguments. For one to three, the compiler picks the overloads that take them
  /// one by one (``resolve(_:arguments:_:)``, ``resolve(_:arguments:_:_:)``,
  /// ``resolve(_:arguments:_:_:_:)``): the same resolve, with the arguments handed to the factory
  /// without copying them on the way.
  ///
  /// - Throws: ``ResolutionError``; a mismatch of argument types names both lists.
  @inlinable
  public final func resolve<Service, each Argument>(
    _ type: Service.Type = Service.self, arguments: repeat each Argument
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, arguments: repeat (each Argument).self), as: Service.self,
      arguments: repeat each arguments)
  }

  /// Resolves a named service registered with runtime arguments.
  ///
  /// - Throws: ``ResolutionError``, as ``resolve(_:arguments:)`` does.
  @inlinable
  public final func resolve<Service, Name: Hashable & Sendable, each Argument>(
    _ type: Service.Type = Service.self, name: Name?, arguments: repeat each Argument
  ) throws -> Service {
    try resolve(
      Lookup(Service.self, name: name, arguments: repeat (each Argument).self), as: Service.self,
      arguments: repeat each arguments)
  }

  /// Resolves `type` if it is registered; `nil` if it is not.
  ///
  /// ```swift
  /// let tracer = try container.resolveIfRegistered(Tracer.self) ?? NoopTracer()
  /// ```
  ///
  /// - Throws: ``ResolutionError`` if a registration exists but resolving it fails.
  public final func resolveIfRegistered<Service>(_ type: Service.Type = Service.self) throws -> Service? {
    try checkOpen(Service.self)
    return try withResolver { try $0.resolveIfRegistered(type) }
  }

  /// Resolves `type` under `name` if it is registered; `nil` if it is not.
  ///
  /// - Throws: ``ResolutionError`` if a registration exists but resolving it fails.
  public final func resolveIfRegistered<Service, Name: Hashable & Sendable>(
    _ type: Service.Type = Service.self, name: Name?
  ) throws -> Service? {
    guard let name else { return try resolveIfRegistered(type) }
    try checkOpen(Service.self, name: name)
    return try withResolver { try $0.resolveIfRegistered(type, name: name) }
  }

  /// Resolves every unnamed registration of `type`: the root's first, then each scope's down to
  /// this one, each in registration order.
  ///
  /// ```swift
  /// for check in try container.resolveAll(HealthCheck.self) { try await check.run() }
  /// ```
  ///
  /// - Throws: ``ResolutionError`` if any of them fails.
  public final func resolveAll<Service>(_ type: Service.Type = Service.self) throws -> [Service] {
    try checkOpen(Service.self)
    return try withResolver { try $0.resolveAll(type) }
  }

  /// Resolves every registration of `type` under `name`, in the order of ``resolveAll(_:)``.
  ///
  /// - Throws: ``ResolutionError`` if any of them fails.
  public final func resolveAll<Service, Name: Hashable & Sendable>(
    _ type: Service.Type = Service.self, name: Name?
  ) throws -> [Service] {
    guard let name else { return try resolveAll(type) }
    try checkOpen(Service.self, name: name)
    return try withResolver { try $0.resolveAll(type, name: name) }
  }

  /// The registry version a top-level resolve from this scope reads at: the tree's newest.
  @inlinable
  final var registryVersion: UInt { Scope.currentVersion(of: ScopeRef(self)) }

  /// A ``Lazy`` that resolves `type` from this scope on first use.
  ///
  /// ```swift
  /// let report = container.lazy(ReportGenerator.self)
  /// if needed { try report.value.generate() }
  /// ```
  @inlinable
  public final func lazy<Service>(_ type: Service.Type = Service.self) -> Lazy<Service> {
    Lazy(scope: self, holder: deferredHolder, key: ServiceKey(Service.self, name: nil)) {
      try $0.resolve(Service.self)
    }
  }

  /// A ``Provider`` that resolves `type` from this scope each time it is called.
  ///
  /// ```swift
  /// let makeJob = container.provider(Job.self)
  /// let first = try makeJob(), second = try makeJob()
  /// ```
  @inlinable
  public final func provider<Service>(_ type: Service.Type = Service.self) -> Provider<Service> {
    Provider(scope: self, holder: deferredHolder) { try $0.resolve(Service.self) }
  }

  /// The shared registration whose factory runs for this scope on this thread, if any: what a
  /// ``Lazy``, ``Provider`` or ``Injected`` made now is made for.
  @usableFromInline
  final var deferredHolder: DeferredHolding {
    DeferredHolding.link(to: ThreadContext.ambientHolder(resolvingIn: ScopeRef(self)))
  }

  /// Throws `scopeClosed` once the scope or an ancestor is closing (plain loads up the chain).
  /// Nested resolves check their resolver's scope the same way (`Scope.checkOpen(_:for:as:arguments:)`);
  /// a resolve racing with the close is settled where the instance is stored, under the owning
  /// scope's lock.
  @inlinable @inline(__always)
  final func checkOpen<Service>(_ type: Service.Type) throws {
    if Scope.isClosed(ScopeRef(self)) { throw closedError(Service.self) }
  }

  @usableFromInline
  final func closedError<Service>(_ type: Service.Type) -> ResolutionError {
    closedError(ServiceKey(Service.self, name: nil))
  }

  /// ``checkOpen(_:)`` for a named key: the error names the key with its name.
  final func checkOpen<Service, Name: Hashable & Sendable>(_ type: Service.Type, name: Name) throws {
    if Scope.isClosed(ScopeRef(self)) {
      throw closedError(ServiceKey(Service.self, name: Registrar.box(name)))
    }
  }

  /// Every registration visible from this scope, the root's first, each scope's in registration
  /// order: the facts graph validation and export work from.
  ///
  /// ```swift
  /// for registration in container.registrations where registration.dependencies == nil {
  ///   print("closure factory, not checked statically:", registration)
  /// }
  /// ```
  public final var registrations: [RegistrationDescriptor] {
    registryChain().reversed().flatMap { $0.registrations.map(\.descriptor) }
  }
}
