import Foundation
import Strata
import Synchronization
import Testing

// Fixtures for the scope-tree suites (ScopeTree, ScopedLifetime, CaptiveDependency, Disposal,
// ClosedScope, AmbientScope, Injected, Injectable, ScopeConcurrency). Every name carries a `Scope`
// prefix so that it never clashes with the fixtures of the other suites.

// MARK: - Tags and names

extension ScopeTag {
  /// A custom tag, as an application would declare one.
  static let scopeTestTenant = ScopeTag("tenant")
}

/// Names for several registrations of one type.
enum ScopeTestSlot: Hashable, Sendable {
  case first
  case second
  case third
}

// MARK: - Thread-safe recorders

/// A value guarded by a lock that ThreadSanitizer understands.
///
/// `Synchronization.Mutex` is built on futexes on Linux, which ThreadSanitizer does not see (it
/// reports accesses under a `Mutex` as races); `NSLock` is a pthread mutex, which it does see.
///
/// `@unchecked Sendable`: `value` is read and written only while `lock` is held.
final class ScopeTestLocked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// An ordered log of events (creations, disposals) that any thread may append to.
final class ScopeTestLog: Sendable {
  private let storage = ScopeTestLocked<[String]>([])

  init() {}

  func append(_ entry: String) {
    storage.withLock { $0.append(entry) }
  }

  /// Everything logged so far, in order.
  var entries: [String] { storage.withLock { $0 } }
}

/// Counts factory runs, creations, disposals; safe to share between threads.
final class ScopeTestCounter: Sendable {
  private let storage = Atomic<Int>(0)

  init() {}

  /// Adds one and returns the new count.
  @discardableResult
  func increment() -> Int {
    storage.add(1, ordering: .sequentiallyConsistent).newValue
  }

  var value: Int { storage.load(ordering: .sequentiallyConsistent) }
}

/// Holds one value, set by one task and read by another.
final class ScopeTestBox<Value: Sendable>: Sendable {
  private let storage = ScopeTestLocked<Value?>(nil)

  init() {}

  var value: Value? {
    get { storage.withLock { $0 } }
    set { storage.withLock { $0 = newValue } }
  }
}

// MARK: - Services

/// A plain service that knows where it came from.
final class ScopeTestService: Sendable {
  let label: String

  init(_ label: String) {
    self.label = label
  }
}

/// A dependency that child scopes override.
final class ScopeTestDependency: Sendable {
  let origin: String

  init(origin: String) {
    self.origin = origin
  }
}

/// A service holding a ``ScopeTestDependency``.
final class ScopeTestConsumer: Sendable {
  let dependency: ScopeTestDependency

  init(dependency: ScopeTestDependency) {
    self.dependency = dependency
  }
}

/// The error a failing disposer throws.
struct ScopeTestDisposalFailure: Error, Equatable {
  let label: String
}

/// A synchronous ``Disposable`` that logs `dispose <label>` and counts its disposals.
final class ScopeTestResource: Disposable, Sendable {
  let label: String
  private let log: ScopeTestLog?
  private let disposed: ScopeTestCounter?
  private let fails: Bool
  private let disposals = Atomic<Int>(0)

  /// - Parameters:
  ///   - label: Appears in the log.
  ///   - log: Where to log the disposal.
  ///   - disposed: A counter shared by many instances, incremented on each disposal.
  ///   - fails: Whether `dispose()` throws ``ScopeTestDisposalFailure`` (after logging).
  init(_ label: String, log: ScopeTestLog? = nil, disposed: ScopeTestCounter? = nil, fails: Bool = false) {
    self.label = label
    self.log = log
    self.disposed = disposed
    self.fails = fails
  }

  /// How many times `dispose()` ran.
  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }

  func dispose() throws {
    disposals.add(1, ordering: .sequentiallyConsistent)
    disposed?.increment()
    log?.append("dispose \(label)")
    if fails { throw ScopeTestDisposalFailure(label: label) }
  }
}

/// An ``AsyncDisposable`` that suspends before it logs `async dispose <label>`.
final class ScopeTestAsyncResource: AsyncDisposable, Sendable {
  let label: String
  private let log: ScopeTestLog?
  private let disposals = Atomic<Int>(0)

  init(_ label: String, log: ScopeTestLog? = nil) {
    self.label = label
    self.log = log
  }

  /// How many times `dispose()` ran to its end.
  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }

  func dispose() async throws {
    await Task.yield()
    disposals.add(1, ordering: .sequentiallyConsistent)
    log?.append("async dispose \(label)")
  }
}

// MARK: - Helpers

/// The ``ResolutionError`` that `body` throws; records an issue and returns `nil` if it throws
/// nothing or another error.
///
/// `body` is synchronous, so inside it `scope.close()` is the synchronous close, even when the
/// caller is `async`.
func scopeResolutionError(
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

/// The ``ResolutionError`` that the asynchronous `body` throws, as ``scopeResolutionError(_:)``.
func scopeAsyncResolutionError(
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

/// Closes `scope` with the synchronous `close()`, whatever context the caller runs in.
func scopeTestCloseSynchronously(_ scope: Scope) throws {
  try scope.close()
}

/// The underlying errors of a ``ResolutionError/disposalErrors`` list, unwrapped from their
/// ``DisposalError``.
func scopeTestUnderlying(_ errors: [any Error]) -> [any Error] {
  errors.map { ($0 as? DisposalError)?.underlying ?? $0 }
}

/// Whether `key` is the plain key of `type`: no name, no runtime arguments.
func scopeTestIsKey(_ key: ServiceKey, of type: Any.Type) -> Bool {
  ObjectIdentifier(key.serviceType) == ObjectIdentifier(type) && !key.isNamed && !key.hasArguments
}

/// Waits (polling, bounded by `timeout`) until `condition` holds; returns whether it did.
func scopeTestEventually(
  timeout: Duration = .seconds(30), _ condition: @Sendable () -> Bool
) async -> Bool {
  let deadline = ContinuousClock.now + timeout
  while !condition() {
    if ContinuousClock.now >= deadline { return false }
    try? await Task.sleep(for: .milliseconds(1))
  }
  return true
}
