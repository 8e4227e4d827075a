import Strata
import Testing

/// An asynchronous resource whose disposal takes a while, so that a close that does not await it
/// returns before it finished.
private final class SlowAsyncResource: AsyncDisposable, Sendable {
  private let finished = Flag()
  private let fails: Bool

  init(fails: Bool = false) {
    self.fails = fails
  }

  var isDisposed: Bool { finished.isRaised }

  func dispose() async throws {
    try await Task.sleep(for: .milliseconds(50))
    finished.raise()
    if fails { throw DisposeFailure() }
  }
}

private struct DisposeFailure: Error, Equatable {}

/// In async code, closing a scope awaits its asynchronous disposers: the synchronous `close()`
/// and `withScope` are unavailable there (`@available(*, noasync)`), so the variant that would
/// leave them to a background task cannot be picked by accident.
@Suite struct AsyncClosingTests {
  @Test func awaitedCloseReturnsOnlyOnceAsyncDisposersFinished() async throws {
    let container = try Container { registry in
      registry.register(SlowAsyncResource.self, lifetime: .scoped(.request)) { _ in SlowAsyncResource() }
    }
    let request = try container.makeScope(.request)
    let resource = try request.resolve(SlowAsyncResource.self)

    try await request.close()

    #expect(resource.isDisposed)
  }

  @Test func withScopeWhoseBodyNeverAwaitsStillAwaitsAsyncDisposers() async throws {
    let container = try Container { registry in
      registry.register(SlowAsyncResource.self, lifetime: .scoped(.request)) { _ in SlowAsyncResource() }
    }
    // The body is synchronous; in async code the call still takes the awaiting variant.
    let resource = try await container.withScope(.request) { scope in
      try scope.resolve(SlowAsyncResource.self)
    }

    #expect(resource.isDisposed)
  }

  @Test func theGlobalWithScopeWhoseBodyNeverAwaitsStillAwaitsAsyncDisposers() async throws {
    let container = try Container { registry in
      registry.register(SlowAsyncResource.self, lifetime: .scoped(.request)) { _ in SlowAsyncResource() }
    }
    let resource = try await container.withScope(.session) { _ in
      try await withScope(.request) { scope in try scope.resolve(SlowAsyncResource.self) }
    }

    #expect(resource.isDisposed)
  }

  @Test func anAsyncDisposerErrorReachesTheAwaitingCaller() async throws {
    let container = try Container { registry in
      registry.register(SlowAsyncResource.self, lifetime: .scoped(.request)) { _ in
        SlowAsyncResource(fails: true)
      }
    }

    let error = await #expect(throws: ResolutionError.self) {
      try await container.withScope(.request) { scope in _ = try scope.resolve(SlowAsyncResource.self) }
    }

    #expect(error?.code == .disposalFailed)
    #expect(error?.disposalErrors.count == 1)
  }
}
