import Foundation
import Strata
import Synchronization

// Thread-safe recorders, and ways to run code on several threads at once without letting a
// deadlock hang the test run.

/// Counts factory runs and the like; safe to share between threads.
final class Counter: Sendable {
  private let storage = Atomic<Int>(0)

  init() {}

  /// Adds one and returns the new count.
  @discardableResult
  func increment() -> Int {
    storage.add(1, ordering: .sequentiallyConsistent).newValue
  }

  var value: Int { storage.load(ordering: .sequentiallyConsistent) }
}

/// A flag one thread raises and others poll.
final class Flag: Sendable {
  private let storage = Atomic<Bool>(false)

  init() {}

  func raise() { storage.store(true, ordering: .sequentiallyConsistent) }

  var isRaised: Bool { storage.load(ordering: .sequentiallyConsistent) }
}

/// A value guarded by a lock that ThreadSanitizer understands.
///
/// `Synchronization.Mutex` is built on futexes on Linux, which ThreadSanitizer does not see, so it
/// reports accesses under a `Mutex` as races; `NSLock` is a pthread mutex, which it does see.
///
/// `@unchecked Sendable`: `value` is read and written only while `lock` is held.
final class Locked<Value>: @unchecked Sendable {
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

/// Collects values from several threads.
final class Collector<Element: Sendable>: Sendable {
  private let storage = Locked<[Element]>([])

  init() {}

  func append(_ element: Element) {
    storage.withLock { $0.append(element) }
  }

  var elements: [Element] { storage.withLock { $0 } }

  func removeAll() {
    storage.withLock { $0.removeAll() }
  }
}

/// Holds one value set after the holder was captured (by a factory, say).
final class Slot<Value: Sendable>: Sendable {
  private let storage = Locked<Value?>(nil)

  init() {}

  var value: Value? {
    get { storage.withLock { $0 } }
    set { storage.withLock { $0 = newValue } }
  }
}

/// Lets a fixed number of threads wait until all of them have arrived. Later arrivals pass at once.
///
/// Waiting is bounded, so a broken container cannot hang a test here: `arriveAndWait` gives up
/// after `timeout` and returns `false`.
final class Barrier: Sendable {
  private let missing: Atomic<Int>

  init(parties: Int) {
    missing = Atomic(parties)
  }

  @discardableResult
  func arriveAndWait(timeout: Duration = .seconds(5)) -> Bool {
    missing.subtract(1, ordering: .sequentiallyConsistent)
    let deadline = ContinuousClock.now + timeout
    while missing.load(ordering: .sequentiallyConsistent) > 0 {
      if ContinuousClock.now >= deadline { return false }
      usleep(50)
    }
    return true
  }
}

/// Runs `body(index)` for `index` in `0..<count`, each on a new thread, all at once, and waits for
/// them without blocking the caller's thread.
///
/// - Returns: `true` if all threads finished within `timeout`; `false` if any did not, which means
///   a deadlock (the stuck threads are abandoned, so the test fails instead of hanging).
func runOnThreads(
  _ count: Int, timeout: Duration = .seconds(10), _ body: @escaping @Sendable (Int) -> Void
) async -> Bool {
  let finished = Counter()
  for index in 0..<count {
    let thread = Thread {
      body(index)
      finished.increment()
    }
    thread.start()
  }
  var deadline = PatientDeadline(timeout)
  while finished.value < count {
    if deadline.hasPassed() { return false }
    try? await Task.sleep(for: .milliseconds(1))
  }
  return true
}

/// Runs `body` on its own thread and returns its result, or `nil` if it did not finish within
/// `timeout` (a deadlock).
func withDeadline<Value: Sendable>(
  _ timeout: Duration = .seconds(10), _ body: @escaping @Sendable () -> Value
) async -> Value? {
  let result = Slot<Value>()
  let finished = await runOnThreads(1, timeout: timeout) { _ in result.value = body() }
  return finished ? result.value : nil
}

/// What a resolve that may fail ended with, as a `Sendable` value for collecting across threads.
enum Outcome: Sendable, Equatable {
  case success(ObjectIdentifier)
  case failure(ResolutionError.Code)
  case otherError(String)

  init(_ body: () throws -> AnyObject) {
    do {
      self = .success(ObjectIdentifier(try body()))
    } catch let error as ResolutionError {
      self = .failure(error.code)
    } catch {
      self = .otherError(String(describing: error))
    }
  }

  var code: ResolutionError.Code? {
    if case .failure(let code) = self { return code }
    return nil
  }
}

/// Sleeps for about `microseconds`, to keep a factory running while other threads arrive.
func pause(microseconds: UInt32) {
  usleep(microseconds)
}

/// A weak reference that can cross into a `@Sendable` closure.
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
  // `@unchecked Sendable`: written once in `init`, then only read.
  weak var object: Object?

  init(_ object: Object?) {
    self.object = object
  }
}

/// Runs `body` on a new thread with a `stackSize`-byte stack and returns its result, or `nil` if
/// it did not finish within 60 s.
func onThread<Value: Sendable>(
  stackSize: Int, _ body: @escaping @Sendable () -> Value
) async -> Value? {
  let result = Slot<Value>()
  let finished = Flag()
  let thread = Thread {
    result.value = body()
    finished.raise()
  }
  thread.stackSize = stackSize
  thread.start()
  var deadline = PatientDeadline(.seconds(60))
  while !finished.isRaised {
    if deadline.hasPassed() { return nil }
    try? await Task.sleep(for: .milliseconds(2))
  }
  return result.value
}

/// Waits (polling, bounded by `timeout`; see ``PatientDeadline``) until `condition` holds;
/// returns whether it did.
func eventually(
  timeout: Duration = .seconds(90), _ condition: @Sendable () -> Bool
) async -> Bool {
  var deadline = PatientDeadline(timeout)
  while !condition() {
    if deadline.hasPassed() { return condition() }
    try? await Task.sleep(for: .milliseconds(1))
  }
  return true
}

/// A time-out for a task that polls for something other tasks (or threads) do, which does not
/// expire while the task pool is too busy to let the poller run.
///
/// The test run starts every test at once, and on a 2-core machine the pool has two threads: a
/// task waiting for a background disposal may get a turn only every few hundred milliseconds,
/// and so does the disposal. A plain deadline then expires although nothing hangs (a clean-clone
/// CI run failed so under ThreadSanitizer). This one passes only once `timeout` has passed *and*
/// the poller has had at least `polls` turns: every turn of the poller is a turn of the pool's
/// queue, in which work queued before it ran too. On an idle machine the polls take about
/// `polls` milliseconds, so `timeout` is what bounds a real hang.
struct PatientDeadline {
  private let end: ContinuousClock.Instant
  private var pollsLeft: Int

  init(_ timeout: Duration, polls: Int = 2_000) {
    end = ContinuousClock.now + timeout
    pollsLeft = polls
  }

  /// Counts a poll; whether the time-out has passed and the poller had its turns.
  mutating func hasPassed() -> Bool {
    pollsLeft -= 1
    return pollsLeft <= 0 && ContinuousClock.now >= end
  }
}
