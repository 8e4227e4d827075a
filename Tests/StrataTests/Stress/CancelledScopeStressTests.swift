import Foundation
import Strata
import Synchronization
import Testing

/// `withScope` in a task that is cancelled: closing the scope is clean-up that cancellation must
/// not cut short, and disposal errors on the throw path must reach the caller.
@Suite struct CancelledScopeStressTests {
  static let rounds = 20

  /// A container with three request-scoped disposers doing cancellation-aware work.
  private static func container(_ disposers: [StressCancellableDisposer]) throws -> Container {
    try Container { registry in
      for (index, disposer) in disposers.enumerated() {
        registry.register(StressCancellableDisposer.self, name: index, lifetime: .scoped(.request)) { _ in
          disposer
        }
      }
    }
  }

  /// Runs `withScope` in a task that resolves the disposers, then cancels the task while `body`
  /// waits; returns the task's outcome.
  private static func cancelledWithScope(
    _ container: Container, disposers: Int,
    wait: @escaping @Sendable () async throws -> Void
  ) async -> Result<Void, any Error> {
    let entered = Atomic<Bool>(false)
    let task = Task {
      try await container.withScope(.request) { scope in
        for index in 0..<disposers { _ = try scope.resolve(StressCancellableDisposer.self, name: index) }
        entered.store(true, ordering: .sequentiallyConsistent)
        try await wait()
      }
    }
    _ = await stressWait(seconds: 20) { entered.load(ordering: .sequentiallyConsistent) }
    task.cancel()
    return await task.result
  }

  /// The body throws `CancellationError` (it was waiting in `Task.sleep`); the close on that throw
  /// path still runs every async disposer to completion.
  @Test(.timeLimit(.minutes(1)))
  func cancellationAwareDisposersCompleteWhenTheBodyThrowsBecauseOfTheCancellation() async throws {
    var failures: [String] = []
    for round in 0..<Self.rounds {
      let disposers = (0..<3).map { _ in StressCancellableDisposer() }
      let container = try Self.container(disposers)
      let result = await Self.cancelledWithScope(container, disposers: 3) {
        try await Task.sleep(for: .seconds(10))
      }
      if case .failure(let error) = result, !(error is CancellationError) {
        failures.append("round \(round): the caller got \(error), not the body's CancellationError")
      }
      let completed = disposers.map(\.completionCount)
      if completed != [1, 1, 1] {
        failures.append(
          "round \(round): disposers started \(disposers.map(\.startCount)), completed \(completed); "
            + "each must run to completion once")
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(5))")
  }

  /// The body notices nothing and returns normally in a cancelled task; the close still runs
  /// every async disposer to completion, and nothing is thrown.
  @Test(.timeLimit(.minutes(1)))
  func cancellationAwareDisposersCompleteWhenTheBodyReturnsInACancelledTask() async throws {
    var failures: [String] = []
    for round in 0..<Self.rounds {
      let disposers = (0..<3).map { _ in StressCancellableDisposer() }
      let container = try Self.container(disposers)
      let result = await Self.cancelledWithScope(container, disposers: 3) {
        while !Task.isCancelled { await Task.yield() }
      }
      if case .failure(let error) = result {
        failures.append("round \(round): the caller got \(error), though neither body nor disposers failed")
      }
      let completed = disposers.map(\.completionCount)
      if completed != [1, 1, 1] {
        failures.append(
          "round \(round): disposers started \(disposers.map(\.startCount)), completed \(completed); "
            + "each must run to completion once")
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(5))")
  }

  /// A disposer's error on the throw path (the body threw) reaches the caller of the async
  /// `withScope`, in a cancelled task or not.
  @Test(.timeLimit(.minutes(1)), arguments: [false, true])
  func disposalErrorsOnTheThrowPathReachTheCallerOfAsyncWithScope(cancelled: Bool) async throws {
    var failures: [String] = []
    for round in 0..<Self.rounds {
      let failing = StressCancellableDisposer(fails: true)
      let probe = StressProbe("sync", fails: true)
      let container = try Container { registry in
        registry.register(StressCancellableDisposer.self, lifetime: .scoped(.request)) { _ in failing }
        registry.register(StressProbe.self, lifetime: .scoped(.request)) { _ in probe }
      }
      let entered = Atomic<Bool>(false)
      let task = Task {
        try await container.withScope(.request) { scope in
          _ = try scope.resolve(StressCancellableDisposer.self)
          _ = try scope.resolve(StressProbe.self)
          entered.store(true, ordering: .sequentiallyConsistent)
          if cancelled {
            while !Task.isCancelled { await Task.yield() }
          }
          throw StressBodyFault()
        }
      }
      if cancelled {
        _ = await stressWait(seconds: 20) { entered.load(ordering: .sequentiallyConsistent) }
        task.cancel()
      }
      let result = await task.result
      guard case .failure(let error) = result else {
        failures.append("round \(round): withScope returned though its body threw")
        continue
      }
      if !stressContains(error, StressDisposalFault.self) {
        failures.append("round \(round): the caller got \(error), which carries no disposer error")
      }
      if failing.completionCount != 1 || probe.disposeCount != 1 {
        failures.append(
          "round \(round): disposers completed \(failing.completionCount) and \(probe.disposeCount) times")
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(5))")
  }

  /// Cancelled tasks that `await close()` a scope whose close another task is running wait for it
  /// without blocking their threads: eight of them (more than the cooperative pool has threads
  /// on a small machine) must not starve the close they wait for. A deadlock here starves the
  /// whole pool, so a watchdog thread ends the process instead of letting it hang.
  @Test(.timeLimit(.minutes(1)))
  func cancelledTasksWaitingForAnotherCloseDoNotStarveIt() async throws {
    let watchdog = StressWatchdog(
      seconds: 55,
      "cancelled tasks waiting in `await close()` starved the close they wait for "
        + "(CancelledScopeStressTests.cancelledTasksWaitingForAnotherCloseDoNotStarveIt)")
    defer { watchdog.disarm() }
    for round in 0..<5 {
      let disposer = StressCancellableDisposer(milliseconds: 20)
      let container = try Container { registry in
        registry.register(StressCancellableDisposer.self, lifetime: .scoped(.request)) { _ in disposer }
      }
      let request = try container.makeScope(.request)
      _ = try request.resolve(StressCancellableDisposer.self)

      let first = Task { try await request.close() }
      // The window only ends a run that would otherwise wait for ever: the first close's task may
      // queue behind hundreds of other tests' tasks on a loaded two-core machine (7 s in CI once).
      let started = await stressWait(seconds: 20) { disposer.startCount == 1 }
      #expect(started, "round \(round): the first close never started the disposer")
      let waiters = (0..<8).map { _ in
        Task {
          withUnsafeCurrentTask { $0?.cancel() }
          try await request.close()
          return disposer.completionCount
        }
      }
      try await first.value
      for waiter in waiters {
        let completed = try await waiter.value
        #expect(completed == 1, "round \(round): a waiting close returned before the disposer completed")
      }
      #expect(disposer.completionCount == 1)
    }
  }

  /// The same for the synchronous `withScope`.
  @Test(.timeLimit(.minutes(1)))
  func disposalErrorsOnTheThrowPathReachTheCallerOfSyncWithScope() throws {
    let probe = StressProbe("sync", fails: true)
    let container = try Container { registry in
      registry.register(StressProbe.self, lifetime: .scoped(.request)) { _ in probe }
    }
    do {
      try container.withScope(.request) { scope in
        _ = try scope.resolve(StressProbe.self)
        throw StressBodyFault()
      }
      Issue.record("withScope returned though its body threw")
    } catch {
      #expect(
        stressContains(error, StressDisposalFault.self),
        "the caller got \(error), which carries no disposer error")
    }
    #expect(probe.disposeCount == 1)
  }
}
