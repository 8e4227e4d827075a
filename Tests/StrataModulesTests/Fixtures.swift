import Foundation
import Strata
import StrataModules
import Synchronization

// Services shared by the module tests. Each test builds its own container.

protocol Greeter: Sendable {
  func greet(_ name: String) -> String
}

struct FriendlyGreeter: Greeter {
  func greet(_ name: String) -> String { "Hello, \(name)!" }
}

struct GruffGreeter: Greeter {
  func greet(_ name: String) -> String { "\(name)." }
}

final class Counter: Sendable {}

// Plain services of the small applications that ExportTests and ValidationTests build.

final class Database: Sendable {}
final class Clock: Sendable {}
final class Mailer: Sendable {}

/// A thread-safe log of events, for checking what ran and in which order.
///
/// Locked with `NSLock`, not a `Mutex`: ThreadSanitizer does not see `Mutex`'s ordering here and
/// reports its guarded accesses from several threads as races.
final class EventLog: @unchecked Sendable {
  private let lock = NSLock()
  private var events: [String] = []

  func record(_ event: String) { lock.withLock { events.append(event) } }

  var all: [String] { lock.withLock { events } }
}

/// Counts factory runs, to prove validation and export run none.
final class FactoryRuns: Sendable {
  private let count = Atomic<Int>(0)

  func tick() { count.add(1, ordering: .relaxed) }

  var value: Int { count.load(ordering: .relaxed) }
}
