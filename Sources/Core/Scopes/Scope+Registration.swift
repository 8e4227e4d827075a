extension Scope {
  /// Adds a batch of registrations to this scope, visible to it and to the scopes below it.
  ///
  /// ```swift
  /// try container.register { registry in
  ///   registry.register(FeatureFlags.self, lifetime: .singleton) { _ in RemoteFlags() }
  ///   registry.register(Checkout.self, Checkout.init)
  /// }
  /// ```
  ///
  /// The batch is published atomically once `build` returns: resolves running at the same time
  /// see either none or all of it. Publishing costs time proportional to the registrations the
  /// scope then holds, so register many services in one batch rather than one at a time. It is
  /// safe to call from any thread, including from inside a factory.
  ///
  /// - Parameter build: Receives a ``Registrar`` to register with.
  /// - Throws: What `build` throws; a ``ResolutionError`` for an invalid registration (nothing of
  ///   the batch is published then); or the error of an eager singleton's factory (the batch is
  ///   published, and the singleton is made again on first use).
  public final func register(_ build: (Registrar) throws -> Void) throws {
    try register(build, reviewing: { _ in [] })
  }

  /// ``register(_:)``, with a `review` between building the batch and publishing it
  /// (StrataModules checks duplicates and overrides there): it receives the batch's registrations
  /// (described on demand, so that a review that needs none costs nothing) and returns the
  /// positions of those to leave out, or throws to publish nothing.
  package func register(
    _ build: (Registrar) throws -> Void, reviewing review: (() -> [RegistrationDescriptor]) throws -> Set<Int>
  ) throws {
    let registrar = Registrar()
    let additions: [AnyRegistration]
    do {
      try build(registrar)
      let materialized = try registrar.materialize()
      let dropped = try review { materialized.map(\.descriptor) }
      additions =
        dropped.isEmpty
        ? materialized
        : materialized.enumerated().filter { !dropped.contains($0.offset) }.map(\.element)
      try publish(additions)
    } catch {
      registrar.batch.close(publishedTo: nil)
      throw error
    }
    // From here on, a registrar or handle kept past `build` reports its late use.
    registrar.batch.close(publishedTo: self)
    for registration in additions where registration.kind == .eagerSingleton {
      try registration.createEagerly(in: self)
    }
  }
}
