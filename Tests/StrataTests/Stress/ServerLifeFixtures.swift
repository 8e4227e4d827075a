import Foundation
import Strata
import Synchronization
import Testing

// The world of ServerLifeAttackTests: a server's services, each disposable one carrying a
// `ServerRecord` that checks, when it is disposed, that it is disposed once, that what it was
// built from is still open, and that its request is not using it.

/// What one round made, and what went wrong.
final class ServerLedger: Sendable {
  let records = Collector<ServerRecord>()
  let alive = Collector<WeakBox<AnyObject>>()
  let unexpected = Collector<String>()
  let expectedErrors = Collector<String>()
  /// The tick at which the container's close was started; `Int.max` until then.
  let closeStarted = Atomic<Int>(.max)

  func track(_ object: AnyObject) { alive.append(WeakBox(object)) }

  /// Files `error`, thrown by `what`, as expected or not.
  func caught(_ error: any Error, _ what: String) {
    if let name = stressExpectedErrorName(error) {
      expectedErrors.append(name)
    } else {
      unexpected.append("\(what): \(error)")
    }
  }

  /// Every broken rule: disposals that did not happen once, and the order and use failures of
  /// the records they apply to (all of them in an orderly round; in a round where the container
  /// closed under the requests, only those of instances resolved before that close began, and
  /// never the use check, since that close disposes what requests still use).
  func failures(orderly: Bool) -> [String] {
    let closeTick = closeStarted.load(ordering: .sequentiallyConsistent)
    var failures = unexpected.elements
    for record in records.elements {
      if record.disposeCount != 1 {
        failures.append("\(record.label) disposed \(record.disposeCount) times")
      }
      let settled = orderly || record.settledTick < closeTick
      guard settled else { continue }
      failures += record.orderProblems.elements.map { "\(record.label) \($0)" }
      if orderly { failures += record.useProblems.elements.map { "\(record.label) \($0)" } }
    }
    return failures
  }

  /// The labels of the tracked objects still alive.
  var survivors: [String] {
    alive.elements.compactMap { $0.object.map { "\(type(of: $0))" } }
  }
}

/// The bookkeeping of one disposable instance.
final class ServerRecord: Sendable {
  let label: String
  let dependencies: [ServerRecord]
  let failsDisposal: Bool
  let orderProblems = Collector<String>()
  let useProblems = Collector<String>()
  private let disposals = Atomic<Int>(0)
  private let users = Atomic<Int>(0)
  private let settled = Atomic<Int>(.max)

  init(_ label: String, after dependencies: [ServerRecord], ledger: ServerLedger, failsDisposal: Bool = false)
  {
    self.label = label
    self.dependencies = dependencies
    self.failsDisposal = failsDisposal
    ledger.records.append(self)
  }

  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }
  var isDisposed: Bool { disposeCount > 0 }
  /// When a resolve that returned this instance returned; `Int.max` if none did.
  var settledTick: Int { settled.load(ordering: .sequentiallyConsistent) }

  /// Records that a resolve returned this instance at `tick` (the earliest one counts).
  func settle(at tick: Int) {
    var current = settled.load(ordering: .sequentiallyConsistent)
    while tick < current {
      let (exchanged, found) = settled.compareExchange(
        expected: current, desired: tick, ordering: .sequentiallyConsistent)
      if exchanged { return }
      current = found
    }
  }

  func beginUse() { users.add(1, ordering: .sequentiallyConsistent) }
  func endUse() { users.subtract(1, ordering: .sequentiallyConsistent) }

  func dispose() throws {
    disposals.add(1, ordering: .sequentiallyConsistent)
    for dependency in dependencies where dependency.isDisposed {
      orderProblems.append("disposed after \(dependency.label), which it was built from")
    }
    if users.load(ordering: .sequentiallyConsistent) != 0 {
      useProblems.append("disposed while its request still used it")
    }
    if failsDisposal { throw StressDisposalFault(label: label) }
  }
}

/// The application-wide connection pool (singleton).
final class ServerPool: Disposable, Sendable {
  let record: ServerRecord
  init(ledger: ServerLedger) {
    record = ServerRecord("pool", after: [], ledger: ledger)
    ledger.track(self)
  }
  func dispose() throws { try record.dispose() }
}

/// A session's cart (`scoped(.session)`), disposed asynchronously.
final class ServerCart: AsyncDisposable, Sendable {
  let record: ServerRecord
  init(pool: ServerPool, ledger: ServerLedger) {
    record = ServerRecord("cart", after: [pool.record], ledger: ledger)
    ledger.track(self)
  }
  func dispose() async throws {
    await Task.yield()
    try record.dispose()
  }
}

/// A request's transaction (`scoped(.request)`): rolls back asynchronously, through the pool.
final class ServerTransaction: AsyncDisposable, Sendable {
  let record: ServerRecord
  init(pool: ServerPool, cart: ServerCart, ledger: ServerLedger) {
    record = ServerRecord("transaction", after: [pool.record, cart.record], ledger: ledger)
    ledger.track(self)
  }
  func dispose() async throws {
    try? await Task.sleep(for: .microseconds(300))
    try record.dispose()
  }
}

/// A request's context (`scoped(.request)`), built on its transaction.
final class ServerContext: Disposable, Sendable {
  let record: ServerRecord
  let transaction: ServerTransaction
  init(transaction: ServerTransaction, ledger: ServerLedger) {
    self.transaction = transaction
    record = ServerRecord("context", after: [transaction.record], ledger: ledger)
    ledger.track(self)
  }
  func dispose() throws { try record.dispose() }
}

/// A request's audit log (`scoped(.request)`), reached through a `Lazy`; its disposer may fail.
final class ServerAudit: Disposable, Sendable {
  let record: ServerRecord
  init(context: ServerContext, fails: Bool, ledger: ServerLedger) {
    record = ServerRecord("audit", after: [context.record], ledger: ledger, failsDisposal: fails)
    ledger.track(self)
  }
  func dispose() throws { try record.dispose() }
}

/// A value the handler asks a `Provider` for on every use.
struct ServerStamp: Sendable {
  let context: ServerContext
}

/// The auto-wired, transient handler of a request.
final class ServerHandler: Sendable {
  let context: ServerContext
  let transaction: ServerTransaction
  let audit: Lazy<ServerAudit>
  let stamp: Provider<ServerStamp>
  init(
    context: ServerContext, transaction: ServerTransaction, audit: Lazy<ServerAudit>,
    stamp: Provider<ServerStamp>
  ) {
    self.context = context
    self.transaction = transaction
    self.audit = audit
    self.stamp = stamp
  }

  /// Handles the request: uses its context and transaction, sometimes the audit log, and the
  /// stamp provider; checks that the request sees one context and one transaction.
  func handle(auditing: Bool) throws -> Bool {
    let stamp = try stamp()
    let oneContext = stamp.context === context && context.transaction === transaction
    if auditing { _ = try audit.value }
    return oneContext
  }
}

/// The container of a round.
func makeServerContainer(ledger: ServerLedger, auditFails: @escaping @Sendable () -> Bool) throws -> Container
{
  try Container { registry in
    registry.register(ServerPool.self, lifetime: .singleton) { _ in ServerPool(ledger: ledger) }
    registry.register(ServerCart.self, lifetime: .scoped(.session)) { resolver in
      ServerCart(pool: try resolver.resolve(ServerPool.self), ledger: ledger)
    }
    registry.register(ServerTransaction.self, lifetime: .scoped(.request)) { resolver in
      ServerTransaction(
        pool: try resolver.resolve(ServerPool.self), cart: try resolver.resolve(ServerCart.self),
        ledger: ledger)
    }
    registry.register(ServerContext.self, lifetime: .scoped(.request)) { resolver in
      ServerContext(transaction: try resolver.resolve(ServerTransaction.self), ledger: ledger)
    }
    registry.register(ServerAudit.self, lifetime: .scoped(.request)) { resolver in
      ServerAudit(context: try resolver.resolve(ServerContext.self), fails: auditFails(), ledger: ledger)
    }
    registry.register(ServerStamp.self) { resolver in
      ServerStamp(context: try resolver.resolve(ServerContext.self))
    }
    registry.register(ServerHandler.self, ServerHandler.init)
  }
}
