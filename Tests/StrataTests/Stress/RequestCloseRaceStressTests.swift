import Strata
import Synchronization
import Testing

/// Many requests at once, as a server runs them: each makes a request scope through the async
/// `withScope`, resolves an auto-wired handler whose transaction is a request-scoped disposable,
/// and closes the scope on its own thread (the awaited close without a task). Meanwhile the
/// container closes. Every transaction made must be disposed exactly once, by its request or by
/// the container's close, and every request must either finish or fail with `scopeClosed`.
@Suite struct RequestCloseRaceStressTests {
  static let rounds = 30
  static let requests = 64

  @Test(.timeLimit(.minutes(2)))
  func everyTransactionIsDisposedOnceWhileTheContainerClosesUnderConcurrentRequests() async throws {
    var failures: [String] = []
    let finished = Counter()
    let refused = Counter()
    for round in 0..<Self.rounds {
      let made = Counter()
      let disposedTwice = Counter()
      let ledger = RaceLedger()
      let container = try Container { registry in
        registry.register(RaceTransaction.self, lifetime: .scoped(.request)) { _ in
          made.increment()
          return RaceTransaction(ledger: ledger, disposedTwice: disposedTwice)
        }
        registry.register(RaceContext.self, lifetime: .scoped(.request), RaceContext.init)
        registry.register(RaceHandler.self, RaceHandler.init)
      }
      let unexpected = Collector<String>()
      let resolved = Counter()
      await withTaskGroup(of: Void.self) { group in
        for request in 0..<Self.requests {
          group.addTask {
            // Staggered, so that some requests begin only after the container began closing.
            for _ in 0..<(request % 8) { await Task.yield() }
            do {
              try await container.withScope(.request) { scope in
                let handler = try scope.resolve(RaceHandler.self)
                resolved.increment()
                if handler.transaction !== handler.context.transaction {
                  unexpected.append("request \(request): two transactions in one request")
                }
                await Task.yield()
              }
              finished.increment()
            } catch let error as ResolutionError where error.code == .scopeClosed {
              refused.increment()  // The container closed first: allowed.
            } catch {
              unexpected.append("request \(request): \(error)")
            }
          }
        }
        group.addTask {
          // Close once a quarter of the requests hold their handler: the rest race the close.
          for _ in 0..<10_000 where resolved.value < Self.requests / 4 { await Task.yield() }
          do { try await container.close() } catch { unexpected.append("container close: \(error)") }
        }
      }
      if made.value != ledger.disposed {
        failures.append("round \(round): \(made.value) transactions made, \(ledger.disposed) disposed")
      }
      if disposedTwice.value != 0 {
        failures.append("round \(round): \(disposedTwice.value) transactions disposed twice")
      }
      failures += unexpected.elements.map { "round \(round): \($0)" }
    }
    #expect(failures.isEmpty, "\(failures.prefix(10))")
    // The race was run, not avoided: some requests finished and some met the closed container.
    #expect(finished.value > 0 && refused.value > 0, "finished \(finished.value), refused \(refused.value)")
  }
}

/// Counts the disposals of one round.
private final class RaceLedger: Sendable {
  private let count = Atomic<Int>(0)
  var disposed: Int { count.load(ordering: .sequentiallyConsistent) }
  func record() { count.add(1, ordering: .sequentiallyConsistent) }
}

private final class RaceTransaction: Disposable, Sendable {
  private let ledger: RaceLedger
  private let disposedTwice: Counter
  private let disposals = Atomic<Int>(0)

  init(ledger: RaceLedger, disposedTwice: Counter) {
    self.ledger = ledger
    self.disposedTwice = disposedTwice
  }

  func dispose() {
    if disposals.add(1, ordering: .sequentiallyConsistent).newValue > 1 { disposedTwice.increment() }
    ledger.record()
  }
}

private final class RaceContext: Sendable {
  let transaction: RaceTransaction
  init(transaction: RaceTransaction) { self.transaction = transaction }
}

private final class RaceHandler: Sendable {
  let context: RaceContext
  let transaction: RaceTransaction
  init(context: RaceContext, transaction: RaceTransaction) {
    self.context = context
    self.transaction = transaction
  }
}
