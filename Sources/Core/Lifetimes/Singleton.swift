import Synchronization

// The `singleton` and `eagerSingleton` lifetimes: one instance per registering scope, made once
// under the registration's creation guard, its dependencies resolved in that scope.
extension Registration {
  @usableFromInline
  func singleton(
    _ resolver: borrowing Resolver, owner: Scope, _ arguments: repeat each Argument
  ) throws -> Service {
    let creation = self.creation ?? CreationGuard()  // always present for this lifetime
    if creation.isHeldByCurrentThread, let provisional = shared.provisionalValue {
      // Re-entered from this singleton's own activation hook: the instance exists; hand it out.
      return provisional
    }
    return try creation.withCreationLock(for: key) {
      if let ready = shared.readyValue { return ready }
      // A closed scope makes nothing new: what it would make, nobody would dispose.
      if owner.isClosed { throw owner.closedError(key) }
      let instance = try construct(resolver, repeat each arguments)
      if activation != nil {
        shared.provision(instance)
        do {
          try activate(instance, resolver)
        } catch {
          _ = shared.clear()
          throw error
        }
      }
      do {
        try owner.adopt(disposal(for: instance))
      } catch {
        _ = shared.clear()
        throw error
      }
      shared.publish(instance)
      return instance
    }
  }
}
