import Foundation
import Strata
import Testing

// Services for the error tests. Their names appear in the exact texts the tests compare, so they
// are spelled out here once, and used by no other test.

protocol ErrStore {}
final class ErrStoreImpl: ErrStore, Sendable {}
final class ErrApp: Sendable {}
final class ErrCycleA: Sendable {}
final class ErrCycleB: Sendable {}
final class ErrWidget: Sendable {}
protocol ErrUnrelated {}
struct ErrValue: Sendable {}
final class ErrGreeting: Sendable {}
final class ErrRequestContext: Sendable {}
final class ErrReportCache: Sendable {}
final class ErrLink: Sendable {}

/// A disposer that fails with `label`.
final class ErrFailingDisposable: Disposable, Sendable {
  let label: String
  init(_ label: String) { self.label = label }
  func dispose() throws { throw ErrFixtureError(label: label) }
}

struct ErrFixtureError: Error, Equatable, CustomStringConvertible {
  let label: String
  var description: String { "ErrFixtureError(\(label))" }
}

/// A screen that receives its dependencies as one bundle.
final class ErrScreen: Injectable {
  struct Dependencies {
    let widget: ErrWidget
  }
  func inject(_ dependencies: Dependencies) {}
}

/// A registrar or handle smuggled out of the closure that received it.
final class ErrEscaped<Value>: @unchecked Sendable {  // used on one thread only
  var value: Value?
}

/// `StrataTests/<this file>:<line>`, as a source location renders.
func site(_ line: Int, fileID: String = #fileID) -> String { "\(fileID):\(line)" }
