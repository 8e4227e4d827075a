import Foundation
import Strata
import Testing

/// A session's connection.
private final class SessionLink: Disposable, Sendable {
  let closed = Flag()
  func dispose() throws { closed.raise() }
}

/// A request's rollback, left behind by a synchronous close, that needs the session's link open,
/// and then resolves from the session and makes a scope of it, which is closing by then.
private final class Undo: AsyncDisposable, Sendable {
  let link: SessionLink
  let session: Scope
  let onOpenLink = Flag()
  let done = Flag()
  let sessionRefused = Flag()
  init(link: SessionLink, session: Scope) {
    self.link = link
    self.session = session
  }
  func dispose() async throws {
    try? await Task.sleep(for: .milliseconds(20))
    if !link.closed.isRaised { onOpenLink.raise() }
    let resolved = try? session.resolve(SessionLink.self)
    let made = try? session.makeScope(.request)
    if resolved == nil || made == nil { sessionRefused.raise() }
    try? await made?.close()
    done.raise()
  }
}

private func makeContainer() throws -> Container {
  try Container { registry in
    registry.register(SessionLink.self, lifetime: .scoped(.session)) { _ in SessionLink() }
    registry.register(Undo.self, lifetime: .scoped(.request)) { resolver in
      Undo(
        link: try resolver.resolve(SessionLink.self),
        session: resolver.currentScope.parent ?? resolver.currentScope)
    }
  }
}

/// Nested `withScope` (synchronous and asynchronous) with a request whose rollback is left behind.
@Suite struct LeftBehindWithScopeTests {
  @Test func nestedSynchronousWithScopeDisposesTheSessionAfterTheRollback() async throws {
    let container = try makeContainer()
    for round in 0..<5 {
      let undo = Slot<Undo>()
      let finished = await runOnThreads(1, timeout: .seconds(60)) { _ in
        _ = try? container.withScope(.session) { session in
          try session.withScope(.request) { request in undo.value = try request.resolve(Undo.self) }
        }
      }
      #expect(finished, "round \(round): withScope hangs")
      let made = try #require(undo.value)
      #expect(await eventually(timeout: .seconds(60)) { made.done.isRaised && made.link.closed.isRaised })
      #expect(made.onOpenLink.isRaised, "round \(round): the session's link was closed first")
    }
  }

  @Test func nestedAsynchronousWithScopeClosesAfterTheRollback() async throws {
    let container = try makeContainer()
    for _ in 0..<5 {
      let made = try await container.withScope(.session) { _ in
        try await withScope(.request) { request in try request.resolve(Undo.self) }
      }
      #expect(made.done.isRaised && made.onOpenLink.isRaised && made.link.closed.isRaised)
    }
  }

  /// The session's synchronous close, after the request's, refuses the rollback's resolve and child.
  @Test func aLeftBehindDisposerResolvingFromAClosingParentIsRefused() async throws {
    let container = try makeContainer()
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let undo = try request.resolve(Undo.self)
    #expect(throws: ResolutionError.self) { try closeSynchronously(request) }
    try closeSynchronously(session)
    #expect(await eventually(timeout: .seconds(60)) { undo.done.isRaised && undo.link.closed.isRaised })
    #expect(undo.onOpenLink.isRaised && undo.sessionRefused.isRaised)
  }
}
