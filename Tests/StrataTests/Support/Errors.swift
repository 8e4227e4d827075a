import Strata
import Testing

// Catching the errors a resolve or a close throws.

/// The ``ResolutionError`` that `body` throws; records an issue and returns `nil` if it throws
/// nothing or another error.
///
/// Unlike `#require(throws:)`, this is a plain function, so registrations made inside `body` keep
/// their own `#line` (inside a macro argument, `#line` is the macro's line).
func resolutionError(
  sourceLocation: Testing.SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> ResolutionError? {
  do {
    try body()
    Issue.record("expected a ResolutionError, but nothing was thrown", sourceLocation: sourceLocation)
  } catch let error as ResolutionError {
    return error
  } catch {
    Issue.record("expected a ResolutionError, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}

/// The ``ResolutionError`` that the asynchronous `body` throws, as ``resolutionError(sourceLocation:_:)``.
func asyncResolutionError(
  sourceLocation: Testing.SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> ResolutionError? {
  do {
    try await body()
    Issue.record("expected a ResolutionError, but nothing was thrown", sourceLocation: sourceLocation)
  } catch let error as ResolutionError {
    return error
  } catch {
    Issue.record("expected a ResolutionError, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}

/// The underlying errors of a ``ResolutionError/disposalErrors`` list, unwrapped from their
/// ``DisposalError``.
func underlyingErrors(_ errors: [any Error]) -> [any Error] {
  errors.map { ($0 as? DisposalError)?.underlying ?? $0 }
}
