import Strata
import Testing

/// Asynchronous disposers: an awaited close awaits them; a synchronous one reports them.
@Suite struct AsyncDisposalTests {
  @Test func aSynchronousCloseReportsAsyncDisposalRequiredAndKeepsTheOrderInTheBackground() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .scoped(.request)) { _ in
        TrackedResource("older", log: log)
      }
      registry.register(AsyncTrackedResource.self, lifetime: .scoped(.request)) { _ in
        AsyncTrackedResource("pool", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.third, lifetime: .scoped(.request)) { _ in
        TrackedResource("newer", log: log)
      }
    }
    let request = try container.makeScope(.request)
    let older = try request.resolve(TrackedResource.self, name: Ordinal.first)
    let pool = try request.resolve(AsyncTrackedResource.self)
    let newer = try request.resolve(TrackedResource.self, name: Ordinal.third)

    let error = try #require(resolutionError { try request.close() })

    #expect(error.code == .disposalFailed)
    #expect(error.disposalErrors.count == 1)
    let disposalError = try #require(error.disposalErrors.first as? DisposalError)
    #expect(disposalError.underlying is AsyncDisposalRequired)
    #expect(isPlainKey(disposalError.key, of: AsyncTrackedResource.self))
    // What was made after the asynchronous instance is disposed before `close()` returns.
    #expect(newer.disposeCount == 1)
    #expect(request.isClosed)
    // The asynchronous disposer runs once, in the background, and what was made before it (what it
    // may be built from) is disposed after it there, not before.
    #expect(await eventually { older.disposeCount == 1 })
    #expect(log.elements == ["dispose newer", "async dispose pool", "dispose older"])
    try await Task.sleep(for: .milliseconds(20))
    #expect([older.disposeCount, pool.disposeCount, newer.disposeCount] == [1, 1, 1])
  }

  @Test func anAwaitedCloseAwaitsAsyncDisposersInReverseCreationOrderExactlyOnce() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .scoped(.request)) { _ in
        TrackedResource("first", log: log)
      }
      registry.register(AsyncTrackedResource.self, lifetime: .scoped(.request)) { _ in
        AsyncTrackedResource("pool", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.third, lifetime: .scoped(.request)) { _ in
        TrackedResource("third", log: log)
      }
    }
    let request = try container.makeScope(.request)
    let first = try request.resolve(TrackedResource.self, name: Ordinal.first)
    let pool = try request.resolve(AsyncTrackedResource.self)
    let third = try request.resolve(TrackedResource.self, name: Ordinal.third)

    try await request.close()

    #expect(log.elements == ["dispose third", "async dispose pool", "dispose first"])
    #expect(pool.disposeCount == 1)
    try await request.close()
    try closeSynchronously(request)
    #expect([first.disposeCount, pool.disposeCount, third.disposeCount] == [1, 1, 1])
    #expect(log.elements.count == 3)
  }

  @Test func anAwaitedCloseOfAParentAwaitsItsChildrenFirst() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(AsyncTrackedResource.self, name: Ordinal.first, lifetime: .scoped(.session)) {
        _ in
        AsyncTrackedResource("session", log: log)
      }
      registry.register(AsyncTrackedResource.self, name: Ordinal.second, lifetime: .scoped(.request)) {
        _ in
        AsyncTrackedResource("request", log: log)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    _ = try request.resolve(AsyncTrackedResource.self, name: Ordinal.first)
    _ = try request.resolve(AsyncTrackedResource.self, name: Ordinal.second)

    try await session.close()

    #expect(log.elements == ["async dispose request", "async dispose session"])
    #expect(request.isClosed)
  }
}
