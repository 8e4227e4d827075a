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
    let type = Swift.type(of: instance)
    let kind = DisposalKind.known(for: type) ?? DisposalKind.learn(for: type, from: instance)
    switch kind {
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

/// Which disposal protocol a type conforms to, remembered per type for the whole process.
///
/// A cast that fails (`instance as? any AsyncDisposable` for a type that is not) costs the Swift
/// runtime on Linux a scan of every conformance record, tens of thousands of instructions, each
/// time (the failure is not cached), and every instance a scope or singleton makes needs one or
/// two of them; a cast that succeeds is cheap. So the first instance of a type
/// pays for the failing casts and records the answer, and later instances do at most the one cast
/// that succeeds. The record is one word, the type's metadata address with the kind in its low
/// bits, in a fixed table indexed by that address: type metadata is never freed, so an address
/// names one type for the life of the process, and a collision only costs the casts again.
enum DisposalKind: UInt {
  case none = 1
  case sync = 2
  case async = 3

  private static let table = AtomicWordTable(minimumCount: 4_096)
  private static let kindBits: UInt = 3

  /// The kind recorded for `type`, if any.
  static func known(for type: Any.Type) -> DisposalKind? {
    let address = UInt(bitPattern: ObjectIdentifier(type))
    let word = table.load(for: address)
    guard word & ~kindBits == address else { return nil }
    return DisposalKind(rawValue: word & kindBits)
  }

  /// Finds `instance`'s kind with the casts and records it for `type`, its dynamic type.
  static func learn(for type: Any.Type, from instance: Any) -> DisposalKind {
    let kind: DisposalKind =
      if instance is any AsyncDisposable {
        .async
      } else if instance is any Disposable {
        .sync
      } else {
        .none
      }
    let address = UInt(bitPattern: ObjectIdentifier(type))
    // Metadata is at least 8-byte aligned, so the low bits are free for the kind.
    if address & kindBits == 0 { table.store(address | kind.rawValue, for: address) }
    return kind
  }
}
