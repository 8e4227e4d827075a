import Foundation
import Strata
import Synchronization
import Testing

/// A request's transaction whose asynchronous rollback takes a while and needs the connection.
private final class SlowRollback: AsyncDisposable, Sendable {
  let connection: TrackedConnection
  /// 0: not rolled back yet; 1: rolled back on an open connection; 2: the connection was closed first.
  private let outcome = Atomic<Int>(0)
  init(connection: TrackedConnection) { self.connection = connection }
  func dispose() async throws {
    try? await Task.sleep(for: .milliseconds(30))
    outcome.store(connection.isOpen ? 1 : 2, ordering: .sequentiallyConsistent)
  }
  var hasRolledBack: Bool { outcome.load(ordering: .sequentiallyConsistent) != 0 }
  var rolledBackOnOpenConnection: Bool { outcome.load(ordering: .sequentiallyConsistent) == 1 }
}

/// A request's synchronous disposer that holds the request's close until it is let go.
private final class Gate: Disposable, Sendable {
  let entered = Flag()
  let release = Flag()
  func dispose() throws {
    entered.raise()
    _ = waitUntil(release)
  }
}

/// Waits (blocking, at most 60 s) until `flag` is raised; returns whether it was.
private func waitUntil(_ flag: Flag) -> Bool {
  let deadline = ContinuousClock.now + .seconds(60)
  while !flag.isRaised {
    if ContinuousClock.now >= deadline { return false }
    usleep(100)
  }
  return true
}

/// A request's asynchronous disposer that ends the session when the request ends ("log out after
/// this request"), or closes some other scope it is given.
private final class AsyncLogout: AsyncDisposable, Sendable {
  let scope: Scope
  let returned = Flag()
  init(closing scope: Scope) { self.scope = scope }
  func dispose() async throws {
    try? await Task.sleep(for: .milliseconds(10))
    try await scope.close()
    returned.raise()
  }
}

/// A session with a request whose asynchronous disposer closes `target(container, session, request)`.
private func requestClosingOnDisposal(
  _ target: @escaping @Sendable (Container, Scope, Scope) -> Scope
) throws -> (Container, Scope, Scope, AsyncLogout) {
  let container = Container()
  let session = try container.makeScope(.session)
  let request = try session.makeScope(.request) { registry in
    registry.register(AsyncLogout.self, lifetime: .scoped(.request)) { resolver in
      AsyncLogout(closing: target(container, session, resolver.currentScope))
    }
  }
  return (container, session, request, try request.resolve(AsyncLogout.self))
}

private func makeContainer() throws -> Container {
  try Container { registry in
    registry.register(TrackedConnection.self, lifetime: .scoped(.session)) { _ in TrackedConnection() }
    registry.register(SlowRollback.self, lifetime: .scoped(.request), SlowRollback.init)
    registry.register(Gate.self, lifetime: .scoped(.request)) { _ in Gate() }
  }
}

/// A session whose request, holding a `SlowRollback`, was closed synchronously: the rollback runs
/// in the background.
private func sessionWithClosedRequest(in container: Container) throws -> (Scope, SlowRollback) {
  let session = try container.makeScope(.session)
  let request = try session.makeScope(.request)
  let rollback = try request.resolve(SlowRollback.self)
  #expect(throws: ResolutionError.self) { try closeSynchronously(request) }
  return (session, rollback)
}

/// A synchronous `close()` of a child leaves its ``AsyncDisposable`` instances (and what is older) to
/// a background task. Its parent's instances, which the child's may be built from, must still be
/// disposed after that task, however the parent is closed later: not only when the parent's own
/// close closed the child.
@Suite struct LeftBehindDisposalTests {
  @Test func anAwaitedCloseOfTheParentWaitsForWhatItsClosedChildLeftBehind() async throws {
    let container = try makeContainer()
    for round in 0..<10 {
      let (session, rollback) = try sessionWithClosedRequest(in: container)

      try await session.close()

      #expect(rollback.hasRolledBack, "round \(round): the session closed before the rollback ended")
      #expect(rollback.rolledBackOnOpenConnection, "round \(round): the connection was closed first")
      #expect(!rollback.connection.isOpen)
    }
  }

  @Test func aSynchronousCloseOfTheParentDisposesAfterWhatItsClosedChildLeftBehind() async throws {
    let container = try makeContainer()
    for round in 0..<10 {
      let (session, rollback) = try sessionWithClosedRequest(in: container)

      // Nothing of the session's is left to the background by the session itself: no error.
      try closeSynchronously(session)

      #expect(await eventually(timeout: .seconds(60)) { !rollback.connection.isOpen }, "round \(round)")
      #expect(rollback.rolledBackOnOpenConnection, "round \(round): the connection was closed first")
    }
  }

  @Test func theRootWaitsForWhatAGrandchildLeftBehind() async throws {
    let container = try makeContainer()
    let (session, rollback) = try sessionWithClosedRequest(in: container)

    try await container.close()

    #expect(rollback.rolledBackOnOpenConnection, "the connection was closed before the rollback ended")
    #expect(!rollback.connection.isOpen && session.isClosed)
  }

  /// The parent's close begins while the child's own close still runs: the parent waits for that
  /// close, and then for what it left behind.
  @Test(arguments: [false, true])
  func aParentClosingDuringItsChildsCloseWaitsForWhatTheChildLeftBehind(awaited: Bool) async throws {
    let container = try makeContainer()
    for round in 0..<5 {
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request)
      let rollback = try request.resolve(SlowRollback.self)
      let gate = try request.resolve(Gate.self)  // newer: disposed first, synchronously

      let childClosed = Flag()
      let childThread = Thread {
        try? request.close()
        childClosed.raise()
      }
      childThread.start()
      #expect(await eventually(timeout: .seconds(60)) { gate.entered.isRaised })

      let parentClosed = Flag()
      if awaited {
        let parentClose = Task {
          try? await session.close()
          parentClosed.raise()
        }
        try await Task.sleep(for: .milliseconds(50))  // the parent's close waits for the child's
        gate.release.raise()
        await parentClose.value
      } else {
        let parentThread = Thread {
          try? session.close()
          parentClosed.raise()
        }
        parentThread.start()
        try await Task.sleep(for: .milliseconds(50))
        gate.release.raise()
      }

      #expect(await eventually(timeout: .seconds(60)) { parentClosed.isRaised && childClosed.isRaised })
      #expect(await eventually(timeout: .seconds(60)) { !rollback.connection.isOpen }, "round \(round)")
      #expect(rollback.rolledBackOnOpenConnection, "round \(round): the connection was closed first")
    }
  }

  /// A long-lived parent whose children are closed synchronously one after another keeps no list of
  /// their finished background work: the rollbacks (and the tasks that ran them) are freed.
  @Test func finishedBackgroundWorkIsNotKeptByAnOpenParent() async throws {
    let container = try makeContainer()
    let session = try container.makeScope(.session)
    var rollbacks: [WeakBox<SlowRollback>] = []
    for _ in 0..<20 {
      let request = try session.makeScope(.request)
      rollbacks.append(WeakBox(try request.resolve(SlowRollback.self)))
      #expect(throws: ResolutionError.self) { try closeSynchronously(request) }
    }
    let boxes = rollbacks
    #expect(await eventually(timeout: .seconds(60)) { boxes.allSatisfy { $0.object == nil } })
    try await session.close()
  }

  /// The background task's disposer closes the session (or the root above it, or its own request)
  /// itself: that close must not wait for the task that runs it.
  @Test(arguments: ["session", "root", "request"])
  func aLeftBehindDisposerThatClosesAScopeWaitingForItReturns(target: String) async throws {
    let (_, session, request, logout) = try requestClosingOnDisposal { container, session, request in
      switch target {
      case "session": session
      case "root": container
      default: request
      }
    }
    #expect(throws: ResolutionError.self) { try closeSynchronously(request) }
    #expect(
      await eventually(timeout: .seconds(60)) { logout.returned.isRaised },
      "\(target): the close never returns")
    #expect(target == "request" || session.isClosed)
  }

  /// The same while another task closes the session, which waits for the request's background task.
  @Test func aLeftBehindDisposerThatClosesTheSessionAnotherTaskClosesReturns() async throws {
    for round in 0..<5 {
      let (_, session, request, logout) = try requestClosingOnDisposal { _, session, _ in session }
      #expect(throws: ResolutionError.self) { try closeSynchronously(request) }
      let sessionClosed = Flag()
      Task {
        try? await session.close()
        sessionClosed.raise()
      }
      #expect(
        await eventually(timeout: .seconds(60)) { logout.returned.isRaised && sessionClosed.isRaised },
        "round \(round): a close never returns")
    }
  }
}
