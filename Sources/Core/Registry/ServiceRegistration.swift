/// The part of a ``Registration`` that depends on the service type alone: what a
/// ``RegistrationHandle`` refines while the batch is open (the activation hook and the forwards).
///
/// A registrar makes the registration itself when `register` is called, and refinements write it
/// directly. These writes happen only while the batch is open, on the thread running the
/// registrar's closure, and so before the batch is published; every later use of a handle is
/// reported instead (see ``RegistrationBatch``). Publication (an atomic release) orders them before
/// every reader.
@usableFromInline
class ServiceRegistration<Service>: AnyRegistration, @unchecked Sendable {
  @usableFromInline typealias Activation = @Sendable (borrowing Resolver, Service) throws -> Void

  /// The post-init hook (``RegistrationHandle/onActivated(_:)``); written only before
  /// publication, so no dynamic exclusivity check is needed on the resolve path that reads it.
  @usableFromInline @exclusivity(unchecked) final var activation: Activation?
  /// The forwards to make when the batch is materialized; `nil` until one is added (an empty array
  /// of this element type would look up the generic registration type's metadata for every
  /// registration). Kept after they are made: a registration that an override replaces before
  /// publication hands them to the override (see `forwards(madeFor:)`).
  @exclusivity(unchecked) final var forwards: [(Registration<Service>) -> AnyRegistration]?

  /// Adds `hook` after any hook added before.
  final func addActivation(_ hook: @escaping Activation) {
    let previous = activation
    activation = { resolver, instance in
      try previous?(resolver, instance)
      try hook(resolver, instance)
    }
  }
}

extension Registration {
  /// Thrown by the factory of a registered instance, which never runs.
  struct Unreachable: Error {}

  /// Checks this staged registration and appends it, followed by its forwards, to `batch`
  /// (what `materialize(into:)` does for a ``Registration``).
  final func materializeTyped(into batch: inout [AnyRegistration]) throws {
    if isSharedWithArguments {
      throw ResolutionError(.sharedWithArguments(descriptor))
    }
    if activation != nil, isReadyMade {
      throw ResolutionError(.hookOnInstance(descriptor))
    }
    batch.append(self)
    guard let pending = forwards, !pending.isEmpty else { return }
    guard let plain = withoutArguments else {
      throw ResolutionError(.forwardWithArguments(descriptor))
    }
    var forwardAttributes = attributes.forForward
    forwardAttributes.forwardTarget = identity
    for forward in pending { batch.append(forwardAttributes.applied(to: forward(plain))) }
  }

  /// How many forwards materializing this registration appended after it.
  final var forwardCountTyped: Int { forwards?.count ?? 0 }

  /// This registration's forwards made again for `replacement`, the registration of the same key
  /// that replaces it before publication (a module's override): a forward follows the override
  /// rather than lead to a registration that is never published. `nil` if `replacement` has
  /// other types (it cannot: its key is this one's).
  final func forwardsTyped(madeFor replacement: AnyRegistration) -> [AnyRegistration]? {
    guard let pending = forwards, let target = replacement as? Registration<Service> else { return nil }
    // Still this registration's forwards, declared where its module declared them.
    var forwardAttributes = attributes.forForward
    forwardAttributes.forwardTarget = replacement.identity
    return pending.map { forwardAttributes.applied(to: $0(target)) }
  }

  /// A registration under this one's key, with its exact argument types, that throws
  /// `invalidRegistration` for `reason` when resolved (what `failing(_:)` is for a
  /// ``Registration``).
  final func failingTyped(_ reason: ResolutionError.Reason) -> AnyRegistration {
    RegistrationBatch.failing(
      Service.self, arguments: repeat (each Argument).self, key: key, at: location, reason: reason)
  }
}
