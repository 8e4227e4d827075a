import Synchronization

/// A node of the scope tree: the ``Container`` at the root, and request, session or custom scopes
/// below it.
///
/// A scope resolves services by looking for the nearest registration, from itself up to the root.
/// It owns the instances its registrations' lifetimes give it and disposes them when it is closed.
///
/// ```swift
/// let request = try container.makeScope(.request)
/// defer { request.close() }
/// let handler = try request.resolve(RequestHandler.self)
/// ```
///
/// Scopes are safe to use from any number of threads and tasks at once.
///
/// `@unchecked Sendable`: immutable `let`s, an atomic registry pointer, and mutable state reached
/// only under `lock`. The class is not `open`; ``Container`` is its only subclass.
public class Scope: @unchecked Sendable {
  /// What kind of scope this is: `.root` for a ``Container``, `.request`, `.session`, or custom.
  public let tag: ScopeTag
  /// The enclosing scope; `nil` for the ``Container``.
  public let parent: Scope?
  @usableFromInline let parentReference: Unmanaged<Scope>?
  /// This scope's current registry snapshot; `nil` while it has no registrations of its own.
  @usableFromInline let registry = Atomic<Unmanaged<Registry>?>(nil)
  let lock = Lock()
  /// Every snapshot this scope published, kept alive for readers that may still hold one.
  var snapshots: [Registry] = []
  /// Instances of `scoped` registrations this scope owns, by registration.
  var scopedEntries: [ObjectIdentifier: ScopedEntry] = [:]

  init(tag: ScopeTag, parent: Scope?) {
    self.tag = tag
    self.parent = parent
    self.parentReference = parent.map { Unmanaged.passUnretained($0) }
  }

  /// The nearest registration for an unnamed key, from this scope up to the root.
  @inlinable @inline(__always)
  static func find(from start: Unmanaged<Scope>, service: UInt, arguments: UInt) -> Found? {
    var current = start
    while true {
      if let registry = current._withUnsafeGuaranteedRef({ $0.registry.load(ordering: .acquiring) }),
        let registration = registry._withUnsafeGuaranteedRef({
          $0.find(service: service, arguments: arguments)
        })
      {
        return Found(registration: registration, owner: current)
      }
      guard let parent = current._withUnsafeGuaranteedRef({ $0.parentReference }) else { return nil }
      current = parent
    }
  }

  /// The nearest registration for a named key, from this scope up to the root.
  @inlinable @inline(__always)
  static func find<Name: Hashable & Sendable>(
    from start: Unmanaged<Scope>, service: UInt, arguments: UInt, name: Name
  ) -> Found? {
    var current = start
    while true {
      if let registry = current._withUnsafeGuaranteedRef({ $0.registry.load(ordering: .acquiring) }),
        let registration = registry._withUnsafeGuaranteedRef({
          $0.find(service: service, arguments: arguments, name: name)
        })
      {
        return Found(registration: registration, owner: current)
      }
      guard let parent = current._withUnsafeGuaranteedRef({ $0.parentReference }) else { return nil }
      current = parent
    }
  }

  /// The current snapshots from this scope up to the root, nearest first.
  func registryChain() -> [Registry] {
    registryChainWithOwners().map(\.1)
  }

  /// The current snapshots with the scope holding each, nearest first.
  func registryChainWithOwners() -> [(Scope, Registry)] {
    var result: [(Scope, Registry)] = []
    var current: Scope? = self
    while let scope = current {
      if let registry = scope.registry.load(ordering: .acquiring) {
        result.append((scope, registry.takeUnretainedValue()))
      }
      current = scope.parent
    }
    return result
  }

  /// Publishes a snapshot with `additions` appended. Only the snapshot build runs under the lock;
  /// no user code does.
  func publish(_ additions: [AnyRegistration]) {
    guard !additions.isEmpty else { return }
    lock.withLock {
      let previous = registry.load(ordering: .acquiring)?.takeUnretainedValue()
      let snapshot = Registry(previous: previous, adding: additions)
      snapshots.append(snapshot)
      registry.store(Unmanaged.passUnretained(snapshot), ordering: .releasing)
    }
  }

  /// The scopes from this one up to the root, for error messages: `root → session → request`.
  var chainDescription: String {
    var names: [String] = []
    var current: Scope? = self
    while let scope = current {
      names.append(scope.tag.name)
      current = scope.parent
    }
    return names.reversed().joined(separator: " → ")
  }
}
