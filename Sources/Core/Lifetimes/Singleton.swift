import Synchronization

// The `singleton` and `eagerSingleton` lifetimes: one instance per registering scope, made once
// under the registration's creation guard, its dependencies resolved in that scope.
extension Registration {
  @usableFromInline
  func singleton(
    _ resolver: borrowing Resolver, owner: Scope, _ arguments: repeat each Argument
  ) throws -> Service {
    let creation = self.creation ?? CreationGuard()  // always present for this lifetime
    if state.load(ordering: .acquiring) == Registration.provisional && creation.isHeldByCurrentThread {
      // Re-entered from this singleton's own activation hook: the instance exists; hand it out.
      return storage.pointee.unsafelyUnwrapped
    }
    return try creation.withCreationLock(for: key) {
      if state.load(ordering: .acquiring) == Registration.ready {
        return storage.pointee.unsafelyUnwrapped
      }
      // A closed scope makes nothing new: what it would make, nobody would dispose.
      if owner.isClosed { throw owner.closedError(key) }
      let instance = try construct(resolver, repeat each arguments)
      storage.pointee = instance
      if activation != nil {
        state.store(Registration.provisional, ordering: .releasing)
        do {
          try activate(instance, resolver)
        } catch {
          // State first: dropping the instance may run its `deinit`, which must not find a
          // provisional instance that is no longer there.
          state.store(Registration.empty, ordering: .releasing)
          storage.pointee = nil
          throw error
        }
      }
      do {
        try owner.adopt(disposal(for: instance))
      } catch {
        state.store(Registration.empty, ordering: .releasing)
        storage.pointee = nil
        throw error
      }
      state.store(Registration.ready, ordering: .releasing)
      return instance
    }
  }
}
