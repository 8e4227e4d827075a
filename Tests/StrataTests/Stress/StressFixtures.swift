import Foundation
import Strata
import Synchronization
import Testing

// Fixtures of the stress and fault suites (Tests/StrataTests/Stress). Every name carries a
// `Stress` prefix so that it never clashes with the fixtures of the other suites.
//
// Locks here are `NSLock`/`NSCondition` (pthread) and `Atomic`, which ThreadSanitizer sees;
// never `Synchronization.Mutex`, which it does not see on Linux.

// MARK: - Seeds

/// A small, fast, seedable generator (SplitMix64): the same seed gives the same sequence on
/// every platform, so a failing run can be replayed.
struct StressRandom: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// `true` with probability `percent`/100.
  mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }

  /// A number in `0 ..< bound` (`bound` > 0).
  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

  /// The seed of the `index`th independent stream derived from `seed`.
  static func derive(_ seed: UInt64, _ index: Int) -> UInt64 {
    var generator = StressRandom(seed: seed ^ (UInt64(index) &* 0xD6E8_FEB8_6659_FD93))
    return generator.next()
  }
}

enum StressSeed {
  /// The seed of this run: `STRATA_STRESS_SEED` (decimal or `0x` hex) if set, a fresh random one
  /// otherwise. Every failure message names it.
  static func master() -> UInt64 {
    if let text = ProcessInfo.processInfo.environment["STRATA_STRESS_SEED"] {
      let parsed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
      if let parsed { return parsed }
    }
    return UInt64.random(in: 0...UInt64.max)
  }

  /// How to replay a run with `seed`.
  static func replay(_ seed: UInt64, filter: String) -> String {
    "seed 0x\(String(seed, radix: 16)); replay with STRATA_STRESS_SEED=0x\(String(seed, radix: 16)) "
      + "swift test --filter \(filter)"
  }
}

// MARK: - Synchronization helpers

/// A counting signal that threads wait on with a timeout (a semaphore ThreadSanitizer sees).
///
/// `@unchecked Sendable`: `count` is read and written only while `condition` is locked.
final class StressSignal: @unchecked Sendable {
  private let condition = NSCondition()
  private var count = 0

  init() {}

  func signal() {
    condition.lock()
    count += 1
    condition.broadcast()
    condition.unlock()
  }

  /// Waits for a signal; `false` if none came within `seconds`.
  @discardableResult
  func wait(seconds: Double = 5) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    condition.lock()
    defer { condition.unlock() }
    while count == 0 {
      if !condition.wait(until: deadline) { return false }
    }
    count -= 1
    return true
  }
}

/// Lets `count` threads start a step together: each waits (up to 5 s) until all have arrived.
///
/// `@unchecked Sendable`: `arrived` is read and written only while `condition` is locked.
final class StressBarrier: @unchecked Sendable {
  private let condition = NSCondition()
  private let count: Int
  private var arrived = 0

  init(_ count: Int) {
    self.count = count
  }

  func arriveAndWait() {
    let deadline = Date(timeIntervalSinceNow: 5)
    condition.lock()
    defer { condition.unlock() }
    arrived += 1
    condition.broadcast()
    while arrived < count {
      if !condition.wait(until: deadline) { return }
    }
  }
}

/// A process-wide order of events, so that tests can tell which of two disposals came first.
enum StressClock {
  private static let counter = Atomic<Int>(0)

  /// The next tick; every call gets a larger one.
  static func tick() -> Int { counter.add(1, ordering: .sequentiallyConsistent).newValue }
}

/// Runs `body(index)` on `count` new threads (not the cooperative pool, so they may block) and
/// waits for them without blocking a task.
///
/// - Returns: `false` if they did not all finish within `seconds`: a deadlock (the threads are
///   left behind).
func stressRunThreads(
  _ count: Int, seconds: Double = 20, _ body: @escaping @Sendable (Int) -> Void
) async -> Bool {
  let finished = Atomic<Int>(0)
  let done = StressSignal()
  for index in 0..<count {
    let thread = Thread {
      body(index)
      if finished.add(1, ordering: .sequentiallyConsistent).newValue == count { done.signal() }
    }
    thread.start()
  }
  return await stressWait(seconds: seconds) { finished.load(ordering: .sequentiallyConsistent) == count }
}

/// Ends the process, naming what hung, if it is not disarmed within `seconds`: the last resort
/// against a deadlock that starves the cooperative thread pool, where no task (not even the test's
/// own time-out) can run any more and the run would otherwise hang until CI's limit.
///
/// The suites give it 400 s: under ThreadSanitizer on a busy 2-core machine they took up to 130 s
/// (2026-12-04, with two busy loops beside the run), and `.ci/run` stops a run at 600 s.
final class StressWatchdog: Sendable {
  private let disarmed = StressSignal()

  init(seconds: Double, _ message: @autoclosure () -> String) {
    let message = message()
    let disarmed = self.disarmed
    let thread = Thread {
      if disarmed.wait(seconds: seconds) { return }
      FileHandle.standardError.write(Data("\nDEADLOCK: \(message) (after \(seconds) s)\n".utf8))
      abort()
    }
    thread.start()
  }

  func disarm() { disarmed.signal() }
}

/// Polls `condition` from a task until it holds or `seconds` pass (see ``PatientDeadline``);
/// returns whether it held.
func stressWait(seconds: Double, _ condition: () -> Bool) async -> Bool {
  var deadline = PatientDeadline(.milliseconds(Int(seconds * 1000)))
  while !condition() {
    if deadline.hasPassed() { return condition() }
    try? await Task.sleep(for: .milliseconds(2))
  }
  return true
}

/// Runs `body` in a new task and blocks the calling thread (never a pool thread) until it ends:
/// how a plain thread calls `await scope.close()`.
func stressBlockOn(_ body: @escaping @Sendable () async -> Void) {
  let done = StressSignal()
  Task {
    await body()
    done.signal()
  }
  done.wait(seconds: 60)
}

// MARK: - Errors

/// Thrown by a factory on purpose.
struct StressInjectedFault: Error, CustomStringConvertible {
  let site: String
  var description: String { "injected fault in \(site)" }
}

/// Thrown by a disposer on purpose.
struct StressDisposalFault: Error, CustomStringConvertible {
  let label: String
  var description: String { "injected disposal fault in \(label)" }
}

/// Thrown by a `withScope` body on purpose.
struct StressBodyFault: Error {}

/// Whether `error` is one a run with injected faults may throw: `scopeClosed`, `factoryFailed`
/// (from an injected fault or a cancellation), `disposalFailed` (injected disposer faults, or an
/// async disposer behind a synchronous close), a cancellation, or a body's own error.
///
/// - Returns: A short name to count it under, or `nil` if it is unexpected.
func stressExpectedErrorName(_ error: any Error) -> String? {
  if error is CancellationError { return "cancelled" }
  if error is StressBodyFault { return "bodyFault" }
  if let error = error as? ScopeExitError {
    // A body's error, and the disposer errors of the close that followed it.
    guard let body = stressExpectedErrorName(error.bodyError),
      stressExpectedDisposalErrors(error.disposalErrors)
    else { return nil }
    return "scopeExit(\(body))"
  }
  guard let error = error as? ResolutionError else { return nil }
  guard stressExpectedDisposalErrors(error.disposalErrors) else { return nil }
  switch error.code {
  case .scopeClosed:
    return "scopeClosed"
  case .disposalFailed:
    return error.disposalErrors.isEmpty ? nil : "disposalFailed"
  case .factoryFailed:
    let underlying = error.underlying
    return underlying is StressInjectedFault || underlying is CancellationError ? "factoryFailed" : nil
  default:
    return nil
  }
}

/// Whether every one of `errors` is a disposer's injected fault, or an async disposer reported by
/// a synchronous close.
func stressExpectedDisposalErrors(_ errors: [any Error]) -> Bool {
  errors.allSatisfy { error in
    guard let error = error as? DisposalError else { return false }
    return error.underlying is StressDisposalFault || error.underlying is AsyncDisposalRequired
  }
}

/// Whether a value of type `Marker` is somewhere inside `value` (an error and what it wraps),
/// looked for through every stored property, down to `depth` levels.
func stressContains<Marker>(_ value: Any, _ marker: Marker.Type, depth: Int = 8) -> Bool {
  if value is Marker { return true }
  guard depth > 0 else { return false }
  if let error = value as? ResolutionError {
    if let underlying = error.underlying, stressContains(underlying, marker, depth: depth - 1) { return true }
    for disposalError in error.disposalErrors where stressContains(disposalError, marker, depth: depth - 1) {
      return true
    }
  }
  if let error = value as? DisposalError, stressContains(error.underlying, marker, depth: depth - 1) {
    return true
  }
  return Mirror(reflecting: value).children.contains { stressContains($0.value, marker, depth: depth - 1) }
}

// MARK: - Probes for the forced interleavings

/// A disposable instance that records when its disposal started and finished, and how often it
/// ran; `dispose()` can be made to wait for a signal or sleep.
final class StressProbe: Disposable, Sendable {
  let label: String
  private let disposals = Atomic<Int>(0)
  private let startTick = Atomic<Int>(0)
  private let finishTick = Atomic<Int>(0)
  private let started: StressSignal?
  private let release: StressSignal?
  private let sleepMicroseconds: UInt32
  private let fails: Bool

  /// - Parameters:
  ///   - started: Signalled when `dispose()` starts.
  ///   - release: Waited for (up to 5 s) before `dispose()` finishes.
  ///   - sleepMicroseconds: Slept before `dispose()` finishes.
  ///   - fails: Whether `dispose()` throws ``StressDisposalFault`` (after finishing).
  init(
    _ label: String, started: StressSignal? = nil, release: StressSignal? = nil,
    sleepMicroseconds: UInt32 = 0, fails: Bool = false
  ) {
    self.label = label
    self.started = started
    self.release = release
    self.sleepMicroseconds = sleepMicroseconds
    self.fails = fails
  }

  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }
  var isDisposed: Bool { disposeCount > 0 }
  /// When `dispose()` started; 0 if it did not.
  var disposeStarted: Int { startTick.load(ordering: .sequentiallyConsistent) }
  /// When `dispose()` finished; 0 if it did not.
  var disposeFinished: Int { finishTick.load(ordering: .sequentiallyConsistent) }

  func dispose() throws {
    disposals.add(1, ordering: .sequentiallyConsistent)
    startTick.store(StressClock.tick(), ordering: .sequentiallyConsistent)
    started?.signal()
    release?.wait(seconds: 5)
    if sleepMicroseconds > 0 { usleep(sleepMicroseconds) }
    finishTick.store(StressClock.tick(), ordering: .sequentiallyConsistent)
    if fails { throw StressDisposalFault(label: label) }
  }
}

/// An instance whose disposals can be counted, sync or async.
protocol StressDisposalProbe: AnyObject, Sendable {
  var disposeCount: Int { get }
}

extension StressProbe: StressDisposalProbe {}

/// An ``AsyncDisposable`` probe: counts disposals, after suspending once.
final class StressAsyncProbe: AsyncDisposable, StressDisposalProbe {
  private let disposals = Atomic<Int>(0)

  init() {}

  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }

  func dispose() async throws {
    await Task.yield()
    disposals.add(1, ordering: .sequentiallyConsistent)
  }
}

/// An asynchronous disposer doing cancellation-aware work: it sleeps with `Task.sleep`, which
/// throws at once in a cancelled task, and counts only the disposals that ran to completion.
final class StressCancellableDisposer: AsyncDisposable, Sendable {
  private let started = Atomic<Int>(0)
  private let completed = Atomic<Int>(0)
  private let fails: Bool
  private let milliseconds: Int

  init(fails: Bool = false, milliseconds: Int = 1) {
    self.fails = fails
    self.milliseconds = milliseconds
  }

  var startCount: Int { started.load(ordering: .sequentiallyConsistent) }
  var completionCount: Int { completed.load(ordering: .sequentiallyConsistent) }

  func dispose() async throws {
    started.add(1, ordering: .sequentiallyConsistent)
    try await Task.sleep(for: .milliseconds(milliseconds))
    completed.add(1, ordering: .sequentiallyConsistent)
    if fails { throw StressDisposalFault(label: "cancellable") }
  }
}

/// A plain service for the cycle tests, holding what its factory resolved.
final class StressNode: Sendable {
  let name: String
  let next: StressNode?

  init(_ name: String, next: StressNode? = nil) {
    self.name = name
    self.next = next
  }
}

/// A weak reference, to see whether something was freed.
///
/// `@unchecked Sendable`: a `weak let` is safe to load from any thread.
struct StressWeak: @unchecked Sendable {
  weak let object: AnyObject?
  let label: String

  init(_ object: AnyObject, _ label: String) {
    self.object = object
    self.label = label
  }
}
