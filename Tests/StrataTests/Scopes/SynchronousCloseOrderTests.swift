import Strata
import Synchronization
import Testing

/// A transaction built from a connection, rolled back (asynchronously) through it.
private final class RollbackTransaction: AsyncDisposable, Sendable {
  let connection: TrackedConnection
  /// 0: not disposed yet; 1: rolled back on an open connection; 2: the connection was disposed first.
  let outcome = Atomic<Int>(0)
  init(connection: TrackedConnection) { self.connection = connection }
  func dispose() async throws {
    await Task.yield()
    outcome.store(connection.isOpen ? 1 : 2, ordering: .sequentiallyConsistent)
  }
  var hasRolledBack: Bool { outcome.load(ordering: .sequentiallyConsistent) != 0 }
  var rolledBackOnOpenConnection: Bool { outcome.load(ordering: .sequentiallyConsistent) == 1 }
}

/// A synchronous `close()` cannot await an ``AsyncDisposable``; it leaves it to a background task.
/// What the instance was built from must still be disposed after it: in that task, not before.
@Suite struct SynchronousCloseOrderTests {
  @Test func anAsyncDisposableIsDisposedBeforeTheScopedInstanceItWasBuiltFrom() async throws {
    let container = try Container { registry in
      registry.register(TrackedConnection.self, lifetime: .scoped(.request)) { _ in TrackedConnection() }
      registry.register(RollbackTransaction.self, lifetime: .scoped(.request), RollbackTransaction.init)
    }
    for round in 0..<20 {
      let request = try container.makeScope(.request)
      let transaction = try request.resolve(RollbackTransaction.self)

      let error = try #require(resolutionError { try closeSynchronously(request) })

      #expect(error.disposalErrors.count == 1)
      #expect((error.disposalErrors.first as? DisposalError)?.underlying is AsyncDisposalRequired)
      #expect(await eventually { transaction.hasRolledBack }, "round \(round)")
      #expect(transaction.rolledBackOnOpenConnection, "round \(round): the connection was disposed first")
      #expect(await eventually { !transaction.connection.isOpen }, "round \(round)")
    }
  }

  @Test func aParentsInstancesWaitForWhatAChildLeftToTheBackground() async throws {
    let container = try Container { registry in
      registry.register(TrackedConnection.self, lifetime: .scoped(.session)) { _ in TrackedConnection() }
      registry.register(RollbackTransaction.self, lifetime: .scoped(.request), RollbackTransaction.init)
    }
    for round in 0..<20 {
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request)
      let transaction = try request.resolve(RollbackTransaction.self)

      // Closing the session closes the request first; the request's transaction is rolled back in
      // the background, so the session's connection must be disposed after it, there too.
      let error = try #require(resolutionError { try closeSynchronously(session) })

      #expect(error.disposalErrors.count == 1)
      #expect(request.isClosed && session.isClosed)
      #expect(await eventually { transaction.hasRolledBack }, "round \(round)")
      #expect(
        transaction.rolledBackOnOpenConnection, "round \(round): the session's connection was disposed first")
      #expect(await eventually { !transaction.connection.isOpen }, "round \(round)")
    }
  }

  @Test func aChainOfScopesClosedFromTheRootKeepsTheOrderAndDisposesEachOnce() async throws {
    let log = Collector<String>()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { _ in
        TrackedResource("root singleton", log: log, disposed: disposed)
      }
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .scoped(.session)) { _ in
        TrackedResource("session", log: log, disposed: disposed)
      }
      registry.register(AsyncTrackedResource.self, lifetime: .scoped(.request)) { _ in
        AsyncTrackedResource("request", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.third, lifetime: .scoped(.request)) { _ in
        TrackedResource("request, newer", log: log, disposed: disposed)
      }
    }
    _ = try container.resolve(TrackedResource.self)
    let session = try container.makeScope(.session)
    _ = try session.resolve(TrackedResource.self, name: Ordinal.first)
    let request = try session.makeScope(.request)
    _ = try request.resolve(AsyncTrackedResource.self)
    _ = try request.resolve(TrackedResource.self, name: Ordinal.third)

    let error = try #require(resolutionError { try closeSynchronously(container) })

    #expect(error.disposalErrors.count == 1)
    #expect(await eventually { disposed.value == 3 })
    #expect(
      log.elements == [
        "dispose request, newer", "async dispose request", "dispose session", "dispose root singleton",
      ])
    try await Task.sleep(for: .milliseconds(20))
    #expect(disposed.value == 3)
    #expect(log.elements.count == 4)
  }
}
