extension Registrar {
  /// Registers a factory closure that declares the dependencies it resolves, so that graph
  /// validation can check them without running it.
  ///
  /// ```swift
  /// registry.register(
  ///   UserService.self, lifetime: .singleton,
  ///   dependsOn: [.service(UserRepository.self), .deferred(Mailer.self)]
  /// ) { resolver in
  ///   UserService(repository: try resolver.resolve(UserRepository.self), mailer: resolver.lazy(Mailer.self))
  /// }
  /// ```
  ///
  /// The declaration is a promise Strata cannot check against the closure: list every service the
  /// factory resolves, and nothing else. A closure factory registered without `dependsOn:` is
  /// listed as unchecked by validation.
  ///
  /// This method takes a ``Lifetime`` only for a `Sendable` service; for any other service the
  /// same call resolves to the overload that takes an ``UnsharedLifetime``.
  ///
  /// - Parameters:
  ///   - type: The type to register, usually a protocol.
  ///   - name: A typed name, or `nil`.
  ///   - lifetime: How long instances live; `.transient` by default.
  ///   - dependencies: What the factory resolves: ``ServiceDependency/service(_:name:)`` for what
  ///     it resolves while it runs, ``ServiceDependency/deferred(_:)`` for a `Lazy` or `Provider`.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  ///   - factory: Makes an instance, as in ``register(_:name:lifetime:fileID:line:factory:)-(_,_,Lifetime,_,_,_)``.
  /// - Returns: A handle to add forwards or an activation hook.
  @inlinable @discardableResult
  public func register<Service: Sendable, each Argument>(
    _ type: Service.Type,
    name: (any Hashable & Sendable)? = nil,
    lifetime: Lifetime = .transient,
    dependsOn dependencies: [ServiceDependency],
    fileID: StaticString = #fileID,
    line: UInt = #line,
    factory: @escaping @Sendable (borrowing Resolver, repeat each Argument) throws -> Service
  ) -> RegistrationHandle<Service> {
    stageDeclared(
      name: name, lifetime: lifetime, dependencies: dependencies,
      location: SourceLocation(fileID, line), factory: factory)
  }

  /// Registers a factory closure that declares its dependencies, for a service that is not
  /// `Sendable`.
  ///
  /// The same call as ``register(_:name:lifetime:dependsOn:fileID:line:factory:)``, chosen by the
  /// compiler when `Service` is not `Sendable`; `lifetime` is an ``UnsharedLifetime``, and a
  /// shared lifetime other than `.unchecked(_:)` compiles with a warning.
  ///
  /// - Parameters:
  ///   - type: The type to register, usually a protocol.
  ///   - name: A typed name, or `nil`.
  ///   - lifetime: How long instances live; `.transient` by default.
  ///   - dependencies: What the factory resolves.
  ///   - fileID: Where the registration is made; recorded for errors. Leave the default.
  ///   - line: The line of the registration; recorded for errors. Leave the default.
  ///   - factory: Makes an instance.
  /// - Returns: A handle to add forwards or an activation hook.
  @inlinable @discardableResult
  public func register<Service, each Argument>(
    _ type: Service.Type,
    name: (any Hashable & Sendable)? = nil,
    lifetime: some UnsharedLifetimeConvertible = UnsharedLifetime.transient,
    dependsOn dependencies: [ServiceDependency],
    fileID: StaticString = #fileID,
    line: UInt = #line,
    factory: @escaping @Sendable (borrowing Resolver, repeat each Argument) throws -> Service
  ) -> RegistrationHandle<Service> {
    stageDeclared(
      name: name, lifetime: lifetime.lifetime, dependencies: dependencies,
      location: SourceLocation(fileID, line), factory: factory)
  }

  /// Inlined into the caller, as ``stageFactory(name:lifetime:location:factory:)`` is.
  @inlinable
  func stageDeclared<Service, each Argument>(
    name: (any Hashable & Sendable)?, lifetime: Lifetime, dependencies: [ServiceDependency],
    location: SourceLocation,
    factory: @escaping @Sendable (borrowing Resolver, repeat each Argument) throws -> Service
  ) -> RegistrationHandle<Service> {
    let registration = registrationClass(Service.self, arguments: repeat (each Argument).self).init(
      key: ServiceKey(Service.self, arguments: repeat (each Argument).self, name: Self.box(name)),
      lifetime: lifetime, location: location,
      dependencies: { [] }, factory: factory)  // the declaration is kept in the attributes alone
    declare(dependencies, for: registration)
    return stage(registration)
  }

  /// Records the dependencies a closure factory declared (`dependsOn:`) in this batch's
  /// declaration chunks (see ``DeclaredList``).
  /// A registration made after the batch was published is reported rather than published (see
  /// `stage`), and the store may be read by then: nothing is recorded for it.
  @usableFromInline
  func declare(_ dependencies: [ServiceDependency], for registration: AnyRegistration) {
    guard batch.isOpen else { return }
    if let declared = declarations?.add(dependencies) {
      registration.attributes.declared = declared
      return
    }
    let chunk = DeclarationChunk(capacity: max(DeclarationChunk.capacity, dependencies.count))
    declarations = chunk
    registration.attributes.declared = chunk.add(dependencies)
  }

  /// How many registrations the batch holds so far: where the next one will be.
  package var stagedCount: Int { staged.count }

  /// Attributes the registrations staged from `start` on to `module` (where no module is recorded
  /// yet), and marks them as overrides if `isOverride`.
  package func attribute(from start: Int, toModule module: ModuleAttribution, isOverride: Bool) {
    attribute(from: start, toModule: module, raisingOverridesBy: isOverride ? 1 : 0)
  }

  /// Attributes the registrations staged from `start` on to `module` (where no module is recorded
  /// yet), and raises their override rank by `layers` (see `RegistrationAttributes.overrideRank`):
  /// a composition's replacements are overrides one layer above everything its base registered.
  package func attribute(
    from start: Int, toModule module: ModuleAttribution, raisingOverridesBy layers: UInt32
  ) {
    if layers > 0 { batch.hasOverrides = true }
    for entry in staged[min(start, staged.count)...] {
      if entry.attributes.module == nil { entry.attributes.module = module }
      if layers > 0 {
        let (raised, overflow) = entry.attributes.overrideRank.addingReportingOverflow(layers)
        entry.attributes.overrideRank = overflow ? .max : raised
      }
    }
  }

  /// The highest override rank among the registrations staged from `start` on (0 if none is an
  /// override).
  package func highestOverrideRank(from start: Int) -> UInt32 {
    staged[min(start, staged.count)...].lazy.map(\.attributes.overrideRank).max() ?? 0
  }
}

extension RegistrationHandle {
  /// Declares this registration an override: it replaces a registration of the same key made by
  /// another module (StrataModules reports two modules registering one key as an error, and an
  /// override that replaces nothing too).
  ///
  /// ```swift
  /// import StrataModules
  ///
  /// struct TestClockModule: Module {
  ///   func register(in registry: Registrar) {
  ///     registry.register(Clock.self, lifetime: .singleton) { _ in FixedClock() }.overriding()
  ///   }
  /// }
  /// ```
  ///
  /// Outside modules the flag changes nothing at run time: the latest registration of a key wins
  /// for `resolve` either way.
  ///
  /// - Returns: This handle, for chaining.
  @discardableResult
  public func overriding() -> RegistrationHandle<Service> {
    if !batch.isOpen {
      batch.reportLateUse {
        [registration.failing(.lateRefinement(.overriding, of: registration.key, at: registration.location))]
      }
      return self
    }
    batch.hasOverrides = true
    registration.attributes.isOverride = true
    return self
  }
}
