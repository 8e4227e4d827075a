import Strata
import Testing

/// The error a `withScope` body throws in these tests.
private struct AmbientTestBodyFailure: Error, Equatable {}

/// `Scope.current`, `withScope` (methods and free functions) and their clean-up.
@Suite struct AmbientScopeTests {
  private static func makeContainer(log: Collector<String>) throws -> Container {
    try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("request", log: log)
      }
      registry.register(AsyncTrackedResource.self, lifetime: .scoped(.request)) { _ in
        AsyncTrackedResource("request", log: log)
      }
    }
  }

  // MARK: Scope.current

  @Test func thereIsNoCurrentScopeOutsideWithScope() async throws {
    #expect(Scope.current == nil)
    let container = Container()
    _ = try container.makeScope(.request)
    #expect(Scope.current == nil, "making a scope does not make it current")
  }

  // MARK: Scope.withScope, synchronous

  @Test func withScopeMakesACurrentChildScopeAndClosesItOnReturn() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let seen = Slot<Scope>()

    let result = try container.withScope(.request, name: "r1") { scope in
      seen.value = scope
      #expect(Scope.current === scope)
      #expect(scope.tag == .request)
      #expect(scope.name == "r1")
      #expect(scope.parent === container)
      #expect(!scope.isClosed)
      return try scope.resolve(TrackedResource.self).label + "!"
    }

    #expect(result == "request!")
    let scope = try #require(seen.value)
    #expect(scope.isClosed)
    #expect(log.elements == ["dispose request"])
    #expect(Scope.current == nil)
  }

  @Test func withScopeClosesTheScopeWhenTheBodyThrows() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let seen = Slot<Scope>()

    #expect(throws: AmbientTestBodyFailure.self) {
      try container.withScope(.request) { scope in
        seen.value = scope
        _ = try scope.resolve(TrackedResource.self)
        throw AmbientTestBodyFailure()
      }
    }

    #expect(seen.value?.isClosed == true)
    #expect(log.elements == ["dispose request"])
    #expect(Scope.current == nil)
  }

  @Test func theBodysErrorTravelsWithTheDisposalErrorItCaused() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("failing", fails: true)
      }
    }
    let resource = Slot<TrackedResource>()

    let error = try #require(throws: ScopeExitError.self) {
      try container.withScope(.request) { scope in
        resource.value = try scope.resolve(TrackedResource.self)
        throw AmbientTestBodyFailure()
      }
    }
    #expect(error.bodyError is AmbientTestBodyFailure)
    #expect(error.disposalErrors.count == 1)
    #expect(resource.value?.disposeCount == 1)
  }

  @Test func aDisposalErrorAfterANormalReturnIsThrown() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("failing", fails: true)
      }
    }

    let error = resolutionError {
      _ = try container.withScope(.request) { scope in try scope.resolve(TrackedResource.self) }
    }

    #expect(error?.code == .disposalFailed)
  }

  @Test func nestedWithScopesRestoreTheOuterCurrentScope() throws {
    let container = Container()

    try container.withScope(.session) { session in
      try session.withScope(.request) { request in
        #expect(Scope.current === request)
        #expect(request.parent === session)
      }
      #expect(Scope.current === session)
    }
    #expect(Scope.current == nil)
  }

  @Test func withScopeOnAClosedScopeIsScopeClosedAndDoesNotRunTheBody() throws {
    let container = Container()
    try container.close()
    let runs = Counter()

    let error = resolutionError { _ = try container.withScope(.request) { _ in runs.increment() } }

    #expect(error?.code == .scopeClosed)
    #expect(runs.value == 0)
  }

  // MARK: Scope.withScope, asynchronous

  @Test func asyncWithScopeMakesACurrentScopeAndClosesItAwaitingAsyncDisposers() async throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let seen = Slot<Scope>()

    let pool = try await container.withScope(.request) { scope in
      seen.value = scope
      #expect(Scope.current === scope)
      await Task.yield()
      #expect(Scope.current === scope)
      _ = try scope.resolve(TrackedResource.self)
      return try scope.resolve(AsyncTrackedResource.self)
    }

    #expect(seen.value?.isClosed == true)
    #expect(pool.disposeCount == 1, "the async close awaited the asynchronous disposer")
    #expect(log.elements == ["async dispose request", "dispose request"])
    #expect(Scope.current == nil)
  }

  @Test func asyncWithScopeClosesTheScopeWhenTheBodyThrows() async throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let seen = Slot<Scope>()

    await #expect(throws: AmbientTestBodyFailure.self) {
      try await container.withScope(.request) { scope in
        seen.value = scope
        _ = try scope.resolve(AsyncTrackedResource.self)
        await Task.yield()
        throw AmbientTestBodyFailure()
      }
    }

    #expect(seen.value?.isClosed == true)
    #expect(log.elements == ["async dispose request"])
  }

  @Test(.timeLimit(.minutes(1)))
  func asyncWithScopeClosesTheScopeWhenItsTaskIsCancelled() async throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let (entered, continuation) = AsyncStream<Scope>.makeStream()

    let task = Task {
      try await container.withScope(.request) { scope in
        _ = try scope.resolve(TrackedResource.self)
        continuation.yield(scope)
        try await Task.sleep(for: .seconds(60))
      }
    }
    var iterator = entered.makeAsyncIterator()
    let scope = try #require(await iterator.next())
    #expect(!scope.isClosed)

    task.cancel()
    let result = await task.result

    #expect(throws: CancellationError.self) { try result.get() }
    #expect(scope.isClosed)
    #expect(log.elements == ["dispose request"])
  }

  @Test func childTasksInheritTheCurrentScope() async throws {
    let container = Container()

    try await container.withScope(.request) { scope in
      async let fromAsyncLet = Scope.current
      let inherited = await fromAsyncLet
      #expect(inherited === scope)

      let fromGroup = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<8 {
          group.addTask { Scope.current === scope }
        }
        var all: [Bool] = []
        for await sameScope in group { all.append(sameScope) }
        return all
      }
      #expect(fromGroup == Array(repeating: true, count: 8))

      let fromTask = await Task { Scope.current }.value
      #expect(fromTask === scope)
      let fromDetached = await Task.detached { Scope.current }.value
      #expect(fromDetached == nil, "a detached task inherits no task-local values")
    }
  }

  // MARK: Free withScope

  @Test func theFreeWithScopeMakesAChildOfTheCurrentScope() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let inner = Slot<Scope>()

    try container.withScope(.session, name: "s1") { session in
      let label = try withScope(.request, name: "r1") { request in
        inner.value = request
        #expect(request.parent === session)
        #expect(request.tag == .request)
        #expect(Scope.current === request)
        return try request.resolve(TrackedResource.self).label
      }
      #expect(label == "request")
      #expect(inner.value?.isClosed == true)
      #expect(log.elements == ["dispose request"])
      #expect(Scope.current === session)
      #expect(!session.isClosed)
    }
    #expect(Scope.current == nil)
  }

  @Test func theAsyncFreeWithScopeMakesAChildOfTheCurrentScope() async throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)

    let pool = try await container.withScope(.session) { session in
      try await withScope(.request) { request in
        #expect(request.parent === session)
        #expect(Scope.current === request)
        await Task.yield()
        return try request.resolve(AsyncTrackedResource.self)
      }
    }

    #expect(pool.disposeCount == 1)
    #expect(log.elements == ["async dispose request"])
  }

  @Test func theFreeWithScopeThrowsWhenNoScopeIsCurrent() async throws {
    let runs = Counter()

    let syncError = resolutionError { _ = try withScope(.request) { _ in runs.increment() } }
    let asyncError = await asyncResolutionError {
      try await withScope(.request) { _ in
        await Task.yield()
        runs.increment()
      }
    }

    #expect(syncError?.code == .noMatchingScope)
    #expect(syncError?.hint?.contains("no scope is current") == true)
    #expect(asyncError?.code == .noMatchingScope)
    #expect(runs.value == 0)
  }
}
