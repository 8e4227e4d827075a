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
/// The instance is held as a class-bound existential (a reference and a witness table), so that
/// filing, moving and running a disposal copies no opaque existential; an instance of a value type
/// is boxed in a ``DisposableValue`` or ``AsyncDisposableValue`` first.
///
/// `@unchecked Sendable`: the instance is only touched by the closing scope, once, after every
/// reference the scope handed out was made; concurrent use by the service's other holders is
/// the service's own business, as it is for any shared instance.
@usableFromInline
struct Disposal: @unchecked Sendable {
  @usableFromInline
  enum Action {
    case sync(any Disposable & AnyObject)
    case async(any AsyncDisposable & AnyObject)
  }

  @usableFromInline let key: ServiceKey
  @usableFromInline let action: Action

  @usableFromInline
  init(key: ServiceKey, action: Action) {
    self.key = key
    self.action = action
  }

  /// The disposal an instance needs, if any. Called once per shared instance, when it is created.
  ///
  /// Inlined into code specialised for the instance's static type: the kind comes from
  /// ``DisposalKind`` (remembered per dynamic type), so no cast that fails is made, and the one
  /// that succeeds starts from the static type, not from `Any`. For a class, that cast to the
  /// class-bound existential is a look-up in the runtime's conformance cache (about 300
  /// instructions; a cast from `Any` was about 1,700).
  @inlinable
  static func of<Instance>(_ instance: Instance, key: ServiceKey) -> Disposal? {
    let kind = DisposalKind.of(Swift.type(of: instance)) {
      if instance is any AsyncDisposable { return .async }
      if instance is any Disposable { return .sync }
      return DisposalKind.none
    }
    switch kind {
    case .none:
      return nil
    case .async:
      if let object = instance as? any AsyncDisposable & AnyObject {
        return Disposal(key: key, action: .async(object))
      }
      guard let value = instance as? any AsyncDisposable else { return nil }
      return Disposal(key: key, action: .async(AsyncDisposableValue(value)))
    case .sync:
      if let object = instance as? any Disposable & AnyObject {
        return Disposal(key: key, action: .sync(object))
      }
      guard let value = instance as? any Disposable else { return nil }
      return Disposal(key: key, action: .sync(DisposableValue(value)))
    }
  }
}

/// A ``Disposable`` instance of a value type, boxed for the disposal stack.
@usableFromInline
final class DisposableValue: Disposable {
  let value: any Disposable

  @usableFromInline
  init(_ value: any Disposable) { self.value = value }

  @usableFromInline func dispose() throws { try value.dispose() }
}

/// An ``AsyncDisposable`` instance of a value type, boxed for the disposal stack.
@usableFromInline
final class AsyncDisposableValue: AsyncDisposable {
  let value: any AsyncDisposable

  @usableFromInline
  init(_ value: any AsyncDisposable) { self.value = value }

  @usableFromInline func dispose() async throws { try await value.dispose() }
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
/// make only the one cast that succeeds (see ``Disposal/of(_:key:)``).
@usableFromInline
enum DisposalKind: UInt {
  case none = 1
  case sync = 2
  case async = 3

  private static let facts = TypeFacts()

  /// The kind of instances whose dynamic type is `type`; `compute` finds it for the first one.
  @usableFromInline
  static func of(_ type: Any.Type, compute: () -> DisposalKind) -> DisposalKind {
    DisposalKind(rawValue: facts.fact(for: type) { compute().rawValue }) ?? .none
  }
}
