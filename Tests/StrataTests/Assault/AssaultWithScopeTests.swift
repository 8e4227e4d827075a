import Strata
import Testing

/// `withScope` closes its scope when the body ends, whatever ends it: the caller's cancellation
/// (before the body, during it, during the close) cuts no disposer short and is not seen by any;
/// nested scopes close innermost first and hand back the body's error with the disposers'; the
/// body's child tasks see the scope as current, and a task that outlives it gets typed errors.
@Suite struct AssaultWithScopeTests {
  // MARK: - Cancellation

  /// `withScope` in a task cancelled before it starts: the body runs, and the synchronous and
  /// the sleeping asynchronous disposer both run to their end, once, newest first, neither seeing
  /// the cancellation.
  @Test func withScopeInATaskCancelledBeforeItStartsStillDisposesUncancelled() async throws {
    let log = Collector<String>()
    let completed = Flag()
    let container = try Container { registry in
      registry.register(RecordingDisposer.self, lifetime: .scoped(.request)) { _ in
        RecordingDisposer("sync", log: log)
      }
      registry.register(RecordingAsyncDisposer.self, lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("async", log: log) {
          try await Task.sleep(for: .milliseconds(5))
          completed.raise()
        }
      }
    }
    let gate = OneShotGate()
    let probes = Slot<(RecordingDisposer, RecordingAsyncDisposer)>()
    let task = Task {
      await gate.wait()
      try await container.withScope(.request) { scope in
        probes.value = (
          try scope.resolve(RecordingDisposer.self), try scope.resolve(RecordingAsyncDisposer.self)
        )
      }
    }
    task.cancel()
    gate.open()
    try await task.value
    let (sync, async) = try #require(probes.value)
    #expect(completed.isRaised, "the asynchronous disposer was cut short by the caller's cancellation")
    #expect(sync.disposeCount == 1 && async.disposeCount == 1)
    #expect(!sync.sawCancelled && !async.sawCancelled)
    #expect(log.elements == ["async", "sync"])
  }

  /// `withScope` with only synchronous disposers in a task cancelled before it starts: each
  /// disposer runs once, newest first, and none sees the cancellation.
  @Test func withScopeWithOnlySynchronousDisposersInACancelledTaskHidesTheCancellation() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(RecordingDisposer.self, name: 1, lifetime: .scoped(.request)) { _ in
        RecordingDisposer("one", log: log)
      }
      registry.register(RecordingDisposer.self, name: 2, lifetime: .scoped(.request)) { _ in
        RecordingDisposer("two", log: log)
      }
    }
    let gate = OneShotGate()
    let probes = Collector<RecordingDisposer>()
    let task = Task {
      await gate.wait()
      try await container.withScope(.request) { scope in
        probes.append(try scope.resolve(RecordingDisposer.self, name: 1))
        probes.append(try scope.resolve(RecordingDisposer.self, name: 2))
      }
    }
    task.cancel()
    gate.open()
    try await task.value
    #expect(probes.elements.map(\.disposeCount) == [1, 1])
    #expect(
      probes.elements.allSatisfy { !$0.sawCancelled }, "a cancelled caller's disposers saw its cancellation")
    #expect(log.elements == ["two", "one"])
  }

  /// A task cancelled while the body runs: the body's `CancellationError` reaches the caller,
  /// and the sleeping asynchronous disposer runs to its end, once, without seeing the
  /// cancellation.
  @Test func cancellingDuringTheBodyStillClosesUncancelled() async throws {
    let log = Collector<String>()
    let completed = Flag()
    let container = try Container { registry in
      registry.register(RecordingAsyncDisposer.self, lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("async", log: log) {
          try await Task.sleep(for: .milliseconds(5))
          completed.raise()
        }
      }
    }
    let inBody = OneShotGate()
    let resume = OneShotGate()
    let probe = Slot<RecordingAsyncDisposer>()
    let task = Task {
      try await container.withScope(.request) { scope in
        probe.value = try scope.resolve(RecordingAsyncDisposer.self)
        inBody.open()
        await resume.wait()
        try Task.checkCancellation()
      }
    }
    await inBody.wait()
    task.cancel()
    resume.open()
    let result = await task.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(completed.isRaised)
    #expect(probe.value?.disposeCount == 1)
    #expect(probe.value?.sawCancelled == false)
  }

  /// A task cancelled while its scope's newest disposer is held: the older asynchronous and
  /// synchronous disposers still run to their end, in order, without seeing the cancellation.
  /// 5 rounds.
  @Test func cancellingDuringTheCloseCutsNoDisposerShort() async throws {
    for round in 0..<5 {
      let log = Collector<String>()
      let started = OneShotGate()
      let release = OneShotGate()
      let olderCompleted = Flag()
      let container = try Container { registry in
        registry.register(RecordingDisposer.self, lifetime: .scoped(.request)) { _ in
          RecordingDisposer("sync-old", log: log)
        }
        registry.register(RecordingAsyncDisposer.self, name: "older", lifetime: .scoped(.request)) { _ in
          RecordingAsyncDisposer("older", log: log) {
            try await Task.sleep(for: .milliseconds(5))
            olderCompleted.raise()
          }
        }
        registry.register(RecordingAsyncDisposer.self, name: "newer", lifetime: .scoped(.request)) { _ in
          RecordingAsyncDisposer("newer", log: log) {
            started.open()
            await release.wait()
          }
        }
      }
      let probes = Slot<(RecordingDisposer, RecordingAsyncDisposer, RecordingAsyncDisposer)>()
      let task = Task {
        try await container.withScope(.request) { scope in
          probes.value = (
            try scope.resolve(RecordingDisposer.self),
            try scope.resolve(RecordingAsyncDisposer.self, name: "older"),
            try scope.resolve(RecordingAsyncDisposer.self, name: "newer")
          )
        }
      }
      await started.wait()
      task.cancel()
      release.open()
      try await task.value
      #expect(olderCompleted.isRaised, "round \(round)")
      #expect(log.elements == ["newer", "older", "sync-old"], "round \(round)")
      let (sync, older, _) = try #require(probes.value)
      #expect(!sync.sawCancelled, "round \(round)")
      #expect(!older.sawCancelled, "round \(round)")
    }
  }

  // MARK: - Nested scopes

  /// A body error thrown in a request nested (by the free `withScope`) in a session, whose
  /// disposer throws too: one `ScopeExitError` carries both, and both scopes are disposed,
  /// innermost first.
  @Test func aBodyErrorAndDisposerErrorsTravelTogetherThroughNestedFreeWithScopes() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(RecordingDisposer.self, lifetime: .scoped(.session)) { _ in
        RecordingDisposer("session", log: log)
      }
      registry.register(RecordingAsyncDisposer.self, lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("request", log: log) { throw DisposalFailure(label: "request") }
      }
    }
    do {
      try await container.withScope(.session) { session in
        _ = try session.resolve(RecordingDisposer.self)
        try await withScope(.request) { request in
          #expect(Scope.current === request)
          #expect(request.parent === session)
          _ = try request.resolve(RecordingAsyncDisposer.self)
          throw CancellationError()
        }
      }
      Issue.record("nothing was thrown")
    } catch let error as ScopeExitError {
      #expect(error.bodyError is CancellationError)
      let failures = underlyingErrors(error.disposalErrors).compactMap { $0 as? DisposalFailure }
      #expect(failures == [DisposalFailure(label: "request")])
    }
    #expect(log.elements == ["request", "session"])
  }

  /// Three nested `withScope`s (session, request, a custom tag) whose innermost body throws:
  /// the error reaches the caller unchanged, and the scopes close innermost first.
  @Test func nestedWithScopesCloseInnermostFirstAndPassTheBodyErrorUnchanged() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(RecordingAsyncDisposer.self, lifetime: .scoped(.session)) { _ in
        RecordingAsyncDisposer("session", log: log)
      }
      registry.register(RecordingDisposer.self, lifetime: .scoped(.request)) { _ in
        RecordingDisposer("request", log: log)
      }
      registry.register(RecordingAsyncDisposer.self, name: "tenant", lifetime: .scoped(.customTenant)) { _ in
        RecordingAsyncDisposer("tenant", log: log)
      }
    }
    await #expect(throws: FixtureError(code: 1)) {
      try await container.withScope(.session) { session in
        _ = try session.resolve(RecordingAsyncDisposer.self)
        try await withScope(.request) { request in
          _ = try request.resolve(RecordingDisposer.self)
          try await withScope(.customTenant) { tenant in
            _ = try tenant.resolve(RecordingAsyncDisposer.self, name: "tenant")
            throw FixtureError(code: 1)
          }
        }
      }
    }
    #expect(log.elements == ["tenant", "request", "session"])
  }

  // MARK: - The ambient scope

  /// An `async let` and eight group tasks in the body see its scope as `Scope.current`; a task
  /// made in the body and run after it sees the scope closed, and resolving, making a child and
  /// the free `withScope` from it all fail with `scopeClosed`.
  @Test func childTasksSeeTheScopeAndATaskOutlivingTheBodyGetsTypedErrors() async throws {
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 0) }
    }
    let gate = OneShotGate()
    let escaped = Slot<Task<(isClosed: Bool?, outcomes: [Outcome]), Never>>()
    let seen = try await container.withScope(.request) { scope -> [Bool] in
      async let fromAsyncLet = Scope.current === scope
      let fromGroup = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<8 { group.addTask { Scope.current === scope } }
        var all: [Bool] = []
        for await seen in group { all.append(seen) }
        return all
      }
      escaped.value = Task {
        await gate.wait()
        guard let current = Scope.current else { return (nil, []) }
        let isClosed = current.isClosed
        var outcomes = [
          Outcome(discarding: { try current.resolve(Widget.self) }),
          Outcome(discarding: { try current.makeScope(.request) }),
        ]
        do {
          try await withScope(.request) { _ in }
          outcomes.append(.otherError("the body ran"))
        } catch let error as ResolutionError {
          outcomes.append(.failure(error.code))
        } catch {
          outcomes.append(.otherError("\(error)"))
        }
        return (isClosed, outcomes)
      }
      return [await fromAsyncLet] + fromGroup
    }
    #expect(seen == Array(repeating: true, count: 9))
    gate.open()
    let escapedTask = try #require(escaped.value)
    let (isClosed, outcomes) = await escapedTask.value
    #expect(isClosed == true)
    #expect(outcomes == Array(repeating: .failure(.scopeClosed), count: 3))
  }
}
