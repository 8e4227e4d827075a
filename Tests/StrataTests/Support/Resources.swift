import Strata
import Synchronization

// Disposable services: they count and log their disposals, so that the suites can check what was
// disposed, in which order, and how often.

/// The error a failing disposer throws.
struct DisposalFailure: Error, Equatable {
  let label: String
}

/// A synchronous ``Disposable`` that logs `dispose <label>` and counts its disposals.
final class TrackedResource: Disposable, Sendable {
  let label: String
  private let log: Collector<String>?
  private let disposed: Counter?
  private let fails: Bool
  private let disposals = Atomic<Int>(0)

  /// - Parameters:
  ///   - label: Appears in the log.
  ///   - log: Where to log the disposal.
  ///   - disposed: A counter shared by many instances, incremented on each disposal.
  ///   - fails: Whether `dispose()` throws ``DisposalFailure`` (after logging).
  init(_ label: String, log: Collector<String>? = nil, disposed: Counter? = nil, fails: Bool = false) {
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
    if fails { throw DisposalFailure(label: label) }
  }
}

/// An ``AsyncDisposable`` that suspends before it logs `async dispose <label>`.
final class AsyncTrackedResource: AsyncDisposable, Sendable {
  let label: String
  private let log: Collector<String>?
  private let disposals = Atomic<Int>(0)

  init(_ label: String, log: Collector<String>? = nil) {
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

/// A disposable whose disposal is slow, to keep a close running while another one arrives; logs
/// `dispose <label>` when it is done.
final class SlowResource: Disposable, Sendable {
  let label: String
  private let log: Collector<String>
  private let started: Flag?

  init(_ label: String, log: Collector<String>, started: Flag? = nil) {
    self.label = label
    self.log = log
    self.started = started
  }

  func dispose() throws {
    started?.raise()
    pause(microseconds: 30_000)
    log.append("dispose \(label)")
  }
}

/// An asynchronous disposer that does cancellation-aware work, as a rollback call would.
final class RollbackResource: AsyncDisposable, Sendable {
  private let completed: Flag

  init(completed: Flag) {
    self.completed = completed
  }

  func dispose() async throws {
    try await Task.sleep(for: .milliseconds(2))
    completed.raise()
  }
}

/// A connection whose disposal its dependents must outlive: they check `isOpen` in their own
/// disposers.
final class TrackedConnection: Disposable, Sendable {
  private let disposed = Atomic<Bool>(false)
  var isOpen: Bool { !disposed.load(ordering: .sequentiallyConsistent) }
  func dispose() throws { disposed.store(true, ordering: .sequentiallyConsistent) }
}
