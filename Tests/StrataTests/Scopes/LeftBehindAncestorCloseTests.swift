import Foundation
import Strata
import Testing

/// The request's oldest instance, disposed in the background task after the closer: it waits
/// (without holding a thread, at most 300 ms) to see whether the session's instance is disposed
/// meanwhile, which would mean the session's disposals run alongside the request's, not after them.
private final class WatchingAsync: AsyncDisposable, Sendable {
  let log: Collector<String>
  let watched: TrackedResource
  init(log: Collector<String>, watching watched: TrackedResource) {
    self.log = log
    self.watched = watched
  }
  func dispose() async throws {
    let deadline = ContinuousClock.now + .milliseconds(300)
    while watched.disposeCount == 0, ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(1))
    }
    log.append("dispose request-oldest")
  }
}

/// A synchronous disposer that closes a scope it is given, synchronously.
private final class SyncCloser: Disposable, Sendable {
  let target: Scope
  let log: Collector<String>
  init(closing target: Scope, log: Collector<String>) {
    self.target = target
    self.log = log
  }
  func dispose() throws {
    log.append("closer")
    try? target.close()
  }
}

/// An asynchronous disposer, the request's newest, which the synchronous close leaves behind: it
/// sleeps first (the close that left it has returned) or not (the close may still be unlinking the
/// request from the session).
private final class LeftAsync: AsyncDisposable, Sendable {
  let sleepsFirst: Bool
  let log: Collector<String>
  init(sleepsFirst: Bool, log: Collector<String>) {
    self.sleepsFirst = sleepsFirst
    self.log = log
  }
  func dispose() async throws {
    if sleepsFirst { try? await Task.sleep(for: .milliseconds(20)) }
    log.append("async dispose")
  }
}

/// The request's newest instance, an asynchronous disposer that closes `target` synchronously at
/// once: its task may start before the close that left it behind has unlinked the request.
private final class ClosingAsync: AsyncDisposable, Sendable {
  let target: Scope
  let log: Collector<String>
  init(closing target: Scope, log: Collector<String>) {
    self.target = target
    self.log = log
  }
  func dispose() async throws {
    log.append("closer")
    closeNow(target)
  }
}

/// Closes `scope` synchronously, from asynchronous code.
private func closeNow(_ scope: Scope) {
  try? scope.close()
}

/// A disposer that runs in the background task of a request's synchronous close, and closes the
/// session synchronously. The session's close leaves its own disposals to a task of its own, which
/// is not the request's task, so nothing stops it from waiting for the request's task: the
/// session's instances must be disposed after the rest of the request's, not alongside them.
@Suite struct LeftBehindAncestorCloseTests {
  @Test(arguments: [true, false])
  func aLeftBehindDisposerClosingTheParentSynchronouslyKeepsTheOrder(sleepsFirst: Bool) async throws {
    for round in 0..<5 {
      let log = Collector<String>()
      let container = Container()
      let session = try container.makeScope(.session) { registry in
        registry.register(TrackedResource.self, lifetime: .scoped(.session)) { _ in
          TrackedResource("session", log: log)
        }
      }
      let request = try session.makeScope(.request) { registry in
        registry.register(WatchingAsync.self, lifetime: .scoped(.request)) { resolver in
          WatchingAsync(log: log, watching: try resolver.resolve(TrackedResource.self))
        }
        registry.register(SyncCloser.self, lifetime: .scoped(.request)) { _ in
          SyncCloser(closing: session, log: log)
        }
        registry.register(LeftAsync.self, lifetime: .scoped(.request)) { _ in
          LeftAsync(sleepsFirst: sleepsFirst, log: log)
        }
      }
      _ = try request.resolve(WatchingAsync.self)
      _ = try request.resolve(SyncCloser.self)
      _ = try request.resolve(LeftAsync.self)

      #expect(throws: ResolutionError.self) { try closeSynchronously(request) }

      #expect(await eventually(timeout: .seconds(60)) { log.elements.count == 4 }, "round \(round)")
      #expect(
        log.elements == ["async dispose", "closer", "dispose request-oldest", "dispose session"],
        "round \(round): the session's instance was disposed while the request's task still ran")
      try await container.close()
    }
  }

  /// The same with the closer starting at once, many rounds: when the session's close finds the
  /// request still linked (its synchronous close is still unlinking it), it waits for that close
  /// and follows the task it left, instead of disposing the session's instances inside the closer.
  @Test func aLeftBehindDisposerClosingTheParentAtOnceKeepsTheOrder() async throws {
    var misordered = 0
    for _ in 0..<300 {
      let log = Collector<String>()
      let container = Container()
      let session = try container.makeScope(.session) { registry in
        registry.register(TrackedResource.self, lifetime: .scoped(.session)) { _ in
          TrackedResource("session", log: log)
        }
      }
      let request = try session.makeScope(.request) { registry in
        registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
          TrackedResource("request-oldest", log: log)
        }
        registry.register(ClosingAsync.self, lifetime: .scoped(.request)) { _ in
          ClosingAsync(closing: session, log: log)
        }
      }
      _ = try session.resolve(TrackedResource.self)
      _ = try request.resolve(TrackedResource.self)
      _ = try request.resolve(ClosingAsync.self)

      #expect(throws: ResolutionError.self) { try closeSynchronously(request) }

      #expect(await eventually(timeout: .seconds(60)) { log.elements.count == 3 })
      if log.elements != ["closer", "dispose request-oldest", "dispose session"] { misordered += 1 }
      try await container.close()
    }
    #expect(misordered == 0, "the session's instance was disposed first in \(misordered) of 300 rounds")
  }
}
