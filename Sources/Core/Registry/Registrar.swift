/// Collects a batch of registrations, which Strata then publishes all at once.
///
/// You receive a registrar in the closure passed to ``Container/init(_:)`` or
/// ``Scope/register(_:)``. Nothing you register is visible until the closure returns; then the
/// whole batch becomes visible atomically, at a cost proportional to the batch.
///
/// ```swift
/// let container = try Container { registry in
///   registry.register(Database.self, lifetime: .singleton) { _ in try Postgres(url: databaseURL) }
///   registry.register(UserRepository.self, SQLUserRepository.init)            // auto-wired
///   registry.register(Logger.self, name: LogChannel.audit) { _ in AuditLogger() }
///   registry.register(Greeting.self) { (_, name: String) in Greeting(name) }    // runtime argument
///   registry.register(instance: Configuration.load())
/// }
/// ```
///
/// A registrar is not `Sendable`: use it only inside the closure that received it. Registering
/// through it (or refining a ``RegistrationHandle``) after that closure returned changes nothing
/// that was published; resolving the keys concerned then throws `invalidRegistration`.
public final class Registrar {
  /// The registrations made so far, in order; refined in place until the batch is published.
  ///
  /// No dynamic exclusivity check (it cost about 80 instructions per registration): a registrar
  /// is not `Sendable`, so one thread uses it, and no access to this array runs user code, so no
  /// access can overlap another.
  @exclusivity(unchecked) var staged: [AnyRegistration] = []
  /// The key of each entry of `staged`, recorded while the registration is still in the
  /// processor's cache: the duplicate check and the registry's index read this dense array rather
  /// than each registration object again (a container of 10,000 registrations no longer fits in
  /// the cache, and each such pass missed once per registration). (Unchecked exclusivity, as
  /// `staged`.)
  @exclusivity(unchecked) var stagedKeys: [ServiceKey] = []
  /// Open until the closure that received this registrar returns.
  let batch = RegistrationBatch()
  /// Where the next dependencies a closure factory declares go (see ``DeclaredList``); made by
  /// the first declaration, and again whenever one is full. (Unchecked exclusivity, as `staged`.)
  @exclusivity(unchecked) var declarations: DeclarationChunk?

  init() {}

  /// Registers a factory closure, optionally taking runtime arguments after the resolver.
  ///
  /// ```swift
  /// registry.register(UserService.self, lifetime: .singleton) { resolver in
  ///   UserService(repository: try resolver.resolve(UserRepository.self))
  /// }
  /// registry.register(Greeting.self) { (_, name: String, times: Int) in Greeting(name, times) }
  /// ```
  ///
  /// A factory with runtime arguments is resolved with ``Scope/resolve(_:arguments:)``; its
  /// argument types become part of the key.
  ///
  /// A shared instance reaches every thread that resolves it, so this method takes a ``Lifetime``
  /// only for a `Sendable` service. For any other service the same call resolves to the overload
  /// that takes an ``UnsharedLifetime``: transients compile as before, shared lifetimes warn.
  ///
  /// - Parameters:
  ///   - type: The type to register, usually a protocol. Resolve with exactly this type.
  ///   - name: A typed name (an enum case, say) to tell apart several registrations of `type`;
  ///     `nil` for the unnamed registration.
  ///   - lifetime: How long instances live; `.transient` by default. Shared lifetimes
  ///     (`singleton`, `weak`, `scoped`) cannot take runtime arguments.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  ///   - factory: Makes an instance. It may throw; the error reaches the caller of `resolve`
  ///     wrapped with the resolution path.
  /// - Returns: A handle to add forwards or an activation hook.
  @inlinable @discardableResult
  public func register<Service: Sendable, each Argument>(
    _ type: Service.Type,
    name: (any Hashable & Sendable)? = nil,
    lifetime: Lifetime = .transient,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    factory: @escaping @Sendable (borrowing Resolver, repeat each Argument) throws -> Service
  ) -> RegistrationHandle<Service> {
    stageFactory(
      name: name, lifetime: lifetime, location: SourceLocation(fileID, line), factory: factory)
  }

  /// Registers a factory closure for a service that is not `Sendable`.
  ///
  /// ```swift
  /// registry.register(ReportBuilder.self) { _ in ReportBuilder() }                 // transient
  /// registry.register(LegacyCache.self, lifetime: .unchecked(.singleton)) { _ in LegacyCache() }
  /// ```
  ///
  /// The same call as ``register(_:name:lifetime:fileID:line:factory:)``, chosen by the compiler
  /// when `Service` is not `Sendable`. `lifetime` is then an ``UnsharedLifetime``: `.transient`
  /// and `.graph` compile silently; a shared lifetime (`.singleton`, `.scoped`, …) compiles with a
  /// warning, because the instance would reach several threads; `.unchecked(_:)` takes any
  /// lifetime for a type you have checked. A ``Lifetime`` held in a variable is accepted with a
  /// warning too. The registration behaves exactly as with the ``Lifetime`` it stands for.
  ///
  /// - Parameters:
  ///   - type: The type to register, usually a protocol. Resolve with exactly this type.
  ///   - name: A typed name, or `nil`.
  ///   - lifetime: How long instances live; `.transient` by default.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  ///   - factory: Makes an instance.
  /// - Returns: A handle to add forwards or an activation hook.
  @inlinable @discardableResult
  public func register<Service, each Argument>(
    _ type: Service.Type,
    name: (any Hashable & Sendable)? = nil,
    lifetime: some UnsharedLifetimeConvertible = UnsharedLifetime.transient,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    factory: @escaping @Sendable (borrowing Resolver, repeat each Argument) throws -> Service
  ) -> RegistrationHandle<Service> {
    stageFactory(
      name: name, lifetime: lifetime.lifetime, location: SourceLocation(fileID, line),
      factory: factory)
  }

  /// Inlined into the caller, so that code registering a concrete service type makes its
  /// registration there, with the registration class's metadata cached at the call site: called
  /// from a generic function, every registration asked the Swift runtime for it (a hash-map search
  /// of about 600 instructions).
  @inlinable
  func stageFactory<Service, each Argument>(
    name: (any Hashable & Sendable)?, lifetime: Lifetime, location: SourceLocation,
    factory: @escaping @Sendable (borrowing Resolver, repeat each Argument) throws -> Service
  ) -> RegistrationHandle<Service> {
    stage(
      registrationClass(Service.self, arguments: repeat (each Argument).self).init(
        key: ServiceKey(Service.self, arguments: repeat (each Argument).self, name: Self.box(name)),
        lifetime: lifetime, location: location, dependencies: { nil }, factory: factory))
  }

  /// Registers an initializer (or any function) whose parameters Strata resolves: auto-wiring.
  ///
  /// ```swift
  /// struct SQLUserRepository: UserRepository {
  ///   init(database: Database, logger: Logger) { … }
  /// }
  /// registry.register(UserRepository.self, SQLUserRepository.init)
  /// ```
  ///
  /// The parameter types are recorded as the registration's dependencies, so tools can check the
  /// graph without running any factory. A parameter of type ``Lazy`` or ``Provider`` is resolved
  /// lazily.
  ///
  /// This method takes a ``Lifetime`` only for a `Sendable` service; for any other service the
  /// same call resolves to the overload that takes an ``UnsharedLifetime``.
  ///
  /// - Parameters:
  ///   - type: The type to register.
  ///   - name: A typed name, or `nil`.
  ///   - lifetime: How long instances live; `.transient` by default.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  ///   - initializer: A function from the dependencies to the service, typically `Type.init`.
  /// - Returns: A handle to add forwards or an activation hook.
  @inlinable @discardableResult
  @_disfavoredOverload  // a closure literal `{ resolver, … in }` is a factory, not an initializer
  public func register<Service: Sendable, each Dependency>(
    _ type: Service.Type,
    name: (any Hashable & Sendable)? = nil,
    lifetime: Lifetime = .transient,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    _ initializer: @escaping @Sendable (repeat each Dependency) throws -> Service
  ) -> RegistrationHandle<Service> {
    stageInitializer(
      name: name, lifetime: lifetime, location: SourceLocation(fileID, line),
      initializer: initializer)
  }

  /// Registers an initializer whose parameters Strata resolves, for a service that is not
  /// `Sendable`.
  ///
  /// ```swift
  /// registry.register(ReportBuilder.self, ReportBuilder.init)                      // transient
  /// registry.register(LegacyCache.self, lifetime: .unchecked(.singleton), LegacyCache.init)
  /// ```
  ///
  /// The same call as ``register(_:name:lifetime:fileID:line:_:)``, chosen by the compiler when
  /// `Service` is not `Sendable`; `lifetime` is an ``UnsharedLifetime``, and a shared lifetime
  /// other than `.unchecked(_:)` compiles with a warning.
  ///
  /// - Parameters:
  ///   - type: The type to register.
  ///   - name: A typed name, or `nil`.
  ///   - lifetime: How long instances live; `.transient` by default.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  ///   - initializer: A function from the dependencies to the service, typically `Type.init`.
  /// - Returns: A handle to add forwards or an activation hook.
  @inlinable @discardableResult
  @_disfavoredOverload  // a closure literal `{ resolver, … in }` is a factory, not an initializer
  public func register<Service, each Dependency>(
    _ type: Service.Type,
    name: (any Hashable & Sendable)? = nil,
    lifetime: some UnsharedLifetimeConvertible = UnsharedLifetime.transient,
    fileID: StaticString = #fileID,
    line: UInt = #line,
    _ initializer: @escaping @Sendable (repeat each Dependency) throws -> Service
  ) -> RegistrationHandle<Service> {
    stageInitializer(
      name: name, lifetime: lifetime.lifetime, location: SourceLocation(fileID, line),
      initializer: initializer)
  }

  /// Inlined into the caller, so that the registration is made, and the factory resolves the
  /// dependencies, in code specialised for the concrete types: no generic metadata is looked up
  /// at run time for each registration, and every resolve the factory makes is specialised.
  @inlinable
  func stageInitializer<Service, each Dependency>(
    name: (any Hashable & Sendable)?, lifetime: Lifetime, location: SourceLocation,
    initializer: @escaping @Sendable (repeat each Dependency) throws -> Service
  ) -> RegistrationHandle<Service> {
    // Listed only when a tool asks (see `AnyRegistration.dependencyKeys`).
    let dependencies: @Sendable () -> [ServiceKey]? = {
      var count = 0
      for _ in repeat (each Dependency).self { count += 1 }
      var dependencies: [ServiceKey] = []
      dependencies.reserveCapacity(count)
      repeat dependencies.append(ServiceKey((each Dependency).self, name: nil))
      return dependencies
    }
    return stageAutowired(name: name, lifetime: lifetime, location: location, dependencies: dependencies) {
      resolver in try initializer(repeat try resolver.resolve((each Dependency).self))
    }
  }

  /// Stages an auto-wired registration: `factory` resolves `dependencies` and calls the
  /// initializer. Inlined into the caller with the fixed-arity forms, so that the registration is
  /// made by code specialised for `Service`.
  @inlinable
  func stageAutowired<Service>(
    name: (any Hashable & Sendable)?, lifetime: Lifetime, location: SourceLocation,
    dependencies: @escaping @Sendable () -> [ServiceKey]?,
    factory: @escaping @Sendable (borrowing Resolver) throws -> Service
  ) -> RegistrationHandle<Service> {
    stage(
      Registration<Service>(
        key: ServiceKey(Service.self, name: Self.box(name)), lifetime: lifetime,
        location: location, dependencies: dependencies, factory: factory))
  }

  /// Registers a ready-made instance, which every resolve returns.
  ///
  /// ```swift
  /// registry.register(Configuration.self, instance: Configuration(environment: .production))
  /// ```
  ///
  /// The instance reaches every thread that resolves it, so `Service` must be `Sendable`. For a
  /// service that is not, this call compiles with a warning; a legacy type you have checked is
  /// registered with ``register(_:name:uncheckedInstance:fileID:line:)``.
  ///
  /// - Parameters:
  ///   - type: The type to register; inferred from `instance` when omitted.
  ///   - name: A typed name, or `nil`.
  ///   - instance: The instance every resolve returns. You made it, so you dispose of it: no
  ///     scope disposes an instance registered this way.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  /// - Returns: A handle to add forwards (not an activation hook: the instance is never made).
  @discardableResult
  public func register<Service: Sendable>(
    _ type: Service.Type = Service.self,
    name: (any Hashable & Sendable)? = nil,
    instance: Service,
    fileID: StaticString = #fileID,
    line: UInt = #line
  ) -> RegistrationHandle<Service> {
    stageInstance(name: name, instance: instance, location: SourceLocation(fileID, line))
  }

  /// Registers a ready-made instance of a type that is not `Sendable`: compiles, with a warning.
  ///
  /// Make `Service` `Sendable`, or use ``register(_:name:uncheckedInstance:fileID:line:)`` for a
  /// legacy type you have checked is safe to share between threads.
  ///
  /// - Parameters:
  ///   - type: The type to register; inferred from `instance` when omitted.
  ///   - name: A typed name, or `nil`.
  ///   - instance: The instance every resolve returns.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  /// - Returns: A handle to add forwards (not an activation hook: the instance is never made).
  @discardableResult
  @available(
    *, deprecated,
    message:
      "a registered instance is shared by every thread that resolves it, but this service is not Sendable; make it Sendable (an actor, a @MainActor class, or a final class with only `let`s or a lock), or, for a legacy type you have checked, write `register(uncheckedInstance:)`"
  )
  public func register<Service>(
    _ type: Service.Type = Service.self,
    name: (any Hashable & Sendable)? = nil,
    instance: Service,
    fileID: StaticString = #fileID,
    line: UInt = #line
  ) -> RegistrationHandle<Service> {
    stageInstance(name: name, instance: instance, location: SourceLocation(fileID, line))
  }

  /// Registers a ready-made instance of a type that is not `Sendable`, without a warning: the
  /// escape hatch for a legacy type you have checked is safe to share between threads.
  ///
  /// ```swift
  /// // `Formatter` predates Swift concurrency; it is configured here and never mutated again.
  /// registry.register(DateFormatter.self, uncheckedInstance: makeISOFormatter())
  /// ```
  ///
  /// Otherwise the same as ``register(_:name:instance:fileID:line:)-1osnr``. Like
  /// `@unchecked Sendable`, this is a promise the compiler takes on trust: leave a comment saying
  /// why the instance is safe to share.
  ///
  /// - Parameters:
  ///   - type: The type to register; inferred from `uncheckedInstance` when omitted.
  ///   - name: A typed name, or `nil`.
  ///   - uncheckedInstance: The instance every resolve returns, from any thread.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  /// - Returns: A handle to add forwards (not an activation hook: the instance is never made).
  @discardableResult
  public func register<Service>(
    _ type: Service.Type = Service.self,
    name: (any Hashable & Sendable)? = nil,
    uncheckedInstance: Service,
    fileID: StaticString = #fileID,
    line: UInt = #line
  ) -> RegistrationHandle<Service> {
    stageInstance(name: name, instance: uncheckedInstance, location: SourceLocation(fileID, line))
  }

  func stageInstance<Service>(
    name: (any Hashable & Sendable)?, instance: Service, location: SourceLocation
  ) -> RegistrationHandle<Service> {
    stage(
      Registration<Service>(
        key: ServiceKey(Service.self, name: Self.box(name)), location: location, dependencies: { [] },
        factory: { _ in throw Registration<Service>.Unreachable() }, instance: instance))
  }

  /// Adds `registration` to the batch, or reports it if the batch is already published.
  @usableFromInline
  func stage<Service>(_ registration: ServiceRegistration<Service>) -> RegistrationHandle<Service> {
    if batch.isOpen {
      if registration.kind == .eagerSingleton { batch.hasEagerSingletons = true }
      if registration.isSharedWithArguments { batch.hasSharedWithArguments = true }
      staged.append(registration)
      stagedKeys.append(registration.key)
    } else {
      batch.reportLateUse {
        [registration.failing(.lateRegistration(registration.key, at: registration.location))]
      }
    }
    return RegistrationHandle(registration: registration, batch: batch)
  }

  /// A registration's name, boxed; `nil` for none.
  ///
  /// Compared with `nil` before it is unwrapped: unwrapping copies the existential through the
  /// runtime's value witnesses (an outlined copy and destroy of `(any Hashable & Sendable)?`,
  /// about 130 instructions per registration), which an unnamed registration, the usual one, does
  /// not need.
  @usableFromInline
  static func box(_ name: (any Hashable & Sendable)?) -> AnyServiceName? {
    if name == nil { return nil }
    guard let name else { return nil }
    func open<Name: Hashable & Sendable>(_ name: Name) -> AnyServiceName { ServiceName(name) }
    return open(name)
  }

  /// Turns the batch into registrations, with their keys, or reports the first invalid one.
  func materialize() throws -> RegistrationRun {
    // Nothing to add or check: the staged registrations are the batch as they are.
    guard batch.hasForwards || batch.hasSharedWithArguments || batch.hasHookOnInstance else {
      return RegistrationRun(staged, keys: stagedKeys)
    }
    var result: [AnyRegistration] = []
    result.reserveCapacity(staged.count)
    for registration in staged { try registration.materialize(into: &result) }
    return RegistrationRun(result)
  }
}
