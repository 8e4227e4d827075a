import Synchronization

// The `weak` lifetime: one instance shared while anybody outside the container holds it.
extension Registration {
  @usableFromInline
  func weakShared(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    try (creation ?? CreationGuard()).withCreationLock(for: key) {  // always present for `weak`
      if let existing = weakInstance as? Service { return existing }
      let instance = try make(resolver, repeat each arguments)
      guard Swift.type(of: instance as Any) is AnyObject.Type else { throw weakValueError(instance) }
      weakInstance = instance as AnyObject
      return instance
    }
  }

  /// The error for a `weak` registration whose factory made a value: a value cannot be shared
  /// through a weak reference (it would silently be made anew on every resolve).
  func weakValueError(_ instance: Service) -> ResolutionError {
    ResolutionError(.weakValue(descriptor, valueType: "\(Swift.type(of: instance))"))
  }
}
