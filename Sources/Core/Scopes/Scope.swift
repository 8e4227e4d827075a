import Synchronization

/// A node of the scope tree: the ``Container`` at the root, and request, session or custom scopes
/// below it.
///
/// A scope resolves services by looking for the nearest registration, from itself up to the root.
/// It owns the instances its registrations' lifetimes give it, and disposes them when it closes.
///
/// ```swift
/// let request = try container.makeScope(.request)
/// let handler = try request.resolve(RequestHandler.self)
/// try handler.handle()
/// try request.close()   // disposes the request's scoped instances
/// ```
///
/// Scopes are safe to use from any number of threads and tasks at once.
///
/// `@unchecked Sendable`: immutable `let`s, atomics, state under the `state` mutex, and the sibling
/// links, which are read and written only under the parent's `state` mutex. The class is not
/// `open`; ``Container`` is its only subclass.
public class Scope: @unchecked Sendable, CustomStringConvertible {
  /// What kind of scope this is: `.root` for a ``Container``, `.request`, `.session`, or custom.
  public let tag: ScopeTag
  /// An optional label for messages, such as a session or request id.
  public let name: String?
  /// The enclosing scope; `nil` for the ``Container``.
  public let parent: Scope?
  @usableFromInline let parentReference: Unmanaged<Scope>?
  /// This scope's current registry snapshot; `nil` while it has no registrations of its own.
  @usableFromInline let registry = Atomic<Unmanaged<Registry>?>(nil)
  /// Set when closing starts; never cleared.
  @usableFromInline let closing = Atomic<Bool>(false)
  let state = Mutex(ScopeState())
  /// Links among the parent's live children, guarded by the parent's `state`.
  var nextSibling: Scope?
  var previousSibling: Unmanaged<Scope>?

  init(tag: ScopeTag, name: String?, parent: Scope?) {
    self.tag = tag
    self.name = name
    self.parent = parent
    self.parentReference = parent.map { Unmanaged.passUnretained($0) }
  }

  /// Whether ``close()-5tp9t`` has started: a closed scope resolves nothing and makes no children.
  public final var isClosed: Bool { closing.load(ordering: .acquiring) }

  /// The nearest registration for an unnamed key, from `start` up to the root.
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

  /// The nearest registration for a named key, from `start` up to the root.
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
  func publish(_ additions: [AnyRegistration]) throws {
    guard !additions.isEmpty else { return }
    try state.withLock { state in
      guard !isClosed else { throw closedError(additions[0].key) }
      let previous = registry.load(ordering: .acquiring)?.takeUnretainedValue()
      let snapshot = Registry(previous: previous, adding: additions)
      state.snapshots.append(snapshot)
      registry.store(Unmanaged.passUnretained(snapshot), ordering: .releasing)
    }
  }

  /// `root → session("s1") → request`.
  var chainDescription: String {
    var names: [String] = []
    var current: Scope? = self
    while let scope = current {
      names.append(scope.description)
      current = scope.parent
    }
    return names.reversed().joined(separator: " → ")
  }

  /// `request`, or `session("s1")` for a named scope.
  public var description: String {
    guard let name else { return tag.name }
    return "\(tag.name)(\"\(name)\")"
  }

  /// The error for resolving `key` from this closed scope.
  func closedError(_ key: ServiceKey) -> ResolutionError {
    ResolutionError(
      code: .scopeClosed, key: key, registeredAt: nil,
      hintSource: .text(
        "\(chainDescription) is closed; resolve from an open scope, and close a scope only after "
          + "its last use"))
  }
}

/// What a scope guards with its mutex.
struct ScopeState {
  /// Every snapshot this scope published, kept alive for readers that may still hold one.
  var snapshots: [Registry] = []
  /// The instances of `scoped` registrations this scope owns, and those being created.
  var scoped = ScopedSlots()
  /// What to dispose on close, in creation order.
  var disposals: [Disposal] = []
  /// The first of the live child scopes, linked through their sibling links.
  var firstChild: Scope?
}
