import Synchronization

extension Scope {
  /// The instance of a `scoped` registration owned by the scope its lifetime names, made once per
  /// owning scope under that entry's own once-guard.
  func scopedInstance<Service, each Argument>(
    of registration: Registration<Service, repeat each Argument>, depth: Int,
    make: (borrowing Resolver) throws -> Service
  ) throws -> Service {
    let owner = try owningScope(for: registration.lifetime, key: registration.key)
    let entry = owner.lock.withLock {
      let id = ObjectIdentifier(registration)
      if let entry = owner.scopedEntries[id] { return entry }
      let entry = ScopedEntry()
      owner.scopedEntries[id] = entry
      return entry
    }
    if let existing = entry.existing(Service.self) { return existing }
    return try entry.creation.withCreationLock(for: registration.key) {
      if let existing = entry.existing(Service.self) { return existing }
      let instance = try owner.withResolver(depth: depth) { try make($0) }
      entry.store(instance)
      return instance
    }
  }

  /// The scope that owns instances of a `scoped` lifetime, seen from this scope.
  func owningScope(for lifetime: Lifetime, key: ServiceKey) throws -> Scope {
    guard let tag = lifetime.scopeTag else { return self }
    var current: Scope? = self
    while let scope = current {
      if scope.tag == tag { return scope }
      current = scope.parent
    }
    throw ResolutionError(
      code: .noMatchingScope, key: key, registeredAt: nil,
      hintSource: .text(
        "no `\(tag)` scope above \(chainDescription); resolve it from inside a \(tag) scope "
          + "(`container.makeScope(\(tag))`)"))
  }
}

/// One scoped instance slot.
///
/// `@unchecked Sendable`: `instance` is written once, under `creation`'s lock, before `isReady` is
/// set with release ordering; it is read only after an acquiring load of `isReady` saw `true`.
final class ScopedEntry: @unchecked Sendable {
  let creation = CreationGuard()
  private let isReady = Atomic<Bool>(false)
  private var instance: AnyObject?

  func existing<Service>(_ type: Service.Type) -> Service? {
    guard isReady.load(ordering: .acquiring), let instance else { return nil }
    return unsafeDowncast(instance, to: GraphBox<Service>.self).value
  }

  func store<Service>(_ value: Service) {
    instance = GraphBox(value)
    isReady.store(true, ordering: .releasing)
  }
}
