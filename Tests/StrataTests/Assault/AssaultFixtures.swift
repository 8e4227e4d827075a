import Foundation
import Strata

// The services and helpers of the second attack suites (`Assault*Tests`), where `Support/` and
// the `Attack` fixtures have no equivalent.

// MARK: - Disposers that record how they ran

/// One sequence for every recording disposer, so that disposals in different scopes can be
/// ordered.
private let disposalSequence = Counter()

/// An asynchronous disposable that runs `action`, then logs its label; counts its disposals,
/// records whether it saw its task cancelled, and stamps its place in the disposal sequence. An
/// error `action` throws is thrown after the label is logged.
final class RecordingAsyncDisposer: AsyncDisposable, Sendable {
  let label: String
  private let log: Collector<String>
  private let action: @Sendable () async throws -> Void
  private let disposals = Counter()
  private let cancellation = Flag()
  private let stamp = Locked<Int>(0)

  init(_ label: String, log: Collector<String>, action: @escaping @Sendable () async throws -> Void = {}) {
    self.label = label
    self.log = log
    self.action = action
  }

  /// How many times `dispose()` began.
  var disposeCount: Int { disposals.value }
  /// Whether a disposal saw its task cancelled, before or after `action`.
  var sawCancelled: Bool { cancellation.isRaised }
  /// The place of the last disposal in the sequence of all recording disposers; 0 if none.
  var disposedAt: Int { stamp.withLock { $0 } }

  func dispose() async throws {
    disposals.increment()
    if Task.isCancelled { cancellation.raise() }
    var failure: (any Error)?
    do { try await action() } catch { failure = error }
    if Task.isCancelled { cancellation.raise() }
    let now = disposalSequence.increment()
    stamp.withLock { $0 = now }
    log.append(label)
    if let failure { throw failure }
  }
}

/// A synchronous disposable that logs its label; counts its disposals, records whether it ran in
/// a cancelled task, and stamps its place in the disposal sequence.
final class RecordingDisposer: Disposable, Sendable {
  let label: String
  private let log: Collector<String>
  private let disposals = Counter()
  private let cancellation = Flag()
  private let stamp = Locked<Int>(0)

  init(_ label: String, log: Collector<String>) {
    self.label = label
    self.log = log
  }

  /// How many times `dispose()` ran.
  var disposeCount: Int { disposals.value }
  /// Whether a disposal ran in a cancelled task.
  var sawCancelled: Bool { cancellation.isRaised }
  /// The place of the last disposal in the sequence of all recording disposers; 0 if none.
  var disposedAt: Int { stamp.withLock { $0 } }

  func dispose() throws {
    disposals.increment()
    if withUnsafeCurrentTask(body: { $0?.isCancelled ?? false }) { cancellation.raise() }
    let now = disposalSequence.increment()
    stamp.withLock { $0 = now }
    log.append(label)
  }
}

/// A disposable that records, for each disposal, whether it ran on the main thread.
final class MainThreadProbe: Disposable, Sendable {
  private let onMain = Locked<[Bool]>([])

  /// One entry per disposal: whether it ran on the main thread.
  var ranOnMain: [Bool] { onMain.withLock { $0 } }

  func dispose() throws {
    let main = Thread.isMainThread
    onMain.withLock { $0.append(main) }
  }
}

// MARK: - Waiting in tasks

/// A one-shot gate that tasks await until another opens it; opening it again does nothing.
final class OneShotGate: Sendable {
  private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

  init() {}

  /// Suspends until the gate is open; returns at once if it already is.
  func wait() async {
    await withCheckedContinuation { continuation in
      let resume = state.withLock { state -> Bool in
        if state.open { return true }
        state.waiters.append(continuation)
        return false
      }
      if resume { continuation.resume() }
    }
  }

  func open() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.open = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }
}

/// Runs `body` in an unstructured task and waits for it (bounded by `timeout`, see
/// ``eventually(timeout:_:)``); returns how it ended, or `nil` if it did not end in time (a hang).
func taskResult<Value: Sendable>(
  within timeout: Duration = .seconds(5), _ body: @escaping @Sendable () async throws -> Value
) async -> Result<Value, any Error>? {
  let result = Slot<Result<Value, any Error>>()
  let done = Flag()
  Task {
    do { result.value = .success(try await body()) } catch { result.value = .failure(error) }
    done.raise()
  }
  guard await eventually(timeout: timeout, { done.isRaised }) else { return nil }
  return result.value
}

// MARK: - Injection targets

/// An object a framework makes inside a scope: its property is injected from the scope current
/// when it was made.
final class AmbientPartHolder: @unchecked Sendable {
  // `@unchecked`: the wrapper's storage is thread-safe; the property is never reassigned.
  @Injected var part: TrackedResource

  init() {}
}

/// An object whose property is injected from the scope it is given.
final class ExplicitPartHolder: @unchecked Sendable {
  // `@unchecked`: the wrapper's storage is thread-safe; the property is never reassigned.
  @Injected var part: TrackedResource

  init(from scope: Scope) {
    _part = Injected(from: scope)
  }
}

/// An ``Injectable`` target that records every bundle it receives; safe to inject into from
/// several threads.
final class RecordingScreen: Injectable, Sendable {
  struct Dependencies: Sendable {
    let part: TrackedResource
  }

  private let bundles = Collector<Dependencies>()

  init() {}

  /// Every bundle received, in order.
  var received: [Dependencies] { bundles.elements }

  func inject(_ dependencies: Dependencies) {
    bundles.append(dependencies)
  }
}

/// A service whose factory reads ``SelfReadingHolder/looped``, the property it is injected into.
final class LoopedService: Sendable {
  init() {}
}

/// An object whose injected property's factory reads that same property.
final class SelfReadingHolder: @unchecked Sendable {
  // `@unchecked`: the wrapper's storage is thread-safe; the property is never reassigned.
  @Injected var looped: LoopedService

  init(from scope: Scope) {
    _looped = Injected(from: scope)
  }
}

// MARK: - Names and arguments

/// A name compared by identity: two instances are two names, whatever they hold.
final class IdentityName: Hashable, Sendable {
  init() {}

  static func == (lhs: IdentityName, rhs: IdentityName) -> Bool { lhs === rhs }

  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A name with associated values, one of them recursive.
enum ShardName: Hashable, Sendable {
  case tenant(id: String, shard: Int)
  case global
  indirect case nested(ShardName)
}

/// A runtime argument that is a value type holding a reference to mutable state, so not
/// `Sendable`.
struct MutableHandle {
  let storage: NSMutableArray
}

// MARK: - Outcomes

extension Outcome {
  /// The identity of the object the body returned; `nil` if it threw.
  var instance: ObjectIdentifier? {
    if case .success(let instance) = self { return instance }
    return nil
  }
}
