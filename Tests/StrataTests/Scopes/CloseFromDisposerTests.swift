import Dispatch
import Foundation
import Strata
import Synchronization
import Testing

/// A request-scoped service that ends its session when the request ends ("log out after this
/// request"), after giving another thread time to start closing that session.
private final class LogoutOnDispose: Disposable, Sendable {
  let session: Scope
  let entered = DispatchSemaphore(value: 0)
  init(session: Scope) { self.session = session }
  func dispose() throws {
    entered.signal()
    usleep(50_000)
    try session.close()
  }
}

/// A disposable that records whether its disposer saw its task cancelled.
private final class CancellationProbe: Disposable, Sendable {
  let sawCancellation = Atomic<Bool>(false)
  let disposals = Atomic<Int>(0)
  func dispose() {
    disposals.add(1, ordering: .relaxed)
    if withUnsafeCurrentTask(body: { $0?.isCancelled ?? false }) {
      sawCancellation.store(true, ordering: .relaxed)
    }
  }
}

/// A request-scoped service that ends its session when the request ends, once another task has
/// begun closing that session (which then waits for this request).
private final class LogoutAfterSessionCloseBegins: Disposable, Sendable {
  let session: Scope
  let entered = DispatchSemaphore(value: 0)
  init(session: Scope) { self.session = session }
  func dispose() throws {
    entered.signal()
    let deadline = ContinuousClock.now + .seconds(20)
    while !session.isClosed, ContinuousClock.now < deadline { usleep(100) }
    try session.close()
  }
}

/// How many closes returned.
private final class ClosedCount: Sendable {
  let value = Atomic<Int>(0)
}

/// Starts `try await request.close()` in a task, then, once its disposer signalled `entered`,
/// `try await session.close()` in another; returns the count of those closes that returned.
private func closeAwaitingRequestThenSession(
  _ request: Scope, _ session: Scope, once entered: DispatchSemaphore
) async throws -> ClosedCount {
  let closed = ClosedCount()
  Task {
    try? await request.close()
    closed.value.add(1, ordering: .relaxed)
  }
  while entered.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(1)) }
  Task {
    try? await session.close()
    closed.value.add(1, ordering: .relaxed)
  }
  return closed
}

/// An asynchronous disposer that takes a while (a rollback).
private final class SlowRollback: AsyncDisposable, Sendable {
  func dispose() async { try? await Task.sleep(for: .milliseconds(30)) }
}

/// Closes that meet each other: a disposer closing an ancestor whose close runs on another thread
/// (and waits for the disposer's own scope), and a cancellation arriving while a close awaits.
@Suite struct CloseFromDisposerTests {
  private static func sessionAndRequest() throws -> (Container, Scope, Scope, LogoutOnDispose) {
    let container = Container()
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request) { registry in
      registry.register(LogoutOnDispose.self, lifetime: .scoped(.request)) { _ in
        LogoutOnDispose(session: session)
      }
    }
    let logout = try request.resolve(LogoutOnDispose.self)
    return (container, session, request, logout)
  }

  @Test func aDisposerClosingItsSessionWhileAnotherThreadClosesItReturns() throws {
    let (_, session, request, logout) = try Self.sessionAndRequest()
    let requestClosed = DispatchSemaphore(value: 0)
    let sessionClosed = DispatchSemaphore(value: 0)
    Thread {
      try? request.close()
      requestClosed.signal()
    }.start()
    logout.entered.wait()
    Thread {
      try? session.close()
      sessionClosed.signal()
    }.start()
    #expect(requestClosed.wait(timeout: .now() + 10) == .success, "request.close() hangs")
    #expect(sessionClosed.wait(timeout: .now() + 10) == .success, "session.close() hangs")
    #expect(session.isClosed)
  }

  @Test func theSameWithAwaitedCloses() async throws {
    let (_, session, request, logout) = try Self.sessionAndRequest()
    let closed = try await closeAwaitingRequestThenSession(request, session, once: logout.entered)
    for _ in 0..<3000 where closed.value.load(ordering: .relaxed) < 2 {  // 30 s at least
      try await Task.sleep(for: .milliseconds(10))
    }
    let count = closed.value.load(ordering: .relaxed)
    #expect(count == 2, "a close never returns")
  }

  @Test func ownDisposersDoNotSeeACancellationThatArrivesWhileAChildCloses() async throws {
    for lifetime in [Lifetime.scoped(.session), .singleton] {
      let container = try Container { registry in
        registry.register(CancellationProbe.self, lifetime: lifetime) { _ in CancellationProbe() }
        registry.register(SlowRollback.self, lifetime: .scoped(.request)) { _ in SlowRollback() }
      }
      let session = try container.makeScope(.session)
      let closing: Scope = lifetime == .singleton ? container : session
      let probe = try session.resolve(CancellationProbe.self)
      let request = try session.makeScope(.request)
      _ = try request.resolve(SlowRollback.self)
      let task = Task { try await closing.close() }
      try await Task.sleep(for: .milliseconds(5))
      task.cancel()
      try await task.value
      let disposals = probe.disposals.load(ordering: .relaxed)
      let sawCancellation = probe.sawCancellation.load(ordering: .relaxed)
      #expect(disposals == 1)
      #expect(!sawCancellation, "\(lifetime): the disposer saw the caller's cancellation")
      try await container.close()
    }
  }

  /// The request's awaited close has only synchronous disposers, so it runs them on the caller's
  /// thread without a task; its disposer closes the session after another task's close of the
  /// session began and waits for the request. Both closes return.
  @Test func anAwaitedCloseWithOnlySynchronousDisposersLetsItsDisposerCloseTheSession() async throws {
    for round in 0..<5 {
      let container = Container()
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request) { registry in
        registry.register(LogoutAfterSessionCloseBegins.self, lifetime: .scoped(.request)) { _ in
          LogoutAfterSessionCloseBegins(session: session)
        }
      }
      let logout = try request.resolve(LogoutAfterSessionCloseBegins.self)
      let closed = try await closeAwaitingRequestThenSession(request, session, once: logout.entered)
      let bothReturned = await eventually(timeout: .seconds(30)) {
        closed.value.load(ordering: .relaxed) == 2
      }
      #expect(bothReturned, "round \(round): a close never returns")
      guard bothReturned else { return }
      #expect(session.isClosed && request.isClosed)
    }
  }
}
