import Dispatch
import Foundation
import Strata
import Testing

/// An instance that holds its own scope and closes it when it is freed, as a token tying some
/// work to the scope's life might. Its `deinit` runs when the closing scope lets go of it.
private final class ClosingToken: @unchecked Sendable {
  var scope: Scope?
  deinit { try? scope?.close() }
}

/// A close finishes before it lets go of what the scope cached: the `deinit` of a cached
/// instance may close the same scope again, and that close must return rather than wait for the
/// close that runs it (it waited forever before, for scopes that owned nothing to dispose).
@Suite(.serialized) struct ReentrantReleaseTests {
  /// Runs `body` on a thread of its own and says whether it returned within 10 seconds.
  private func finishes(_ body: @escaping @Sendable () throws -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread {
      try? body()
      done.signal()
    }.start()
    return done.wait(timeout: .now() + 10) == .success
  }

  private func container(_ lifetime: UnsharedLifetime) throws -> Container {
    try Container { registry in
      registry.register(ClosingToken.self, lifetime: lifetime) { _ in ClosingToken() }
    }
  }

  @Test func aScopedInstanceWhoseDeinitClosesItsScope() throws {
    let container = try container(.unchecked(.scoped(.request)))
    let finished = finishes {
      let request = try container.makeScope(.request)
      try request.resolve(ClosingToken.self).scope = request
      try request.close()
      #expect(request.isClosed)
    }
    #expect(finished, "the close waited for itself")
  }

  @Test func aChildSingletonWhoseDeinitClosesItsScope() throws {
    let container = Container()
    let finished = finishes {
      let session = try container.makeScope(.session) { registry in
        registry.register(ClosingToken.self, lifetime: .unchecked(.singleton)) { _ in ClosingToken() }
      }
      try session.resolve(ClosingToken.self).scope = session
      try session.close()
    }
    #expect(finished, "the close waited for itself")
  }

  @Test func aScopeClosedThroughItsParent() throws {
    final class Disposed: Disposable, Sendable { func dispose() throws {} }
    let container = try Container { registry in
      registry.register(ClosingToken.self, lifetime: .unchecked(.scoped(.request))) { _ in ClosingToken() }
      registry.register(Disposed.self, lifetime: .scoped(.session)) { _ in Disposed() }
    }
    let finished = finishes {
      let session = try container.makeScope(.session)
      _ = try session.resolve(Disposed.self)  // links the session into the container
      let request = try session.makeScope(.request)
      try request.resolve(ClosingToken.self).scope = session
      _ = try request.resolve(Disposed.self)
      try container.close()
      withExtendedLifetime(request) {}
    }
    #expect(finished, "the close waited for itself")
  }

  /// A close that waits for another thread's close of the same scope returns once the scope has
  /// let go of its cache, not merely once it is marked closed.
  @Test func aWaitingCloseReturnsAfterTheCacheIsReleased() throws {
    final class SlowToFree: Sendable {
      deinit { usleep(30_000) }
    }
    for _ in 0..<5 {
      let container = Container()
      let session = try container.makeScope(.session) { registry in
        registry.register(SlowToFree.self, name: 1, lifetime: .singleton) { _ in SlowToFree() }
        registry.register(SlowToFree.self, name: 2, lifetime: .singleton) { _ in SlowToFree() }
      }
      weak var first: SlowToFree?
      weak var second: SlowToFree?
      do {
        first = try session.resolve(SlowToFree.self, name: 1)
        second = try session.resolve(SlowToFree.self, name: 2)
      }
      let started = DispatchSemaphore(value: 0)
      let done = DispatchSemaphore(value: 0)
      Thread {
        started.signal()
        try? session.close()
        done.signal()
      }.start()
      started.wait()
      usleep(5_000)
      try session.close()
      #expect(
        first == nil && second == nil, "the waiting close returned while the scope still cached an instance")
      done.wait()
    }
  }

  @Test func anAsynchronousClose() async throws {
    let container = try container(.unchecked(.scoped(.request)))
    let request = try container.makeScope(.request)
    try request.resolve(ClosingToken.self).scope = request
    let closed = CloseFlag()
    Task {
      try await request.close()
      closed.set()
    }
    var waited = 0
    while !closed.isSet, waited < 10_000 {
      try await Task.sleep(for: .milliseconds(1))
      waited += 1
    }
    #expect(closed.isSet, "the close waited for itself")
  }
}

private final class CloseFlag: @unchecked Sendable {
  private let lock = NSLock()
  private var value = false
  var isSet: Bool { lock.withLock { value } }
  func set() { lock.withLock { value = true } }
}
