/// A handle on a registration being added, to refine it before the batch is published.
///
/// ```swift
/// registry.register(PostgresStore.self, lifetime: .singleton) { _ in PostgresStore() }
///   .forwarding(to: UserStore.self)
///   .forwarding(to: OrderStore.self)
/// ```
public struct RegistrationHandle<Service> {
  let registration: ServiceRegistration<Service>
  /// The batch of the registrar that made the registration: refinements apply only while it is
  /// open.
  let batch: RegistrationBatch

  /// Makes the same registration resolvable as `type` too, sharing its lifetime: a singleton
  /// forwarded to two protocols is one instance.
  ///
  /// ```swift
  /// registry.register(PostgresStore.self, lifetime: .singleton) { _ in PostgresStore() }
  ///   .forwarding(to: UserStore.self)
  /// let store = try container.resolve(UserStore.self)   // the PostgresStore singleton
  /// ```
  ///
  /// `Service` must conform to (or be a subclass of) `type`; Strata checks the conversion when the
  /// forward is first resolved and throws `.typeMismatch` if it fails. Use
  /// ``forwarding(to:as:fileID:line:)`` to have the compiler check it.
  ///
  /// - Parameters:
  ///   - type: Another type, usually a protocol `Service` conforms to.
  ///   - fileID: Where the forward is declared; recorded for errors. Leave the default.
  ///   - line: The line of the forward; recorded for errors. Leave the default.
  /// - Returns: This handle, for chaining.
  @discardableResult
  public func forwarding<Other>(
    to type: Other.Type, fileID: StaticString = #fileID, line: UInt = #line
  ) -> RegistrationHandle<Service> {
    forwarding(to: type, as: nil, location: SourceLocation(fileID, line))
  }

  /// Makes the same registration resolvable as `type` too, converting with `convert`.
  ///
  /// ```swift
  /// registry.register(PostgresStore.self) { _ in PostgresStore() }
  ///   .forwarding(to: UserStore.self, as: { $0 })   // the compiler checks the conversion
  /// ```
  ///
  /// - Parameters:
  ///   - type: Another type.
  ///   - convert: Converts the service to `type`; usually `{ $0 }`.
  ///   - fileID: Where the forward is declared; recorded for errors. Leave the default.
  ///   - line: The line of the forward; recorded for errors. Leave the default.
  /// - Returns: This handle, for chaining.
  @discardableResult
  public func forwarding<Other>(
    to type: Other.Type, as convert: @escaping @Sendable (Service) -> Other,
    fileID: StaticString = #fileID, line: UInt = #line
  ) -> RegistrationHandle<Service> {
    forwarding(to: type, as: convert, location: SourceLocation(fileID, line))
  }

  private func forwarding<Other>(
    to type: Other.Type, as convert: (@Sendable (Service) -> Other)?, location: SourceLocation
  ) -> RegistrationHandle<Service> {
    if !batch.isOpen {
      let key = ServiceKey(service: TypeIdentity(Other.self), arguments: .void, name: registration.key.name)
      let reason = ResolutionError.Reason.lateRefinement(.forward(key), of: registration.key, at: location)
      batch.reportLateUse {
        [RegistrationBatch.failing(Other.self, key: key, at: location, reason: reason)]
      }
      return self
    }
    batch.hasForwards = true
    registration.forwards = registration.forwards ?? []
    registration.forwards?.append { (target: Registration<Service>) -> AnyRegistration in
      let key = ServiceKey(
        service: TypeIdentity(Other.self), arguments: .void, name: target.key.name)
      let targetKey = target.key
      return Registration<Other>(
        key: key, lifetime: .transient, location: location, dependencies: { [targetKey] },
        factory: { resolver in
          let instance = try target.instance(resolver, owner: resolver.ownerHint(of: target))
          if let convert { return convert(instance) }
          guard let converted = instance as? Other else {
            throw ResolutionError(
              .typeMismatch(
                forward: key, target: target.descriptor, instanceType: "\(Swift.type(of: instance))",
                forwardedAt: location), insideFactory: true)
          }
          return converted
        })
    }
    return self
  }

  /// Runs `hook` after each new instance is made, before anybody else receives it: property
  /// injection, and the way to close a circular reference.
  ///
  /// ```swift
  /// registry.register(Parent.self, lifetime: .graph) { _ in Parent() }
  ///   .onActivated { resolver, parent in parent.child = try resolver.resolve(Child.self) }
  /// registry.register(Child.self, lifetime: .graph) { resolver in
  ///   Child(parent: try resolver.resolve(Parent.self))   // the same Parent
  /// }
  /// ```
  ///
  /// For `graph`, `singleton` and `scoped` lifetimes the new instance is already shared when
  /// the hook runs, so a dependency that asks for it again (on the same thread) receives it.
  /// Nobody else receives the instance before the hook returns, but it can be reached: a singleton
  /// that the hook resolves, and that keeps the new instance (closing a circular reference), is
  /// published when its own creation ends, while this hook still runs, and another thread that
  /// resolves that singleton meanwhile can read the new instance through it, unfinished. Let the
  /// hook set the instance up before it resolves services that refer back to it, or guard what
  /// the hook writes as any state shared between threads.
  ///
  /// A registration of a ready-made instance (``Registrar/register(_:name:instance:fileID:line:)-1osnr``)
  /// takes no hook: Strata never makes that instance, so the hook would never run, and the batch
  /// fails with ``ResolutionError/Code/invalidRegistration`` instead. Set the instance up before
  /// registering it.
  ///
  /// A hook that throws discards only the instance it was given (disposing it); what the hook
  /// resolved stays. A shared instance it made that keeps the discarded one (a child singleton
  /// closing a circular reference) keeps it, disposed: let a hook that can fail resolve such
  /// services last, or not at all.
  ///
  /// - Parameter hook: Receives a resolver and the new instance. If it throws, the instance is
  ///   discarded and the error reaches the caller of `resolve`.
  /// - Returns: This handle, for chaining.
  @discardableResult
  public func onActivated(_ hook: @escaping @Sendable (borrowing Resolver, Service) throws -> Void)
    -> RegistrationHandle<Service>
  {
    if !batch.isOpen {
      batch.reportLateUse {
        [
          registration.failing(
            .lateRefinement(.activationHook, of: registration.key, at: registration.location))
        ]
      }
      return self
    }
    // A ready-made instance is never made: rather than drop the hook silently, the batch fails.
    if registration.isReadyMade { batch.hasHookOnInstance = true }
    registration.addActivation(hook)
    return self
  }
}
