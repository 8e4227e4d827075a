import Synchronization

/// The root of a scope tree: where application-wide services are registered and singletons live.
///
/// ```swift
/// let container = try Container { registry in
///   registry.register(Database.self, lifetime: .singleton) { _ in try Postgres(url: databaseURL) }
///   registry.register(UserRepository.self, SQLUserRepository.init)
///   registry.register(UserService.self, UserService.init)
/// }
/// let users = try container.resolve(UserService.self)
/// ```
///
/// A container is a ``Scope`` with the tag ``ScopeTag/root``; everything a scope does, it does.
/// It is safe to share between any number of threads and tasks.
public final class Container: Scope, @unchecked Sendable {
  /// A number no other container of this process has, to tell trees apart without relying on an
  /// address that a freed container may pass on.
  let containerID = Container.treeIDs.add(1, ordering: .relaxed).newValue

  private static let treeIDs = Atomic<UInt>(0)

  /// Creates an empty container.
  ///
  /// ```swift
  /// let container = Container()
  /// try container.register { registry in registry.register(Clock.self) { _ in SystemClock() } }
  /// ```
  public init() {
    super.init(tag: .root, name: nil, links: TreeLinks(retainedParent: nil))
  }

  /// Creates a container holding one batch of registrations, and makes its eager singletons.
  ///
  /// ```swift
  /// let container = try Container { registry in
  ///   registry.register(Metrics.self, lifetime: .eagerSingleton) { _ in try Metrics.connect() }
  /// }
  /// ```
  ///
  /// - Parameter build: Receives a ``Registrar`` to register with.
  /// - Throws: What `build` throws, a ``ResolutionError`` for an invalid registration, or the
  ///   error of an eager singleton's factory. The eager singletons made before it are disposed
  ///   first; if one of their disposers fails too, the error is a ``ScopeExitError``.
  public convenience init(_ build: (Registrar) throws -> Void) throws {
    self.init()
    do {
      try register(build)
    } catch {
      throw ScopeExitError.closing(self, after: error)
    }
  }
}
