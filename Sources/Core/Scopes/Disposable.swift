/// A service that releases resources when the scope owning it closes.
///
/// ```swift
/// final class Connection: Disposable {
///   func dispose() throws { try socket.close() }
/// }
/// registry.register(Connection.self, lifetime: .scoped(.request)) { _ in try Connection.open() }
/// ```
///
/// A scope disposes the instances it owns — the singletons it registered and the scoped instances
/// it holds — in reverse creation order, each exactly once, when it closes. Transient, graph and
/// weak instances belong to whoever resolved them; no scope keeps or disposes them, so resolving
/// transients from a long-lived container never piles them up.
public protocol Disposable {
  /// Releases the instance's resources. A thrown error is collected; the remaining disposers
  /// still run.
  ///
  /// - Throws: Any error; the closing scope reports it in a ``ResolutionError`` with code
  ///   ``ResolutionError/Code/disposalFailed``.
  func dispose() throws
}

/// A service whose clean-up is asynchronous, such as draining a connection pool.
///
/// ```swift
/// final class Pool: AsyncDisposable {
///   func dispose() async throws { try await drain() }
/// }
/// try await scope.close()
/// ```
///
/// Close a scope that may own such instances with `try await scope.close()`; see
/// ``Scope/close()-70h7``.
public protocol AsyncDisposable {
  /// Releases the instance's resources.
  ///
  /// - Throws: Any error; it is collected, and the remaining disposers still run.
  func dispose() async throws
}

/// One entry of a scope's disposal stack.
///
/// `@unchecked Sendable`: the instance is only touched by the closing scope, once, after every
/// reference the scope handed out was made; concurrent use by the service's other holders is
/// the service's own business, as it is for any shared instance.
@usableFromInline
struct Disposal: @unchecked Sendable {
  enum Action {
    case sync(any Disposable)
    case async(any AsyncDisposable)
  }

  let key: ServiceKey
  let action: Action

  /// The disposal an instance needs, if any. Called once per shared instance, when it is created.
  @usableFromInline
  static func of(_ instance: Any, key: ServiceKey) -> Disposal? {
    switch DisposalKind.of(instance, type: Swift.type(of: instance)) {
    case .none:
      return nil
    case .async:
      guard let disposable = instance as? any AsyncDisposable else { return nil }
      return Disposal(key: key, action: .async(disposable))
    case .sync:
      guard let disposable = instance as? any Disposable else { return nil }
      return Disposal(key: key, action: .sync(disposable))
    }
  }
}

/// A disposer's error, with the service it came from.
public struct DisposalError: Error, CustomStringConvertible {
  /// The service whose disposer failed.
  public let key: ServiceKey
  /// What the disposer threw.
  public let underlying: any Error

  /// `Connection: <error>`.
  public var description: String { "\(key): \(underlying)" }
}

/// Which disposal protocol a type conforms to, remembered per type for the whole process (see
/// ``TypeFacts``): the first instance of a type pays for the casts that fail, and later instances
/// do at most the one cast that succeeds, which is cheap.
enum DisposalKind: UInt {
  case none = 1
  case sync = 2
  case async = 3

  private static let facts = TypeFacts()

  /// The kind of `instance`, whose dynamic type is `type`.
  static func of(_ instance: Any, type: Any.Type) -> DisposalKind {
    let fact = facts.fact(for: type) {
      if instance is any AsyncDisposable { return DisposalKind.async.rawValue }
      if instance is any Disposable { return DisposalKind.sync.rawValue }
      return DisposalKind.none.rawValue
    }
    return DisposalKind(rawValue: fact) ?? .none
  }
}
