import Dispatch
import Strata
import Synchronization

extension Workload {
  /// The synchronous request of a typical server handler: make a `.request` scope, resolve the
  /// auto-wired transient `Handler(context:tx:pool:)` (a request-scoped context, a request-scoped
  /// disposable transaction, a singleton pool), read a field, close the scope (which disposes the
  /// transaction).
  static let serverRequest = Workload(
    id: "server-request",
    summary: "request scope, auto-wired Handler(context, disposable tx, singleton pool), close"
  ) { _ in
    let container = try serverContainer()
    let naive = serverNaive()
    let pool = Pool()
    try checkServerRequest(container)
    return Subjects(
      strata: { count in
        for _ in 0..<count {
          let request = try container.makeScope(.request)
          let handler = try request.resolve(Handler.self)
          blackHole(handler)
          blackHole(handler.context.requestID)
          try request.close()
        }
      },
      manual: { count in for _ in 0..<count { blackHole(manualRequest(pool: pool)) } },
      naive: { count in for _ in 0..<count { blackHole(try naiveRequest(naive)) } })
  }

  /// `server-request` on 2 threads at once (wall time over all requests), as a server handles
  /// requests: every request that owns a disposable links itself into the container's list of
  /// children (under the lock of its thread's shard of that list) and unlinks when it closes, and
  /// retains the container, so this measures what the request threads share. Target: at most
  /// 0.63 times one thread's time per request (`server-request`, sampled alongside), as for
  /// `concurrent-transient`.
  static let concurrentServerRequest = onTwoThreads(serverRequest)

  /// `server-request-async` on 2 threads at once (wall time over all requests): each thread's
  /// loop runs in a task of its own on the global concurrent executor, as an asynchronous server's
  /// handlers do. One thread's requests, on a container of their own, are sampled alongside.
  static let concurrentServerRequestAsync = onTwoThreads(serverRequestAsync)

  /// `workload` on 2 threads at once, as `concurrent-<id>`, with one thread's Strata operation on
  /// a container of its own sampled alongside: the scaling target divides by it.
  private static func onTwoThreads(_ workload: Workload) -> Workload {
    Workload(
      id: "concurrent-\(workload.id)",
      summary: "\(workload.id) on 2 threads at once (wall time / all requests)", threads: 2
    ) { options in
      var subjects = try workload.setup(options)
      subjects.references[workload.id] = try workload.setup(options).strata
      return subjects
    }
  }

  /// `server-request` through the asynchronous `withScope(.request) { … }`, from a nonisolated
  /// async function.
  ///
  /// The harness's bodies are synchronous, so each body starts one detached task (on the global
  /// concurrent executor, no actor) that runs the whole loop of `count` requests, and blocks the
  /// harness's thread on a semaphore until it ends: the task's start and the wake-up are paid
  /// once per sample, not per request, and no executor hop is measured per request. The manual
  /// and naive baselines run the same way, each request inside one `TaskLocal.withValue`, as
  /// `withScope` sets the current scope in a task-local.
  static let serverRequestAsync = Workload(
    id: "server-request-async",
    summary: "server-request through async withScope(.request), in a nonisolated task"
  ) { _ in
    let container = try serverContainer()
    let naive = serverNaive()
    let pool = Pool()
    try checkServerRequest(container)
    return Subjects(
      strata: { count in try runBlocking { try await strataRequestsAsync(count, container: container) } },
      manual: { count in try runBlocking { await manualRequestsAsync(count, pool: pool) } },
      naive: { count in try runBlocking { try await naiveRequestsAsync(count, naive: naive) } })
  }
}

/// The container of the `server-request` workloads.
private func serverContainer() throws -> Container {
  try Container { registry in
    registry.register(Pool.self, lifetime: .singleton) { _ in Pool() }
    registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
    registry.register(Transaction.self, lifetime: .scoped(.request)) { _ in Transaction() }
    registry.register(Handler.self, Handler.init)
  }
}

/// The naive container of the `server-request` workloads: the pool; the request-scoped services
/// live in a ``NaiveScope``.
private func serverNaive() -> NaiveContainer {
  let naive = NaiveContainer()
  naive.register(Pool.self, singleton: true) { _ in Pool() }
  return naive
}

/// Checks that Strata shares the pool, makes one context and transaction per request, and
/// disposes the transaction when the request closes.
private func checkServerRequest(_ container: Container) throws {
  let request = try container.makeScope(.request)
  let handler = try request.resolve(Handler.self)
  let other = try request.resolve(Handler.self)
  try expect(
    handler !== other && handler.context === other.context && handler.tx === other.tx,
    "Strata did not share the request's context and transaction in one request")
  try expect(!handler.tx.isFinished, "Strata disposed the transaction before the request closed")
  try request.close()
  try expect(handler.tx.isFinished, "Strata did not dispose the transaction when the request closed")
  let next = try container.makeScope(.request)
  let later = try next.resolve(Handler.self)
  try expect(
    later.pool === handler.pool && later.context !== handler.context,
    "Strata did not share the pool, or reused a closed request's context")
  try next.close()
}

/// One request by hand: the context, transaction and handler made directly, the transaction
/// disposed at the end.
private func manualRequest(pool: Pool) -> Int {
  let context = RequestContext()
  let tx = Transaction()
  let handler = Handler(context: context, tx: tx, pool: pool)
  blackHole(handler)
  let requestID = handler.context.requestID
  tx.dispose()
  return requestID
}

/// One request through the naive container: the request's services in a ``NaiveScope``, the
/// transaction disposed by hand, since a naive scope does not dispose.
private func naiveRequest(_ naive: NaiveContainer) throws -> Int {
  let request = NaiveScope(parent: naive)
  let context = try request.resolve(RequestContext.self) { RequestContext() }
  let tx = try request.resolve(Transaction.self) { Transaction() }
  let handler = Handler(context: context, tx: tx, pool: try naive.resolve(Pool.self))
  blackHole(handler)
  let requestID = handler.context.requestID
  tx.dispose()
  return requestID
}

/// The task-local the async baselines set per request, as `withScope` sets the current scope.
enum BenchmarkRequest {
  @TaskLocal static var current: (any AnyObject & Sendable)?
}

private func strataRequestsAsync(_ count: Int, container: Container) async throws {
  for _ in 0..<count {
    let requestID = try await container.withScope(.request) { request in
      let handler = try request.resolve(Handler.self)
      blackHole(handler)
      return handler.context.requestID
    }
    blackHole(requestID)
  }
}

private func manualRequestsAsync(_ count: Int, pool: Pool) async {
  for _ in 0..<count {
    let context = RequestContext()
    // An `async` closure, so that the asynchronous `withValue` is measured, as `withScope` uses.
    let requestID = await BenchmarkRequest.$current.withValue(context) { () async -> Int in
      let tx = Transaction()
      let handler = Handler(context: context, tx: tx, pool: pool)
      blackHole(handler)
      let requestID = handler.context.requestID
      tx.dispose()
      return requestID
    }
    blackHole(requestID)
  }
}

private func naiveRequestsAsync(_ count: Int, naive: NaiveContainer) async throws {
  for _ in 0..<count {
    let request = NaiveScope(parent: naive)
    let requestID = try await BenchmarkRequest.$current.withValue(request) { () async throws -> Int in
      let context = try request.resolve(RequestContext.self) { RequestContext() }
      let tx = try request.resolve(Transaction.self) { Transaction() }
      let handler = Handler(context: context, tx: tx, pool: try naive.resolve(Pool.self))
      blackHole(handler)
      let requestID = handler.context.requestID
      tx.dispose()
      return requestID
    }
    blackHole(requestID)
  }
}

/// Runs `operation` in a detached task (the global concurrent executor, no actor) and blocks the
/// calling thread until it ends; rethrows its error, described.
func runBlocking(_ operation: @escaping @Sendable () async throws -> Void) throws {
  let outcome = BlockingOutcome()
  Task.detached {
    do {
      try await operation()
    } catch {
      outcome.failure.withLock { $0 = "\(error)" }
    }
    outcome.done.signal()
  }
  outcome.done.wait()
  if let failure = outcome.failure.withLock({ $0 }) { throw BenchmarkError(failure) }
}

/// What ``runBlocking(_:)`` and its task share.
private final class BlockingOutcome: Sendable {
  let done = DispatchSemaphore(value: 0)
  let failure = Mutex<String?>(nil)
}
