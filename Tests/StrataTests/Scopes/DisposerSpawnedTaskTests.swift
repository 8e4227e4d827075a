import Foundation
import Strata
import Synchronization
import Testing

/// A slow asynchronous disposer: keeps a close running while another caller closes the same scope.
private final class SlowRollback: AsyncDisposable, Sendable {
  let started = Flag()
  let finished = Flag()
  func dispose() async throws {
    started.raise()
    try? await Task.sleep(for: .milliseconds(200))
    finished.raise()
  }
}

/// A disposer that starts follow-up work in a task of its own and returns at once; the task
/// inherits the disposer's task-local values.
private final class FollowUp: AsyncDisposable, Sendable {
  let work: @Sendable () async -> Void
  init(_ work: @escaping @Sendable () async -> Void) { self.work = work }
  func dispose() async throws {
    let work = work
    Task { await work() }
  }
}

/// What the follow-up task of a ``FollowUp`` saw when its own `close()` returned.
private final class FollowUpOutcome: Sendable {
  let go = Flag()
  let returned = Flag()
  let returnedEarly = Flag()
  let target = Slot<WeakBox<Scope>>()
  let rollback = Slot<SlowRollback>()

  /// The follow-up: once `go` is raised, closes `target`; records whether the rollback had
  /// finished when that close returned.
  func closeTargetWhenToldTo() async {
    _ = await eventually(timeout: .seconds(20)) { go.isRaised }
    guard let target = target.value?.object else { return }
    try? await target.close()
    if rollback.value?.finished.isRaised != true { returnedEarly.raise() }
    returned.raise()
  }
}

/// A task that a disposer starts may outlive the close that ran the disposer. Once that close has
/// ended, a `close()` in such a task is no disposer's: when another close of the same scope runs,
/// it waits for it to end, as every other caller does. It returned at once before (the task had
/// inherited the close's task-local mark), while the other close was still disposing.
@Suite struct DisposerSpawnedTaskTests {
  /// A session's disposer starts a task; later, during the server's shutdown, that task closes
  /// the container too, which must wait for the shutdown's slow rollback.
  @Test(.timeLimit(.minutes(1)))
  func aTaskStartedByAnAwaitedClosesDisposerWaitsForAnotherCloseLater() async throws {
    let outcome = FollowUpOutcome()
    let container = try Container { registry in
      registry.register(SlowRollback.self, lifetime: .scoped(.request)) { _ in SlowRollback() }
      registry.register(FollowUp.self, lifetime: .scoped(.session)) { _ in
        FollowUp { await outcome.closeTargetWhenToldTo() }
      }
    }
    outcome.target.value = WeakBox(container)
    let signedOut = try container.makeScope(.session)
    _ = try signedOut.resolve(FollowUp.self)
    let request = try container.makeScope(.session).makeScope(.request)
    let rollback = try request.resolve(SlowRollback.self)
    outcome.rollback.value = rollback
    try await signedOut.close()  // its follow-up task now waits for `go`

    let shutdown = Task { try await container.close() }
    #expect(await eventually(timeout: .seconds(20)) { rollback.started.isRaised })
    outcome.go.raise()
    #expect(await eventually(timeout: .seconds(20)) { outcome.returned.isRaised })
    #expect(
      !outcome.returnedEarly.isRaised,
      "the follow-up's close of the container returned while the shutdown was still disposing")
    try await shutdown.value
  }

  /// The same for a task started by a disposer in a synchronous close's background task: once that
  /// task has ended, the follow-up's close of the session waits for the session's running close.
  @Test(.timeLimit(.minutes(1)))
  func aTaskStartedByALeftBehindDisposerWaitsForAnotherCloseLater() async throws {
    let outcome = FollowUpOutcome()
    let container = try Container { registry in
      registry.register(SlowRollback.self, lifetime: .scoped(.session)) { _ in SlowRollback() }
      registry.register(FollowUp.self, lifetime: .scoped(.request)) { _ in
        FollowUp { await outcome.closeTargetWhenToldTo() }
      }
    }
    let session = try container.makeScope(.session)
    outcome.target.value = WeakBox(session)
    let rollback = try session.resolve(SlowRollback.self)
    outcome.rollback.value = rollback
    let request = try session.makeScope(.request)
    _ = try request.resolve(FollowUp.self)
    // Leaves the follow-up's disposer to a background task, which the session's close awaits
    // before it disposes the session's own rollback.
    #expect(throws: ResolutionError.self) { try closeSynchronously(request) }

    let signOut = Task { try await session.close() }
    #expect(await eventually(timeout: .seconds(20)) { rollback.started.isRaised })
    outcome.go.raise()
    #expect(await eventually(timeout: .seconds(20)) { outcome.returned.isRaised })
    #expect(
      !outcome.returnedEarly.isRaised,
      "the follow-up's close of the session returned while the session was still disposing")
    try await signOut.value
  }

  /// While the disposer itself still runs, a close of its own scope in a task it starts and
  /// awaits returns at once, as the disposer's own close would: waiting would wait for ever.
  @Test(.timeLimit(.minutes(1)))
  func aTaskTheDisposerAwaitsStillDoesNotWaitForTheCloseRunningIt() async throws {
    let container = try Container { registry in
      registry.register(AwaitedFollowUp.self, lifetime: .scoped(.session)) { resolver in
        AwaitedFollowUp(closing: resolver.currentScope)
      }
    }
    let session = try container.makeScope(.session)
    let followUp = try session.resolve(AwaitedFollowUp.self)
    let signOut = Task { try await session.close() }
    #expect(
      await eventually(timeout: .seconds(20)) { followUp.returned.isRaised }, "the close waited for itself")
    try await signOut.value
    #expect(session.isClosed)
  }
}

/// A disposer that closes its scope in a task it starts, and awaits that task.
private final class AwaitedFollowUp: AsyncDisposable, Sendable {
  /// Dropped by `dispose()`, which breaks the cycle scope → instance → scope.
  private let scope: Locked<Scope?>
  let returned = Flag()
  init(closing scope: Scope) { self.scope = Locked(scope) }
  func dispose() async throws {
    let scope = self.scope.withLock { scope in
      defer { scope = nil }
      return scope
    }
    await Task { try? await scope?.close() }.value
    returned.raise()
  }
}
