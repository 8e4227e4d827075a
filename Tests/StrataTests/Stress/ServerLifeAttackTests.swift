import Foundation
import Strata
import Synchronization
import Testing

/// A server's life, many rounds: a container with a connection pool, sessions with a cart, and
/// many concurrent requests per session, each in its own `withScope` (most asynchronous, some
/// synchronous on threads of their own) resolving an auto-wired handler whose context and
/// transaction are request-scoped disposables, reading a `Lazy` and calling a `Provider`. Some
/// requests are cancelled while their body waits, some bodies throw, some audit disposers throw.
///
/// Every disposable made is disposed exactly once; each is disposed while what it was built from
/// is still open (children before parents, reverse creation order within a scope); every error is
/// a typed, expected one; nothing hangs; and once the container is closed and dropped, every
/// instance and scope is freed.
@Suite struct ServerLifeAttackTests {
  static let sessions = 3
  static let requestsPerSession = 24
  /// Fewer rounds under ThreadSanitizer: the full run starts every suite at once on a 2-core
  /// machine, and suites whose background tasks wait a bounded time must still get the pool.
  static func rounds(_ count: Int) -> Int { Sanitizers.threadSanitizerIsActive ? 2 : count }

  /// Sessions close once their requests ended; the container closes last.
  @Test(.timeLimit(.minutes(3)))
  func orderlyShutdownDisposesEverythingOnceInOrderAndFreesIt() async throws {
    let watchdog = StressWatchdog(seconds: 400, "ServerLifeAttackTests: the orderly server hung")
    defer { watchdog.disarm() }
    var failures: [String] = []
    for round in 0..<Self.rounds(8) {
      failures += await Self.round(round, racingShutdown: false).map { "round \(round): \($0)" }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(8))")
  }

  /// The container (and some sessions) close while requests are in flight: requests that lose the
  /// race fail with a typed error; what was made is still disposed once, and what was resolved
  /// before the close began is disposed in order.
  @Test(.timeLimit(.minutes(3)))
  func shutdownUnderLoadDisposesEverythingOnceAndFreesIt() async throws {
    let watchdog = StressWatchdog(seconds: 400, "ServerLifeAttackTests: the server hung in its shutdown")
    defer { watchdog.disarm() }
    var failures: [String] = []
    var refused = 0
    for round in 0..<Self.rounds(16) {
      let (roundFailures, roundRefused) = await Self.roundCountingRefusals(round)
      failures += roundFailures.map { "round \(round): \($0)" }
      refused += roundRefused
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s): \(failures.prefix(8))")
    #expect(refused > 0, "no request met the closed container: the race was not run")
  }

  private static func roundCountingRefusals(_ round: Int) async -> ([String], Int) {
    let refused = Counter()
    let failures = await Self.round(round, racingShutdown: true, refused: refused)
    return (failures, refused.value)
  }

  /// One round; returns its failures. Once the round's container, scopes and tasks are gone,
  /// every instance and scope it made must be freed.
  private static func round(_ round: Int, racingShutdown: Bool, refused: Counter = Counter()) async
    -> [String]
  {
    let ledger = ServerLedger()
    var failures = await exercise(round, racingShutdown: racingShutdown, ledger: ledger, refused: refused)
    let freed = await stressWait(seconds: 30) { ledger.survivors.isEmpty }
    if !freed { failures.append("still alive: \(ledger.survivors.prefix(6))") }
    return failures
  }

  private static func exercise(
    _ round: Int, racingShutdown: Bool, ledger: ServerLedger, refused: Counter
  ) async -> [String] {
    var random = StressRandom(seed: StressRandom.derive(0x5E_2B_E2, round))
    let auditSeed = Atomic<Int>(round)
    let made = try? makeServerContainer(ledger: ledger) {
      auditSeed.add(1, ordering: .relaxed).newValue % 5 == 0
    }
    guard let server = made else { return ["the container could not be made"] }
    ledger.track(server)
    do { _ = try server.resolve(ServerPool.self).record.settle(at: StressClock.tick()) } catch {
      return ["the pool: \(error)"]
    }
    var sessions: [Scope] = []
    for index in 0..<Self.sessions {
      guard let session = try? server.makeScope(.session, name: "s\(index)") else { return ["no session"] }
      ledger.track(session)
      sessions.append(session)
    }
    let handled = Counter()
    let plans = (0..<Self.sessions * Self.requestsPerSession).map { _ in RequestPlan(&random) }
    let allSessions = sessions
    let threadsDone = Counter()
    let syncCount = plans.filter(\.synchronous).count

    await withTaskGroup(of: Void.self) { group in
      for (index, plan) in plans.enumerated() {
        let session = allSessions[index % allSessions.count]
        if plan.synchronous {
          Thread {
            Self.handleSynchronously(plan, in: session, ledger: ledger, handled: handled, refused: refused)
            threadsDone.increment()
          }.start()
          continue
        }
        group.addTask {
          let request = Task {
            await Self.handle(plan, in: session, ledger: ledger, handled: handled, refused: refused)
          }
          if plan.cancelAfterYields >= 0 {
            for _ in 0..<plan.cancelAfterYields { await Task.yield() }
            request.cancel()
          }
          await request.value
        }
      }
      if racingShutdown {
        group.addTask {
          // Once a third of the requests got their handler: the rest race the close.
          _ = await stressWait(seconds: 30) { handled.value >= plans.count / 3 }
          let closer = allSessions[0]
          Task { do { try await closer.close() } catch { ledger.caught(error, "a session's close") } }
          ledger.closeStarted.store(StressClock.tick(), ordering: .sequentiallyConsistent)
          do { try await server.close() } catch { ledger.caught(error, "the container's close") }
        }
      }
    }
    guard await stressWait(seconds: 60, { threadsDone.value == syncCount }) else {
      return ["synchronous requests did not finish (deadlock?)"]
    }
    var failures: [String] = []
    for session in sessions {
      do { try await session.close() } catch { ledger.caught(error, "a session's close") }
    }
    do { try await server.close() } catch { ledger.caught(error, "the container's close") }
    // What synchronous closes left to background tasks may still run.
    let allDisposed = await stressWait(seconds: 30) { ledger.records.elements.allSatisfy(\.isDisposed) }
    if !allDisposed { failures.append("some instances were never disposed") }
    failures += ledger.failures(orderly: !racingShutdown)
    if !racingShutdown, handled.value != plans.count {
      failures.append("\(plans.count - handled.value) requests failed to get their handler")
    }
    return failures
  }

  /// The body of a request, run in `withScope`: resolves the handler, uses it, and sometimes
  /// waits (where a cancellation lands) or throws.
  private static func body(
    _ plan: RequestPlan, scope: Scope, ledger: ServerLedger, handled: Counter
  ) throws -> ServerHandler {
    let handler = try scope.resolve(ServerHandler.self)
    let tick = StressClock.tick()
    // The pool and the cart are the transaction's dependencies.
    let records =
      [handler.context.record, handler.transaction.record] + handler.transaction.record.dependencies
    for record in records { record.settle(at: tick) }
    ledger.track(scope)
    ledger.track(handler)
    handled.increment()
    if try !handler.handle(auditing: plan.audits) {
      ledger.unexpected.append("a request saw two contexts or transactions")
    }
    if plan.audits, let audit = try? handler.audit.value { audit.record.settle(at: StressClock.tick()) }
    return handler
  }

  private static func handle(
    _ plan: RequestPlan, in session: Scope, ledger: ServerLedger, handled: Counter, refused: Counter
  ) async {
    do {
      try await session.withScope(.request) { scope in
        let handler = try body(plan, scope: scope, ledger: ledger, handled: handled)
        handler.context.record.beginUse()
        handler.transaction.record.beginUse()
        defer {
          handler.context.record.endUse()
          handler.transaction.record.endUse()
        }
        if plan.waits { try await Task.sleep(for: .microseconds(500)) } else { await Task.yield() }
        _ = try handler.stamp()
        if plan.throwsAtEnd { throw StressBodyFault() }
      }
    } catch {
      if let error = error as? ResolutionError, error.code == .scopeClosed { refused.increment() }
      ledger.caught(error, "a request")
    }
  }

  private static func handleSynchronously(
    _ plan: RequestPlan, in session: Scope, ledger: ServerLedger, handled: Counter, refused: Counter
  ) {
    do {
      try session.withScope(.request) { scope in
        let handler = try body(plan, scope: scope, ledger: ledger, handled: handled)
        handler.transaction.record.beginUse()
        defer { handler.transaction.record.endUse() }
        usleep(200)
        if plan.throwsAtEnd { throw StressBodyFault() }
      }
    } catch {
      if let error = error as? ResolutionError, error.code == .scopeClosed { refused.increment() }
      ledger.caught(error, "a synchronous request")
    }
  }
}

/// How one request behaves.
private struct RequestPlan: Sendable {
  let synchronous: Bool
  let audits: Bool
  let waits: Bool
  let throwsAtEnd: Bool
  /// Yields before the request's task is cancelled; -1: never cancelled.
  let cancelAfterYields: Int

  init(_ random: inout StressRandom) {
    synchronous = random.chance(10)
    audits = random.chance(50)
    waits = random.chance(50)
    throwsAtEnd = random.chance(15)
    cancelAfterYields = random.chance(25) ? random.below(6) : -1
  }
}
