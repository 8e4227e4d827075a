import Foundation
import Strata
import Testing

/// A request's token that ends the session when it is freed ("log out when the request is gone").
private final class LogoutToken: Sendable {
  let session: Scope
  let closed: Flag
  init(session: Scope, closed: Flag) {
    self.session = session
    self.closed = closed
  }
  deinit {
    try? session.close()
    closed.raise()
  }
}

/// A request's synchronous disposer that holds the request's close until it is let go.
private final class HeldDisposer: Disposable, Sendable {
  let entered = Flag()
  let release = Flag()
  func dispose() throws {
    entered.raise()
    let deadline = ContinuousClock.now + .seconds(60)
    while !release.isRaised, ContinuousClock.now < deadline { usleep(100) }
  }
}

/// A request's asynchronous disposer that holds the only reference to a token: it is freed by the
/// background task that disposes it, after a synchronous close left it there.
private final class TokenHolder: AsyncDisposable, Sendable {
  let token: LogoutToken
  init(token: LogoutToken) { self.token = token }
  func dispose() async throws { try? await Task.sleep(for: .milliseconds(20)) }
}

/// A scope's close releases what it cached at its end, which runs their `deinit`. A `deinit` that
/// closes an ancestor while another thread's close of that ancestor waits for this scope's close
/// must return at once (as a disposer's would), not wait for that ancestor's close: each would wait
/// for the other for ever.
@Suite struct DeinitCloseOfAncestorTests {
  @Test(arguments: [false, true])
  func aDeinitClosingTheSessionWhileItClosesReturns(awaitedSession: Bool) async throws {
    for round in 0..<3 {
      let container = Container()
      let tokenClosed = Flag()
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request) { registry in
        registry.register(LogoutToken.self, lifetime: .scoped(.request)) { _ in
          LogoutToken(session: session, closed: tokenClosed)
        }
        registry.register(HeldDisposer.self, lifetime: .scoped(.request)) { _ in HeldDisposer() }
      }
      _ = try request.resolve(LogoutToken.self)
      let held = try request.resolve(HeldDisposer.self)

      let requestClosed = Flag()
      Thread {
        try? request.close()
        requestClosed.raise()
      }.start()
      #expect(await eventually(timeout: .seconds(60)) { held.entered.isRaised })

      // The session's close takes the request, still closing, and waits for it.
      let sessionClosed = Flag()
      if awaitedSession {
        Task {
          try? await session.close()
          sessionClosed.raise()
        }
      } else {
        Thread {
          try? session.close()
          sessionClosed.raise()
        }.start()
      }
      try await Task.sleep(for: .milliseconds(50))
      held.release.raise()

      #expect(
        await eventually(timeout: .seconds(60)) {
          requestClosed.isRaised && sessionClosed.isRaised && tokenClosed.isRaised
        },
        "round \(round): request \(requestClosed.isRaised), session \(sessionClosed.isRaised)")
    }
  }

  /// The token is freed in the request's background task, which the session's close (awaited, or
  /// synchronous on a thread) waits for: its `deinit`'s close of the session must not wait back.
  @Test(arguments: [false, true])
  func aDeinitInTheLeftBehindTaskClosingTheSessionReturns(awaitedSession: Bool) async throws {
    // One round: the deadlock this guards against blocks a thread of the task pool, and a second
    // one would leave none to the test on a 2-core machine (it would hang, not fail).
    for round in 0..<1 {
      let container = Container()
      let tokenClosed = Flag()
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request) { registry in
        registry.register(TokenHolder.self, lifetime: .scoped(.request)) { _ in
          TokenHolder(token: LogoutToken(session: session, closed: tokenClosed))
        }
      }
      _ = try request.resolve(TokenHolder.self)
      #expect(throws: ResolutionError.self) { try closeSynchronously(request) }

      let sessionClosed = Flag()
      if awaitedSession {
        Task {
          try? await session.close()
          sessionClosed.raise()
        }
      } else {
        Thread {
          try? session.close()
          sessionClosed.raise()
        }.start()
      }
      #expect(
        await eventually(timeout: .seconds(60)) { sessionClosed.isRaised && tokenClosed.isRaised },
        "round \(round): session \(sessionClosed.isRaised), token \(tokenClosed.isRaised)")
    }
  }
}
