import Foundation
import Strata
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A task executor with one thread of its own, whose processor time it reports: what a task that
/// prefers it does between its suspensions runs on that thread and nowhere else.
///
/// `@unchecked Sendable`: `jobs`, `stopped` and `clock` are read and written only under
/// `condition`'s lock.
private final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var stopped = false
  private var clock: clockid_t?

  init() {
    Thread { [self] in run() }.start()
    condition.lock()
    while clock == nil { condition.wait() }
    condition.unlock()
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    jobs.append(job)
    condition.signal()
    condition.unlock()
  }

  /// The processor time the executor's thread has used, in seconds.
  var processorSeconds: Double {
    condition.lock()
    let clock = clock
    condition.unlock()
    guard let clock else { return 0 }
    var time = timespec()
    _ = clock_gettime(clock, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  /// Lets the thread end once its queue is empty.
  func stop() {
    condition.lock()
    stopped = true
    condition.broadcast()
    condition.unlock()
  }

  private func run() {
    var id = clockid_t()
    _ = pthread_getcpuclockid(pthread_self(), &id)
    condition.lock()
    clock = id
    condition.broadcast()
    while true {
      while jobs.isEmpty && !stopped { condition.wait() }
      if jobs.isEmpty { break }
      let job = jobs.removeFirst()
      condition.unlock()
      job.runSynchronously(on: asUnownedTaskExecutor())
      condition.lock()
    }
    condition.unlock()
  }
}

/// A service whose asynchronous disposer takes a while, as flushing a buffer does.
private final class SlowFlush: AsyncDisposable, Sendable {
  let entered: StressSignal
  let seconds: Double

  init(entered: StressSignal, seconds: Double) {
    self.entered = entered
    self.seconds = seconds
  }

  func dispose() async {
    entered.signal()
    try? await Task.sleep(for: .milliseconds(Int(seconds * 1_000)))
  }
}

/// A cancelled task that closes a scope another close is disposing waits for that close without
/// keeping a thread busy: a server shutting down cancels its requests while the container closes
/// them, and their waits must leave the processors to the disposers.
@Suite(.serialized) struct CancelledCloseWaitTests {
  @Test(.timeLimit(.minutes(1)))
  func aCancelledTaskWaitingForAnotherCloseOfItsScopeSleepsRatherThanSpins() async throws {
    let entered = StressSignal()
    let disposeSeconds = 0.4
    let container = try Container { registry in
      registry.register(SlowFlush.self, lifetime: .scoped(.request)) { _ in
        SlowFlush(entered: entered, seconds: disposeSeconds)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(SlowFlush.self)
    let closer = Task { try await request.close() }
    let disposerStarted = await Task.detached { entered.wait(seconds: 30) }.value
    #expect(disposerStarted)

    let executor = OneThreadExecutor()
    defer { executor.stop() }
    let before = executor.processorSeconds
    let waiter = Task(executorPreference: executor) {
      withUnsafeCurrentTask { $0?.cancel() }
      try await request.close()
      return Task.isCancelled
    }
    let waiterWasCancelled = try await waiter.value
    let used = executor.processorSeconds - before
    try await closer.value

    #expect(waiterWasCancelled)
    #expect(request.isClosed)
    // A waiter that yields in a loop (it did) keeps its thread busy for about the whole disposal;
    // one that sleeps uses a few milliseconds.
    #expect(
      used < disposeSeconds / 4,
      "the cancelled waiter used \(used) s of processor time while the disposer ran \(disposeSeconds) s")
  }
}
