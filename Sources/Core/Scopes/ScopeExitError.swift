/// An error that ended a scope's body, together with the disposer errors of closing that scope
/// afterwards: neither is lost.
///
/// ``Scope/withScope(_:name:_:)`` (and the failing ``Container/init(_:)`` or
/// ``Scope/makeScope(_:name:_:)`` that close what they made) throw the body's error unchanged when
/// the scope then closes cleanly. Only when a disposer fails as well do they throw this, carrying
/// both:
///
/// ```swift
/// do {
///   try await container.withScope(.request) { scope in try await handle(request, in: scope) }
/// } catch let error as ScopeExitError {
///   log.error("request failed: \(error.bodyError); cleanup failed: \(error.disposalErrors)")
/// }
/// ```
public struct ScopeExitError: Error, CustomStringConvertible {
  /// What the body threw: the reason the scope was closed early.
  public let bodyError: any Error
  /// What the disposers threw while the scope closed, in the order they ran.
  public let disposalErrors: [any Error]

  /// The body's error, then each disposer error on its own line.
  public var description: String {
    (["\(bodyError)"] + disposalErrors.map { "  disposer error while closing: \($0)" })
      .joined(separator: "\n")
  }

  /// Closes `scope` after `error`, and returns the error to throw: `error` itself if the close
  /// succeeded, otherwise both.
  package static func closing(_ scope: Scope, after bodyError: any Error) -> any Error {
    do {
      try scope.close()
      return bodyError
    } catch {
      return ScopeExitError(bodyError: bodyError, disposalErrors: Scope.flatten(error))
    }
  }

  /// The asynchronous ``closing(_:after:)``, which awaits asynchronous disposers. (Named apart
  /// from it so that the synchronous close is never picked by accident.)
  @usableFromInline
  static func awaitingClose(of scope: Scope, after bodyError: any Error) async -> any Error {
    do {
      try await scope.closeAwaitingDisposers()
      return bodyError
    } catch {
      return ScopeExitError(bodyError: bodyError, disposalErrors: Scope.flatten(error))
    }
  }
}
