import Foundation
import Strata
import Synchronization
import Testing

/// Stress tests that fail on today's `main` because the defect they show is not fixed yet. Each is
/// disabled with the defect it waits for; enable it (and move it back to its suite) with the fix.
@Suite struct PendingDefects {
  /// Cancelled tasks that `await close()` a scope whose close another task is running wait for it
  /// without blocking their threads: eight of them (more than the cooperative pool has threads
  /// on a small machine) must not starve the close they wait for. A deadlock here starves the
  /// whole pool, so a watchdog thread ends the process instead of letting it hang.
  @Test(
    .disabled(
      "waits for fix: the async waitUntilClosed() usleeps on a pool thread when its task is cancelled; enough cancelled waiters starve the close they wait for (deadlock)"
    ),
    .timeLimit(.minutes(1)))
  func cancelledTasksWaitingForAnotherCloseDoNotStarveIt() async throws {
    let watchdog = StressWatchdog(
      seconds: 30,
      "cancelled tasks waiting in `await close()` starved the close they wait for "
        + "(PendingDefects.cancelledTasksWaitingForAnotherCloseDoNotStarveIt)")
    defer { watchdog.disarm() }
    for round in 0..<5 {
      let disposer = StressCancellableDisposer(milliseconds: 20)
      let container = try Container { registry in
        registry.register(StressCancellableDisposer.self, lifetime: .scoped(.request)) { _ in disposer }
      }
      let request = try container.makeScope(.request)
      _ = try request.resolve(StressCancellableDisposer.self)

      let first = Task { try await request.close() }
      let started = await stressWait(seconds: 5) { disposer.startCount == 1 }
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
}
