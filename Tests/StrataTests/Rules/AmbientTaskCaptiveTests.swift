import Strata
import Synchronization
import Testing

/// A request's context: one per request scope.
private final class TaskRequestContext: Sendable {}

/// A shared service whose factory starts a background task (a flusher, a refresher), which
/// resolves from `Scope.current` as code in a task does.
private final class BackgroundWorker: Sendable {
  let task: Task<(Scope?, String), Never>

  init() {
    task = Task {
      let current = Scope.current
      do {
        _ = try current?.resolve(TaskRequestContext.self)
        return (current, "resolved the request's context")
      } catch let error as ResolutionError {
        return (current, "\(error.code)")
      } catch {
        return (current, "\(error)")
      }
    }
  }
}

/// A session's service that starts its workers later, through a `Provider`.
private final class WorkerPool: Sendable {
  let workers: Provider<BackgroundWorker>
  init(workers: Provider<BackgroundWorker>) { self.workers = workers }
}

/// `Scope.current` is inherited by child tasks, and inside a shared instance's factory it is the
/// scope that will own the instance: so a task that such a factory starts sees that scope, never
/// the (shorter-lived) scope of the request that happened to make the instance first.
@Suite struct AmbientTaskCaptiveTests {
  private static func container(_ lifetime: Lifetime) throws -> Container {
    try Container { registry in
      registry.register(TaskRequestContext.self, lifetime: .scoped(.request)) { _ in TaskRequestContext() }
      registry.register(BackgroundWorker.self, lifetime: lifetime) { _ in BackgroundWorker() }
    }
  }

  @Test(arguments: [Lifetime.singleton, .weak])
  func aTaskStartedByASingletonsFactoryDoesNotSeeTheRequestThatMadeIt(lifetime: Lifetime) async throws {
    let container = try Self.container(lifetime)
    // The task runs while the request is still open: it must not find (and keep) its context.
    let (seen, outcome) = try await container.withScope(.request) { request in
      await (try request.resolve(BackgroundWorker.self)).task.value
    }
    #expect(seen === container, "the singleton's task saw \(seen.map { "\($0)" } ?? "no scope")")
    #expect(outcome == "\(ResolutionError.Code.noMatchingScope)", "the singleton's task: \(outcome)")
    try await container.close()
  }

  @Test func aTaskStartedByASessionScopedFactoryDoesNotSeeTheRequestThatMadeIt() async throws {
    let container = try Self.container(.scoped(.session))
    let session = try container.makeScope(.session)
    let worker = try await session.withScope(.request) { request in
      try request.resolve(BackgroundWorker.self)
    }
    let (seen, outcome) = await worker.task.value
    #expect(seen === session, "the session's task saw \(seen.map { "\($0)" } ?? "no scope")")
    #expect(outcome == "\(ResolutionError.Code.noMatchingScope)", "the session's task: \(outcome)")
    try await container.close()
  }

  /// A session's `Provider` resolves with the session current, as the session's factory would,
  /// whoever calls it: a task that the (transient) worker starts sees the session too.
  @Test func aTaskStartedByWhatASessionsProviderMakesDoesNotSeeTheCallersRequest() async throws {
    let container = try Container { registry in
      registry.register(TaskRequestContext.self, lifetime: .scoped(.request)) { _ in TaskRequestContext() }
      registry.register(BackgroundWorker.self) { _ in BackgroundWorker() }
      registry.register(WorkerPool.self, lifetime: .scoped(.session), WorkerPool.init)
    }
    let session = try container.makeScope(.session)
    let pool = try session.resolve(WorkerPool.self)
    let (seen, outcome) = try await session.withScope(.request) { _ in
      await (try pool.workers()).task.value
    }
    #expect(seen === session, "the provided worker's task saw \(seen.map { "\($0)" } ?? "no scope")")
    #expect(outcome == "\(ResolutionError.Code.noMatchingScope)", "the provided worker's task: \(outcome)")
    try await container.close()
  }

  /// A request-scoped instance's task sees its request, as before.
  @Test func aTaskStartedByARequestScopedFactorySeesItsRequest() async throws {
    let container = try Self.container(.scoped(.request))
    let (request, worker) = try await container.withScope(.request) { request in
      (request, try request.resolve(BackgroundWorker.self))
    }
    let (seen, _) = await worker.task.value
    #expect(seen === request)
    try await container.close()
  }
}

extension AmbientTaskCaptiveTests {
  /// A shared instance first made inside a task group's body (in the parent task, between
  /// `addTask` calls), with a scope current: the factory's binding of the current scope must
  /// not trip the runtime's check against task-local bindings in a task group's body.
  @Test func aSingletonFirstMadeInsideATaskGroupsBodyIsMadeAndTheGroupRuns() async throws {
    let container = try Self.container(.singleton)
    let ran = try await container.withScope(.request) { request in
      try await withThrowingTaskGroup(of: Int.self) { group in
        group.addTask { 1 }
        let (seen, _) = await (try request.resolve(BackgroundWorker.self)).task.value
        #expect(seen === container)
        group.addTask { 2 }
        return try await group.reduce(0, +)
      }
    }
    #expect(ran == 3)
    try await container.close()
  }
}
