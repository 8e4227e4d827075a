import Strata
import Testing

/// Disposers never run on the caller's actor: a main-actor caller that awaits `withScope` or
/// `close()` does not have its scope's disposers run on the main thread.
@Suite struct AssaultIsolationTests {
  /// A main-actor test closing one request through `withScope` and one with the awaited
  /// `close()`: each disposer runs once, off the main thread.
  @MainActor
  @Test func disposersNeverRunOnTheMainActorOfAnAwaitingCaller() async throws {
    let container = try Container { registry in
      registry.register(MainThreadProbe.self, lifetime: .scoped(.request)) { _ in MainThreadProbe() }
    }
    let first = try await container.withScope(.request) { scope in try scope.resolve(MainThreadProbe.self) }
    let request = try container.makeScope(.request)
    let second = try request.resolve(MainThreadProbe.self)
    try await request.close()
    #expect(first.ranOnMain == [false], "a disposer ran on the caller's actor (withScope)")
    #expect(second.ranOnMain == [false], "a disposer ran on the caller's actor (close)")
  }
}
