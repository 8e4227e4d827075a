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
  /// (StrataModules checks duplicates and overrides there): it reads the batch's registrations
  /// through a ``ReviewedBatch`` and returns the positions of those to leave out, or throws to
  /// publish nothing.
  package func register(
    _ build: (Registrar) throws -> Void, reviewing review: (ReviewedBatch) throws -> Set<Int>,
    published: () -> Void = {}
  ) throws {
    let registrar = Registrar()
    let additions: RegistrationRun
    do {
      try build(registrar)
      let materialized = try registrar.materialize()
      let reviewed = ReviewedBatch(run: materialized, mayHoldOverrides: registrar.batch.hasOverrides)
      let dropped = try review(reviewed)
      // A batch published whole is indexed once, by the review and the level alike.
      additions =
        dropped.isEmpty
        ? materialized.indexed(by: reviewed.indexCache.indexed)
        : RegistrationRun(Self.leavingOut(dropped, of: materialized.registrations))
      try publish(additions)
    } catch {
      registrar.batch.close(publishedTo: nil)
      throw error
    }
    // From here on, a registrar or handle kept past `build` reports its late use.
    registrar.batch.close(publishedTo: self)
    published()
    guard registrar.batch.hasEagerSingletons else { return }
    for registration in additions.registrations where registration.kind == .eagerSingleton {
      try registration.createEagerly(in: self)
    }
  }
}

extension Scope {
  /// `batch` without the registrations at the positions `dropped` (those an override replaces).
  /// A dropped registration's forwards, which materializing placed right after it, are made again
  /// for the registration of the same key that stays: `forwarding(to:)` then leads to the override,
  /// as resolving the key itself does, and never to a registration that no scope holds (a
  /// singleton reached that way would have had no owner).
  static func leavingOut(_ dropped: Set<Int>, of batch: [AnyRegistration]) -> [AnyRegistration] {
    var kept = batch
    for position in dropped.sorted() {
      let replaced = batch[position]
      let count = replaced.forwardCount
      guard count > 0, position + count < batch.count,
        let replacement = batch.indices.last(where: { !dropped.contains($0) && batch[$0].key == replaced.key }
        ),
        let remade = replaced.forwards(madeFor: batch[replacement]), remade.count == count
      else { continue }
      for (offset, forward) in remade.enumerated() { kept[position + 1 + offset] = forward }
    }
    return kept.indices.filter { !dropped.contains($0) }.map { kept[$0] }
  }
}

/// A registration batch as a review before publication reads it (see
/// ``Scope/register(_:reviewing:)``): the keys, modules and override flags that a duplicate check
/// reads for every registration, and a full ``RegistrationDescriptor`` only for the ones an error
/// names. (Describing all of them up front copied every registration's facts once more per build:
/// for a batch of 10,000, a 1.5 MB array made, read and freed.)
package struct ReviewedBatch {
  let run: RegistrationRun
  /// `false` when no registration of the batch was declared an override: then none is read.
  let mayHoldOverrides: Bool
  /// The batch's keys indexed, once a review asked (see ``indexedKeys``).
  let indexCache = IndexCache()

  var registrations: [AnyRegistration] { run.registrations }

  /// How many registrations the batch holds; positions run from 0 to `count - 1`, in load order.
  package var count: Int { run.registrations.count }

  /// The key of the registration at `position`, from the run's dense array of keys.
  package func key(at position: Int) -> ServiceKey { run.keys[position] }

  /// The keys of the registrations, by position.
  package var keys: [ServiceKey] { run.keys }

  /// The batch's keys indexed: which positions repeat a key. Made on first use and kept: the
  /// registry level the batch becomes reads it too, if the review leaves nothing out.
  package var indexedKeys: IndexedKeys {
    if let made = indexCache.indexed { return made }
    let made = IndexedKeys(run.keys)
    indexCache.indexed = made
    return made
  }

  /// Whether the registration at `position` was declared an override.
  package func isOverride(at position: Int) -> Bool {
    mayHoldOverrides && registrations[position].attributes.isOverride
  }

  /// The full description of the registration at `position`.
  package func descriptor(at position: Int) -> RegistrationDescriptor { registrations[position].descriptor }
}
