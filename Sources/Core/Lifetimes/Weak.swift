/// The `weak` lifetime: one instance shared while anybody outside the container holds it.
@usableFromInline
enum WeakStorage: LifetimeStorage {
  @usableFromInline static var home: InstanceHome { .weakReference }
  @usableFromInline static var disposer: Disposer { .caller }

  @usableFromInline
  static func instance<Service, each Argument>(
    of registration: Registration<Service, repeat each Argument>, _ resolver: borrowing Resolver,
    owner: ScopeRef, _ arguments: repeat each Argument
  ) throws -> Service {
    try owner.scope.withResolver(depth: resolver.depth, captor: registration, version: resolver.version) {
      resolver in
      try registration.creation.withCreationLock(for: registration.key) {
        if let existing = registration.weakInstance as? Service { return existing }
        let instance = try registration.make(resolver, repeat each arguments)
        guard Swift.type(of: instance as Any) is AnyObject.Type else {
          throw ResolutionError(
            .weakValue(registration.descriptor, valueType: "\(Swift.type(of: instance))"))
        }
        registration.weakInstance = instance as AnyObject
        return instance
      }
    }
  }
}
