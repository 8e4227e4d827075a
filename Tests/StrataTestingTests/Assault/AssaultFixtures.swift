import Foundation
import Strata

// The services and helpers of the attack suite on placeholders (`AssaultUnimplementedTests`).

/// A dependency that tests register as a placeholder.
protocol Gateway: Sendable {}

/// The real ``Gateway``, which a child scope provides.
struct RealGateway: Gateway {}

/// A service that needs a ``Gateway``.
final class Billing: Sendable {
  let gateway: any Gateway

  init(gateway: any Gateway) {
    self.gateway = gateway
  }
}

/// Collects outcomes from several tasks.
///
/// Locked with `NSLock`, not a `Mutex`: ThreadSanitizer does not see `Mutex` on Linux and reports
/// its guarded accesses as races.
final class OutcomeLog: @unchecked Sendable {
  // `@unchecked Sendable`: `values` is read and written only while `lock` is held.
  private let lock = NSLock()
  private var values: [String] = []

  init() {}

  func append(_ value: String) { lock.withLock { values.append(value) } }

  var all: [String] { lock.withLock { values } }
}

/// Closes `scope` with the synchronous `close()`, whatever context the caller runs in (in async
/// code, `scope.close()` means the async one).
func closeSynchronously(_ scope: Scope) throws {
  try scope.close()
}
