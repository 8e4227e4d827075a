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
        // The object first: cast from `nil`, an `Optional` or `Any` service would read as a
        // value (`nil`) rather than as no instance.
        if let object = registration.weakInstance, let existing = object as? Service { return existing }
        let instance = try registration.make(resolver, repeat each arguments)
        guard let object = referencedObject(instance) else {
          // A value cannot be held weakly; like any instance Strata discards, it is disposed.
          var error = ResolutionError(
            .weakValue(registration.descriptor, valueType: "\(Swift.type(of: instance))"))
          if let disposal = Disposal.of(instance, key: registration.key, registration: registration.identity)
          {
            error.disposalErrors += Scope.disposeNow(disposal)
          }
          throw error
        }
        registration.weakInstance = object
        return instance
      }
    }
  }
}

/// The object `value` refers to, looking through `Optional`s and existentials; `nil` for a value
/// type (or `nil`), which a weak reference cannot hold.
@usableFromInline
func referencedObject(_ value: Any) -> AnyObject? {
  var value = value
  while let wrapper = value as? any OptionalWrapper {
    guard let inner = wrapper.wrappedValueIfAny else { return nil }
    value = inner
  }
  guard Swift.type(of: value) is AnyObject.Type else { return nil }
  return value as AnyObject
}
