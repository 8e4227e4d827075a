import Foundation
import Strata
import Synchronization
import Testing

/// A session's resource that records whether it was disposed, and how often.
private final class Connection: Disposable, Sendable {
  private let disposals = Atomic<Int>(0)
  var isOpen: Bool { disposals.load(ordering: .sequentiallyConsistent) == 0 }
  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }
  func dispose() throws { disposals.add(1, ordering: .sequentiallyConsistent) }
}

/// A request's slow asynchronous rollback that needs the session's connection open; may throw.
private final class Rollback: AsyncDisposable, Sendable {
  let connection: Connection
  let fails: Bool
  /// 0: not yet; 1: on an open connection; 2: the connection was closed first. Plus 10 per extra run.
  private let outcome = Atomic<Int>(0)
  init(connection: Connection, fails: Bool = false) {
    self.connection = connection
    self.fails = fails
  }
  func dispose() async throws {
    try? await Task.sleep(for: .milliseconds(20))
    if outcome.load(ordering: .sequentiallyConsistent) != 0 {
      outcome.add(10, ordering: .sequentiallyConsistent)
    } else {
      outcome.store(connection.isOpen ? 1 : 2, ordering: .sequentiallyConsistent)
    }
    if fails { throw DisposalFailure(label: "rollback") }
  }
  var hasRolledBack: Bool { outcome.load(ordering: .sequentiallyConsistent) != 0 }
  var rolledBackOnceOnOpenConnection: Bool { outcome.load(ordering: .sequentiallyConsistent) == 1 }
}

private func makeContainer(failing: Bool = false) throws -> Container {
  try Container { registry in
    registry.register(Connection.self, lifetime: .scoped(.session)) { _ in Connection() }
    registry.register(Rollback.self, lifetime: .scoped(.request)) { resolver in
      Rollback(connection: try resolver.resolve(Connection.self), fails: failing)
    }
  }
}

/// Attacks on what a synchronous close leaves to a background task, and on the closes of the
/// ancestors that must follow it.
@Suite struct LeftBehindAttackTests {
  /// A session that stays open while 10,000 requests are closed synchronously, each leaving a
  /// rollback behind, keeps neither the requests nor their finished tasks.
  @Test func tenThousandSynchronouslyClosedChildrenAreFreed() async throws {
    let container = try makeContainer()
    let session = try container.makeScope(.session)
    let requests = Collector<WeakBox<Scope>>()
    let rollbacks = Collector<WeakBox<Rollback>>()
    let failures = Counter()
    // On a thread of its own: the loop never suspends, and must not hold one of the task pool's
    // few threads (the rollbacks need them) for as long as it runs.
    let finished = await runOnThreads(1, timeout: .seconds(300)) { _ in
      for index in 0..<10_000 {
        do {
          let request = try session.makeScope(.request)
          let rollback = try request.resolve(Rollback.self)
          if index % 100 == 0 {
            requests.append(WeakBox(request))
            rollbacks.append(WeakBox(rollback))
          }
          do { try request.close() } catch {}  // reports the rollback left behind
        } catch {
          failures.increment()
        }
      }
    }
    #expect(finished && failures.value == 0)
    #expect(await eventually(timeout: .seconds(60)) { rollbacks.elements.allSatisfy { $0.object == nil } })
    // One more, after the others ended: its hand-over drops the finished ones.
    let last = try session.makeScope(.request)
    let lastRollback = try last.resolve(Rollback.self)
    #expect(throws: ResolutionError.self) { try closeSynchronously(last) }
    #expect(await eventually(timeout: .seconds(60)) { requests.elements.allSatisfy { $0.object == nil } })
    try await session.close()
    #expect(lastRollback.rolledBackOnceOnOpenConnection)
  }

  /// The same request closed synchronously on a thread and awaited in a task at once: the awaited
  /// close returns only after the rollback, which ran once.
  @Test func aScopeClosedSynchronouslyAndAwaitedAtOnce() async throws {
    let container = try makeContainer()
    for round in 0..<20 {
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request)
      let rollback = try request.resolve(Rollback.self)
      let threadDone = Flag()
      Thread {
        try? request.close()
        threadDone.raise()
      }.start()
      if round % 2 == 0 { try await Task.sleep(for: .microseconds(200)) }
      try? await request.close()
      #expect(rollback.hasRolledBack, "round \(round): the awaited close returned first")
      #expect(await eventually(timeout: .seconds(60)) { threadDone.isRaised })
      try await session.close()
      #expect(rollback.rolledBackOnceOnOpenConnection, "round \(round)")
      #expect(rollback.connection.disposeCount == 1)
    }
  }

  /// The parent's awaited close is cancelled while the child's rollback, left behind, is slow and
  /// throws: the parent still disposes its connection after it, once.
  @Test func aCancelledParentCloseStillFollowsAFailingLeftBehindRollback() async throws {
    let container = try makeContainer(failing: true)
    for round in 0..<10 {
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request)
      let rollback = try request.resolve(Rollback.self)
      #expect(throws: ResolutionError.self) { try closeSynchronously(request) }
      let close = Task { try await session.close() }
      if round % 2 == 1 { try await Task.sleep(for: .milliseconds(2)) }
      close.cancel()
      _ = try? await close.value
      #expect(rollback.hasRolledBack, "round \(round): the close returned before the rollback")
      #expect(rollback.rolledBackOnceOnOpenConnection, "round \(round)")
      #expect(!rollback.connection.isOpen && rollback.connection.disposeCount == 1, "round \(round)")
    }
  }

  /// Many requests closed synchronously on threads while the session closes (synchronously on a
  /// thread, or awaited): every rollback runs once on an open connection, and no close hangs.
  @Test(arguments: [false, true])
  func manyChildrenClosingWhileTheParentCloses(awaited: Bool) async throws {
    let container = try makeContainer()
    for round in 0..<10 {
      let session = try container.makeScope(.session)
      var requests: [Scope] = []
      var rollbacks: [Rollback] = []
      for _ in 0..<8 {
        let request = try session.makeScope(.request)
        rollbacks.append(try request.resolve(Rollback.self))
        requests.append(request)
      }
      let all = requests
      let start = Barrier(parties: 9)
      let sessionClosed = Flag()
      let closers = Task {
        await runOnThreads(8, timeout: .seconds(60)) { index in
          start.arriveAndWait()
          try? all[index].close()
        }
      }
      if awaited {
        Thread { start.arriveAndWait() }.start()
        try? await session.close()
        sessionClosed.raise()
        let done = rollbacks
        #expect(done.allSatisfy { $0.hasRolledBack }, "round \(round): the session closed before a rollback")
      } else {
        Thread {
          start.arriveAndWait()
          try? session.close()
          sessionClosed.raise()
        }.start()
      }
      #expect(await closers.value, "round \(round): a request's close hangs")
      #expect(await eventually(timeout: .seconds(60)) { sessionClosed.isRaised }, "round \(round)")
      let connection = rollbacks[0].connection
      #expect(await eventually(timeout: .seconds(60)) { !connection.isOpen }, "round \(round)")
      #expect(rollbacks.allSatisfy { $0.rolledBackOnceOnOpenConnection }, "round \(round)")
      #expect(connection.disposeCount == 1)
    }
  }

  /// A grandchild closed synchronously, its parent closed synchronously on a thread while the root's
  /// close is awaited: the root returns after the rollback, which ran on an open connection.
  @Test func aGrandchildsLeftBehindWorkHoldsTheRootsAwaitedClose() async throws {
    for round in 0..<10 {
      let container = try makeContainer()
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request)
      let rollback = try request.resolve(Rollback.self)
      #expect(throws: ResolutionError.self) { try closeSynchronously(request) }
      let sessionClosed = Flag()
      Thread {
        try? session.close()
        sessionClosed.raise()
      }.start()
      if round % 2 == 0 { try await Task.sleep(for: .microseconds(300)) }
      try await container.close()
      #expect(rollback.hasRolledBack, "round \(round): the root closed before the rollback")
      #expect(await eventually(timeout: .seconds(60)) { sessionClosed.isRaised })
      #expect(rollback.rolledBackOnceOnOpenConnection, "round \(round)")
      #expect(rollback.connection.disposeCount == 1)
    }
  }
}
