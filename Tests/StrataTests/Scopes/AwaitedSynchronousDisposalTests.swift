import Strata
import Testing

/// An awaited close whose disposers are all synchronous runs them on the calling thread, without
/// a task of its own; these tests hold it to what the general awaited close promises: every
/// disposer once, in reverse creation order, every error reported, no wait on itself, and a
/// cancelled caller's close not cut short.
@Suite struct AwaitedSynchronousDisposalTests {
  @Test func everySynchronousDisposerRunsOnceInReverseOrderAndEveryErrorIsReported() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      for (index, ordinal) in [Ordinal.first, .second, .third].enumerated() {
        registry.register(TrackedResource.self, name: ordinal, lifetime: .scoped(.request)) { _ in
          TrackedResource("r\(index)", log: log, fails: index != 1)
        }
      }
    }
    let request = try container.makeScope(.request)
    let resources = try [Ordinal.first, .second, .third].map {
      try request.resolve(TrackedResource.self, name: $0)
    }

    let error = try await #require(throws: ResolutionError.self) { try await request.close() }

    #expect(error.code == .disposalFailed)
    #expect(error.disposalErrors.count == 2)
    #expect(log.elements == ["dispose r2", "dispose r1", "dispose r0"])
    #expect(resources.map(\.disposeCount) == [1, 1, 1])
    #expect(request.isClosed)
  }

  @Test func aWithScopeOfOnlySynchronousDisposersDisposesBeforeItReturns() async throws {
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("tx", disposed: disposed)
      }
    }

    for round in 1...50 {
      let seen = try await container.withScope(.request) { request in
        try request.resolve(TrackedResource.self).disposeCount
      }
      #expect(seen == 0)
      #expect(disposed.value == round, "round \(round)")
    }
  }

  @Test func aSynchronousDisposerThatClosesItsOwnScopeDoesNotWaitForItself() async throws {
    let owner = Slot<Scope>()
    let closedInside = Flag()
    let container = try Container { registry in
      registry.register(ScopeCloser.self, lifetime: .scoped(.request)) { _ in
        ScopeCloser(owner: owner, closedInside: closedInside)
      }
    }
    let request = try container.makeScope(.request)
    owner.value = request
    _ = try request.resolve(ScopeCloser.self)
    let finished = Flag()

    let closing = Task {
      try await request.close()
      finished.raise()
    }

    #expect(await eventually(timeout: .seconds(20)) { finished.isRaised }, "the close waited for itself")
    #expect(closedInside.isRaised)
    closing.cancel()
  }

  @Test func aCancelledCallersAwaitedCloseStillRunsEverySynchronousDisposer() async throws {
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .scoped(.request)) { _ in
        TrackedResource("a", disposed: disposed)
      }
      registry.register(TrackedResource.self, name: Ordinal.second, lifetime: .scoped(.request)) { _ in
        TrackedResource("b", disposed: disposed)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(TrackedResource.self, name: Ordinal.first)
    _ = try request.resolve(TrackedResource.self, name: Ordinal.second)

    let closing = Task {
      while !Task.isCancelled { await Task.yield() }
      try await request.close()
    }
    closing.cancel()
    try await closing.value

    #expect(disposed.value == 2)
    #expect(request.isClosed)
  }

  // `withScope` from a non-isolated caller begins the close without an async call; what needs
  // awaiting still is awaited.

  @Test func aCancelledCallersWithScopeRunsSynchronousDisposersOutsideItsCancellation() async throws {
    let sawCancellation = Slot<Bool>()
    let container = try Container { registry in
      registry.register(CancellationWitness.self, lifetime: .scoped(.request)) { _ in
        CancellationWitness(saw: sawCancellation)
      }
    }

    let request = Task {
      while !Task.isCancelled { await Task.yield() }
      try await container.withScope(.request) { _ = try $0.resolve(CancellationWitness.self) }
    }
    request.cancel()
    try await request.value

    #expect(sawCancellation.value == false, "the disposer ran in the cancelled task")
  }

  @Test func aWithScopeAwaitsAnAsyncDisposerBeforeItReturns() async throws {
    let container = try Container { registry in
      registry.register(AsyncTrackedResource.self, lifetime: .scoped(.request)) { _ in
        AsyncTrackedResource("async")
      }
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("sync") }
    }

    for _ in 0..<20 {
      let (asynchronous, synchronous) = try await container.withScope(.request) { request in
        (try request.resolve(AsyncTrackedResource.self), try request.resolve(TrackedResource.self))
      }
      #expect(asynchronous.disposeCount == 1)
      #expect(synchronous.disposeCount == 1)
    }
  }

  @Test func aWithScopeWhoseBodyClosedTheScopeReturnsAndDisposesOnce() async throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("tx") }
    }

    let resource = try await container.withScope(.request) { request in
      let resource = try request.resolve(TrackedResource.self)
      try await request.close()
      return resource
    }

    #expect(resource.disposeCount == 1)
  }
}

/// Records whether its disposer ran in a cancelled task.
private final class CancellationWitness: Disposable, Sendable {
  let saw: Slot<Bool>
  init(saw: Slot<Bool>) { self.saw = saw }
  func dispose() { saw.value = Task.isCancelled }
}

/// Closes its own scope, synchronously, from its disposer.
private final class ScopeCloser: Disposable, Sendable {
  let owner: Slot<Scope>
  let closedInside: Flag

  init(owner: Slot<Scope>, closedInside: Flag) {
    self.owner = owner
    self.closedInside = closedInside
  }

  func dispose() throws {
    try owner.value?.close()
    closedInside.raise()
  }
}
