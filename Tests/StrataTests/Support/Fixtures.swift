import Foundation
import Strata
import Synchronization
import Testing

// MARK: - Service fixtures shared by the suites

protocol Database: AnyObject, Sendable {}

final class InMemoryDatabase: Database {
  init() {}
}

protocol UserRepository: AnyObject, Sendable {
  var database: any Database { get }
}

final class UserRepositoryImpl: UserRepository {
  let database: any Database

  init(database: any Database) {
    self.database = database
  }
}

protocol EventLogger: AnyObject, Sendable {}

final class ConsoleLogger: EventLogger {
  init() {}
}

protocol TimeSource: AnyObject, Sendable {}

final class FixedTimeSource: TimeSource {
  init() {}
}

protocol UserService: AnyObject, Sendable {
  var repository: any UserRepository { get }
  var logger: any EventLogger { get }
  var timeSource: any TimeSource { get }
}

final class UserServiceImpl: UserService {
  let repository: any UserRepository
  let logger: any EventLogger
  let timeSource: any TimeSource

  init(repository: any UserRepository, logger: any EventLogger, timeSource: any TimeSource) {
    self.repository = repository
    self.logger = logger
    self.timeSource = timeSource
  }
}

final class App: Sendable {
  let userService: any UserService

  init(userService: any UserService) {
    self.userService = userService
  }
}

/// A service that knows which factory run made it.
final class Widget: Sendable {
  let id: Int

  init(id: Int) {
    self.id = id
  }
}

/// A value-type service, made with runtime arguments.
struct Greeting: Equatable, Sendable {
  let text: String
}

/// Two name types whose cases print the same (`.primary`), and must never be confused.
enum DatabaseRole: Hashable, Sendable {
  case primary
  case replica
}

enum CacheRole: Hashable, Sendable {
  case primary
  case replica
}

/// An error a factory throws, to check that Strata hands it back untouched.
struct FixtureError: Error, Equatable {
  let code: Int
}

// MARK: - Error helpers

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

// MARK: - Key helpers

/// The service types of `keys`, comparable with `identifiers(of:)`.
func identifiers(_ keys: [ServiceKey]) -> [ObjectIdentifier] {
  keys.map { ObjectIdentifier($0.serviceType) }
}

/// The identities of `types`, in order.
func identifiers(of types: Any.Type...) -> [ObjectIdentifier] {
  types.map { ObjectIdentifier($0) }
}

/// Whether `key` is the plain key of `type`: no name, no runtime arguments.
func isPlainKey(_ key: ServiceKey, of type: Any.Type) -> Bool {
  ObjectIdentifier(key.serviceType) == ObjectIdentifier(type) && !key.isNamed && !key.hasArguments
}

/// The registration of `type` among `descriptors`, if there is exactly one.
func descriptor(of type: Any.Type, in descriptors: [RegistrationDescriptor]) -> RegistrationDescriptor? {
  let matching = descriptors.filter { ObjectIdentifier($0.key.serviceType) == ObjectIdentifier(type) }
  return matching.count == 1 ? matching[0] : nil
}

// MARK: - Thread-safe test utilities

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
  let deadline = ContinuousClock.now + timeout
  while finished.value < count {
    if ContinuousClock.now >= deadline { return false }
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
