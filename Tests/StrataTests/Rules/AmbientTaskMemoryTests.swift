import Strata
import Testing

/// Records the scope that code in a task it starts sees as current.
private final class ScopeRecorder: Sendable {
  let task: Task<Scope?, Never>
  init() { task = Task { Scope.current } }
}

/// A request-scoped recorder, and one scoped to the session.
private final class RequestRecorder: Sendable {
  let recorder = ScopeRecorder()
}
private final class SessionRecorder: Sendable {
  let recorder = ScopeRecorder()
}
private final class SingletonRecorder: Sendable {
  let recorder = ScopeRecorder()
}

/// Made for one handler: a request's recorder first, then shared instances of longer-lived scopes.
private final class RecordingHandler: Sendable {
  let request: RequestRecorder
  let session: SessionRecorder
  let singleton: SingletonRecorder
  init(request: RequestRecorder, session: SessionRecorder, singleton: SingletonRecorder) {
    self.request = request
    self.session = session
    self.singleton = singleton
  }
}

/// Several shared instances made in one resolve, around a binding that changes inside it: a task
/// that each one's factory starts sees that instance's scope. (Guards for a resolve that would
/// remember what it read of the ambient task-local between the instances it makes: tried, and
/// backed out for costing every top-level resolve 24 instructions; both tests failed against its
/// mutants.)
@Suite struct AmbientTaskMemoryTests {
  private static func container() throws -> Container {
    try Container { registry in
      registry.register(RequestRecorder.self, lifetime: .scoped(.request)) { _ in RequestRecorder() }
      registry.register(SessionRecorder.self, lifetime: .scoped(.session)) { _ in SessionRecorder() }
      registry.register(SingletonRecorder.self, lifetime: .singleton) { _ in SingletonRecorder() }
      registry.register(RecordingHandler.self, RecordingHandler.init)
    }
  }

  /// The request's instance is made first (the request is current, nothing to bind), then the
  /// session's and the container's in the same resolve: their tasks see their own scopes.
  @Test func instancesOfLongerLivedScopesMadeAfterARequestsOwnInOneResolveBindTheirScopes() async throws {
    let container = try Self.container()
    let session = try container.makeScope(.session)
    let (request, handler) = try await session.withScope(.request) { request in
      (request, try request.resolve(RecordingHandler.self))
    }
    #expect(await handler.request.recorder.task.value === request)
    #expect(await handler.session.recorder.task.value === session)
    #expect(await handler.singleton.recorder.task.value === container)
    try await session.close()
    try await container.close()
  }

  /// A factory that opens a synchronous `withScope` and resolves a request-scoped instance through
  /// its own resolver in it: the scope now bound is not the one the resolve read before, so the
  /// instance's task must see the instance's scope, not the new one.
  @Test func aSynchronousWithScopeInsideAResolveIsNotHiddenByWhatTheResolveRead() async throws {
    let container = try Container { registry in
      registry.register(RequestRecorder.self, lifetime: .scoped(.request)) { _ in RequestRecorder() }
      registry.register(SessionRecorder.self, lifetime: .scoped(.request)) { _ in SessionRecorder() }
      registry.register(OpeningHandler.self) { resolver in
        let first = try resolver.resolve(RequestRecorder.self)  // reads: the request is bound
        let opened = try openScopeAndResolve(resolver)
        return OpeningHandler(first: first, second: opened.recorder, opened: opened.scope)
      }
    }
    let (request, handler) = try makeRequestAndResolve(container)
    #expect(await handler.first.recorder.task.value === request)
    let seen = await handler.second.recorder.task.value
    #expect(seen === request, "saw \(seen.map { "\($0)" } ?? "none"), opened \(handler.opened)")
    try await container.close()
  }
}

private final class OpeningHandler: Sendable {
  let first: RequestRecorder
  let second: SessionRecorder
  let opened: Scope
  init(first: RequestRecorder, second: SessionRecorder, opened: Scope) {
    self.first = first
    self.second = second
    self.opened = opened
  }
}

/// Inside a factory: opens a child of the container with the synchronous `withScope` and, while it
/// is bound, resolves through the factory's own resolver (whose scope is still the request).
private func openScopeAndResolve(_ resolver: borrowing Resolver) throws -> (
  recorder: SessionRecorder, scope: Scope
) {
  let container = resolver.currentScope.parent ?? resolver.currentScope
  var result: (SessionRecorder, Scope)?
  try container.withScope(.session) { opened in
    result = (try resolver.resolve(SessionRecorder.self), opened)
  }
  guard let result else { throw CancellationError() }
  return result
}

/// The synchronous `withScope` around the resolve, from a synchronous function.
private func makeRequestAndResolve(_ container: Container) throws -> (Scope, OpeningHandler) {
  try container.withScope(.request) { request in (request, try request.resolve(OpeningHandler.self)) }
}
