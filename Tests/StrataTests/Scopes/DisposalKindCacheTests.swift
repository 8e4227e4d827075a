import Strata
import Testing

/// Strata remembers, per instance type, which disposal protocol it conforms to (a failing
/// conformance cast is slow). These tests try to make that memory give a wrong answer: types of
/// one family side by side, subclasses that add a conformance, and the same types across many
/// containers and threads.
@Suite struct DisposalKindCacheTests {
  @Test func aSubclassThatAddsDisposableIsDisposedWhileItsPlainBaseIsNot() throws {
    let disposed = Counter()
    for round in 0..<50 {
      let container = try Container { registry in
        // The same service type; the instance's own type decides.
        registry.register(CacheProbeBase.self, name: Ordinal.first, lifetime: .scoped(.request)) { _ in
          CacheProbeBase()
        }
        registry.register(CacheProbeBase.self, name: Ordinal.second, lifetime: .scoped(.request)) { _ in
          DisposableSubclass(counter: disposed)
        }
      }
      let request = try container.makeScope(.request)
      // Alternate which type is made first, so neither always fills the memory first.
      if round.isMultiple(of: 2) {
        _ = try request.resolve(CacheProbeBase.self, name: Ordinal.first)
        _ = try request.resolve(CacheProbeBase.self, name: Ordinal.second)
      } else {
        _ = try request.resolve(CacheProbeBase.self, name: Ordinal.second)
        _ = try request.resolve(CacheProbeBase.self, name: Ordinal.first)
      }
      try request.close()
      #expect(disposed.value == round + 1, "round \(round)")
    }
  }

  @Test func syncAndAsyncDisposablesKeepTheirKindAcrossContainers() async throws {
    let sync = Counter()
    let async = Counter()
    for _ in 0..<20 {
      let container = try Container { registry in
        registry.register(CacheProbeSync.self, lifetime: .singleton) { _ in CacheProbeSync(counter: sync) }
        registry.register(CacheProbeAsync.self, lifetime: .singleton) { _ in CacheProbeAsync(counter: async) }
        registry.register(CacheProbeBase.self, lifetime: .singleton) { _ in CacheProbeBase() }
      }
      _ = try container.resolve(CacheProbeSync.self)
      _ = try container.resolve(CacheProbeAsync.self)
      _ = try container.resolve(CacheProbeBase.self)
      try await container.close()
    }
    #expect(sync.value == 20)
    #expect(async.value == 20)
  }

  @Test func manyThreadsMakingDisposableAndPlainInstancesDisposeExactlyTheDisposableOnes() async throws {
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(CacheProbeBase.self, lifetime: .scoped(.request)) { _ in CacheProbeBase() }
      registry.register(CacheProbeSync.self, lifetime: .scoped(.request)) { _ in
        CacheProbeSync(counter: disposed)
      }
    }
    let rounds = 200
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask {
          for _ in 0..<rounds {
            let request = try container.makeScope(.request)
            _ = try request.resolve(CacheProbeBase.self)
            _ = try request.resolve(CacheProbeSync.self)
            try await request.close()
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(disposed.value == 4 * rounds)
  }

  /// A registration remembers the kind of the last instance type it made: one registration whose
  /// instances are by turns a plain base, a `Disposable` subclass and an `AsyncDisposable`
  /// subclass, made by four tasks at once, must dispose each instance by its own type's kind.
  @Test func oneRegistrationMakingPlainSyncAndAsyncSubclassesByTurnsDisposesEachByItsOwnKind() async throws {
    let made = Counter()
    let sync = Counter()
    let async = Counter()
    let container = try Container { registry in
      registry.register(CacheProbeBase.self, lifetime: .scoped(.request)) { _ in
        switch made.increment() % 3 {
        case 0: CacheProbeBase()
        case 1: DisposableSubclass(counter: sync)
        default: AsyncDisposableSubclass(counter: async)
        }
      }
    }
    let rounds = 300
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask {
          for _ in 0..<rounds {
            let request = try container.makeScope(.request)
            _ = try request.resolve(CacheProbeBase.self)
            try await request.close()
          }
        }
      }
      try await group.waitForAll()
    }
    let total = 4 * rounds
    #expect(made.value == total)
    #expect(sync.value == (1...total).count { $0 % 3 == 1 })
    #expect(async.value == (1...total).count { $0 % 3 == 2 })
  }
}

class CacheProbeBase: @unchecked Sendable {
  init() {}
}

private final class DisposableSubclass: CacheProbeBase, Disposable, @unchecked Sendable {
  let counter: Counter
  init(counter: Counter) {
    self.counter = counter
    super.init()
  }
  func dispose() { counter.increment() }
}

private final class CacheProbeSync: Disposable, Sendable {
  let counter: Counter
  init(counter: Counter) { self.counter = counter }
  func dispose() { counter.increment() }
}

private final class CacheProbeAsync: AsyncDisposable, Sendable {
  let counter: Counter
  init(counter: Counter) { self.counter = counter }
  func dispose() async { counter.increment() }
}

private final class AsyncDisposableSubclass: CacheProbeBase, AsyncDisposable, @unchecked Sendable {
  let counter: Counter
  init(counter: Counter) {
    self.counter = counter
    super.init()
  }
  func dispose() async { counter.increment() }
}
