/// What a registration is before its batch is published: the lifetime, factory and
/// refinements a ``Registrar`` call staged, turned into registrations by `materialize()`.
///
/// The part that does not depend on the service type is this non-generic base, so that staging
/// (run once per registration, in code not specialised for the service) reads and writes it
/// without looking up the generic subclass's metadata.
class StagedRegistration {
  let key: ServiceKey
  let location: SourceLocation
  /// The batch this registration belongs to; set when it is staged.
  var batch: RegistrationBatch?
  /// Module, override flag and declared dependencies (see `Registrar+Dependencies.swift`).
  var attributes = RegistrationAttributes()

  init(key: ServiceKey, location: SourceLocation) {
    self.key = key
    self.location = location
  }

  func materialize() throws -> [AnyRegistration] { [] }

  /// A registration under this one's key, with its exact argument types, that throws
  /// `invalidRegistration` for `reason` when resolved.
  func failing(_ reason: ResolutionError.Reason) -> [AnyRegistration] { [] }
}

/// A registration being built: mutable until its batch is published.
class StagedBase<Service>: StagedRegistration {
  var activation: Registration<Service>.Activation?
  /// `nil` until a forward is added: an empty array of this element type would look up the
  /// generic registration type's metadata for every registration staged.
  var forwards: [(Registration<Service>) -> AnyRegistration]?
  /// A ready-made instance: the registration starts out created and never runs its factory.
  var instance: Service?

  struct Unreachable: Error {}
  static var unreachable: Unreachable { Unreachable() }
}

final class Staged<Service, each Argument>: StagedBase<Service> {
  let lifetime: Lifetime
  let dependencies: [ServiceKey]?
  let factory: Registration<Service, repeat each Argument>.Factory

  init(
    key: ServiceKey, lifetime: Lifetime, location: SourceLocation, dependencies: [ServiceKey]?,
    factory: @escaping Registration<Service, repeat each Argument>.Factory
  ) {
    self.lifetime = lifetime
    self.dependencies = dependencies
    self.factory = factory
    super.init(key: key, location: location)
  }

  override func failing(_ reason: ResolutionError.Reason) -> [AnyRegistration] {
    [
      RegistrationBatch.failing(
        Service.self, arguments: repeat (each Argument).self, key: key, at: location, reason: reason)
    ]
  }

  override func materialize() throws -> [AnyRegistration] {
    let registration = Registration<Service, repeat each Argument>(
      key: key, lifetime: lifetime, location: location, dependencies: dependencies,
      factory: factory, activation: activation, instance: instance)
    registration.attributes = attributes
    if key.hasArguments && lifetime.isShared {
      throw ResolutionError(.sharedWithArguments(registration.descriptor))
    }
    guard let forwards, !forwards.isEmpty else { return [registration] }
    guard let plain = registration.withoutArguments else {
      throw ResolutionError(.forwardWithArguments(registration.descriptor))
    }
    return [registration] + forwards.map { forward in attributes.forForward.applied(to: forward(plain)) }
  }
}
