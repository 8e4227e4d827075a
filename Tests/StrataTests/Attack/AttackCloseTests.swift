import Strata
import Testing

/// Closing a scope disposes each instance it owns exactly once, children first, and returns only
/// when that is done: with disposers that close scopes themselves, closes racing each other,
/// `withScope` exits, failing disposers; and a closed or dropped scope lets go of what it held.
@Suite struct AttackCloseTests {
  /// Disposers that close their own scope, then their parent, then the container: no deadlock,
  /// every instance disposed once, children before parents.
  @Test func disposersClosingTheirOwnAndAncestorScopesDisposeEachOnceInOrder() async throws {
    let log = Collector<String>()
    let sessionBox = Slot<WeakBox<Scope>>()
    let containerBox = Slot<WeakBox<Scope>>()
    let requestBox = Slot<WeakBox<Scope>>()
    let container = try Container { registry in
      registry.register(DisposerHook.self, name: "root", lifetime: .singleton) { _ in
        DisposerHook("root", log: log) { try containerBox.value?.object?.close() }
      }
      registry.register(DisposerHook.self, name: "session", lifetime: .scoped(.session)) { _ in
        DisposerHook("session", log: log) {
          try containerBox.value?.object?.close()
          try sessionBox.value?.object?.close()
        }
      }
      registry.register(DisposerHook.self, name: "request", lifetime: .scoped(.request)) { _ in
        DisposerHook("request", log: log) {
          try requestBox.value?.object?.close()
          try sessionBox.value?.object?.close()
          try containerBox.value?.object?.close()
        }
      }
    }
    containerBox.value = WeakBox(container)
    let session = try container.makeScope(.session)
    sessionBox.value = WeakBox(session)
    let request = try session.makeScope(.request)
    requestBox.value = WeakBox(request)
    _ = try container.resolve(DisposerHook.self, name: "root")
    _ = try session.resolve(DisposerHook.self, name: "session")
    _ = try request.resolve(DisposerHook.self, name: "request")

    let requestClosed = await withDeadline { Outcome(discarding: { try request.close() }) }
    let containerClosed = await withDeadline { Outcome(discarding: { try container.close() }) }

    #expect(requestClosed?.isSuccess == true, "\(requestClosed.map { "\($0)" } ?? "deadlock")")
    #expect(containerClosed?.isSuccess == true, "\(containerClosed.map { "\($0)" } ?? "deadlock")")
    #expect(log.elements == ["dispose request", "dispose session", "dispose root"], "\(log.elements)")
  }

  /// A request's disposer that closes the session while the session's close has begun on another
  /// thread (and waits for this request): no deadlock, the disposer runs once. 50 rounds.
  @Test func aDisposerClosingAParentThatIsClosingElsewhereDoesNotDeadlock() async throws {
    for round in 0..<50 {
      let log = Collector<String>()
      let sessionBox = Slot<WeakBox<Scope>>()
      let disposing = Barrier(parties: 2)
      let container = try Container { registry in
        registry.register(DisposerHook.self, lifetime: .scoped(.request)) { _ in
          DisposerHook("request", log: log) {
            disposing.arriveAndWait()
            // Lets the other thread's close of the session begin.
            pause(microseconds: 2_000)
            try sessionBox.value?.object?.close()
          }
        }
      }
      let session = try container.makeScope(.session)
      sessionBox.value = WeakBox(session)
      let request = try session.makeScope(.request)
      _ = try request.resolve(DisposerHook.self)

      let finished = await runOnThreads(2) { index in
        if index == 0 {
          try? request.close()
        } else {
          disposing.arriveAndWait()
          try? session.close()
        }
      }

      #expect(finished, "deadlock in round \(round)")
      #expect(log.elements == ["dispose request"])
      try closeSynchronously(container)
    }
  }

  /// A second close, on another thread while the first is disposing, returns only once the first
  /// has disposed everything. 20 rounds.
  @Test func aSecondCloseReturnsOnlyOnceTheFirstHasDisposedEverything() async throws {
    for round in 0..<20 {
      let log = Collector<String>()
      let disposing = Barrier(parties: 2)
      let disposed = Flag()
      let container = try Container { registry in
        registry.register(DisposerHook.self, lifetime: .scoped(.request)) { _ in
          DisposerHook("slow", log: log) {
            disposing.arriveAndWait()
            pause(microseconds: 30_000)
            disposed.raise()
          }
        }
      }
      let request = try container.makeScope(.request)
      _ = try request.resolve(DisposerHook.self)
      let early = Flag()

      let finished = await runOnThreads(2) { index in
        if index == 0 {
          try? request.close()
        } else {
          disposing.arriveAndWait()
          try? request.close()
          if !disposed.isRaised { early.raise() }
        }
      }

      #expect(finished, "deadlock in round \(round)")
      #expect(!early.isRaised, "round \(round): the second close returned before the disposal finished")
      #expect(log.elements == ["dispose slow"])
      try closeSynchronously(container)
    }
  }

  /// An awaited close racing a synchronous close on another thread: the awaited one returns only
  /// after every disposer ran, the synchronous one at least after the synchronous disposer ran (it
  /// cannot await the asynchronous one), and each instance is disposed once, even after both
  /// returned. 30 rounds, every other one with an asynchronous disposable too.
  @Test func anAwaitedCloseRacingASynchronousCloseDisposesEachOnce() async throws {
    var rounds: [(log: Collector<String>, expected: Int)] = []
    for round in 0..<30 {
      let log = Collector<String>()
      let container = try Container { registry in
        registry.register(DisposerHook.self, lifetime: .scoped(.request)) { _ in
          DisposerHook("sync", log: log) { pause(microseconds: 5_000) }
        }
        registry.register(SlowAsyncDisposer.self, lifetime: .scoped(.request)) { _ in
          SlowAsyncDisposer("async", log: log)
        }
      }
      let request = try container.makeScope(.request)
      _ = try request.resolve(DisposerHook.self)
      let withAsync = round % 2 == 0
      if withAsync { _ = try request.resolve(SlowAsyncDisposer.self) }
      let expected = withAsync ? 2 : 1
      let seenBySynchronousClose = Slot<Int>()

      async let awaited: Void = { try? await request.close() }()
      let threadFinished = await runOnThreads(1) { _ in
        pause(microseconds: UInt32(round % 3) * 1_000)
        try? closeSynchronously(request)
        seenBySynchronousClose.value = log.elements.count
      }
      await awaited

      #expect(threadFinished, "deadlock in round \(round)")
      #expect(log.elements.count == expected, "round \(round), after the awaited close: \(log.elements)")
      #expect(
        withAsync || (seenBySynchronousClose.value ?? 0) >= 1,
        "round \(round): the synchronous close returned before the synchronous disposer ran")
      try await container.close()
      rounds.append((log, expected))
    }
    // Longer than the asynchronous disposer takes, so that a second disposal begun by either
    // close has logged by now.
    try await Task.sleep(for: SlowAsyncDisposer.duration * 2)
    for (round, (log, expected)) in rounds.enumerated() {
      #expect(log.elements.count == expected, "round \(round), disposed again later: \(log.elements)")
    }
  }

  /// Nested `withScope`: the inner scope is current inside, both close on exit (inner first), and
  /// the current scope is restored.
  @Test func nestedWithScopeSetsTheCurrentScopeAndClosesInnerFirst() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.session)) { _ in
        log.append("make session")
        return TrackedResource("session", log: log)
      }
      registry.register(TrackedResource.self, name: 1, lifetime: .scoped(.request)) { _ in
        log.append("make request")
        return TrackedResource("request", log: log)
      }
    }
    let before = Scope.current
    var innerScope: Scope?
    var outerScope: Scope?

    try container.withScope(.session) { session in
      outerScope = session
      #expect(Scope.current === session)
      _ = try session.resolve(TrackedResource.self)
      try session.withScope(.request) { request in
        innerScope = request
        #expect(Scope.current === request)
        _ = try request.resolve(TrackedResource.self, name: 1)
        _ = try request.resolve(TrackedResource.self)
      }
      #expect(Scope.current === session)
      #expect(innerScope?.isClosed == true)
    }

    #expect(Scope.current === before)
    #expect(outerScope?.isClosed == true)
    #expect(log.elements == ["make session", "make request", "dispose request", "dispose session"])
    try container.close()
  }

  /// A `withScope` body that closes its scope and then throws: the caller gets the body's error
  /// (or a `ScopeExitError` carrying it), and nothing is disposed twice.
  @Test func aWithScopeBodyThatClosesItsScopeAndThrowsDisposesOnce() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        log.append("make r")
        return TrackedResource("r", log: log)
      }
    }

    do {
      try container.withScope(.request) { request in
        _ = try request.resolve(TrackedResource.self)
        try request.close()
        throw FixtureError(code: 1)
      }
      Issue.record("withScope returned, although its body threw")
    } catch {
      #expect(error is FixtureError || error is ScopeExitError, "\(error)")
    }

    #expect(log.elements == ["make r", "dispose r"])
    try container.close()
  }

  /// A scope dropped without a close is freed; so is a container, with its children and its
  /// singletons, `Lazy` and `Provider` holders included.
  @Test func droppedScopesAndTheirContainerAreFreed() throws {
    weak var weakContainer: Container?
    weak var weakSession: Scope?
    weak var weakRequest: Scope?
    weak var weakSingleton: LazyHoldingSingleton?
    do {
      let container = try Container { registry in
        registry.register(Widget.self) { _ in Widget(id: 1) }
        registry.register(LabeledService.self, lifetime: .scoped(.session)) { _ in LabeledService("s") }
        registry.register(Dependency.self, lifetime: .scoped(.request)) { _ in Dependency(origin: "r") }
        registry.register(LazyHoldingSingleton.self, lifetime: .singleton, LazyHoldingSingleton.init)
        registry.register(ProviderHolder.self, lifetime: .scoped(.request), ProviderHolder.init)
      }
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request)
      _ = try request.resolve(Widget.self)
      _ = try request.resolve(Dependency.self)
      _ = try request.resolve(LabeledService.self)
      let holder = try request.resolve(ProviderHolder.self)
      _ = try holder.lazy.value
      _ = try holder.provider()
      let singleton = try request.resolve(LazyHoldingSingleton.self)
      _ = try singleton.neighbour.value
      weakSingleton = singleton
      weakContainer = container
      weakSession = session
      weakRequest = request
    }

    #expect(weakRequest == nil, "request leaked")
    #expect(weakSession == nil, "session leaked")
    #expect(weakContainer == nil, "container leaked")
    #expect(weakSingleton == nil, "singleton leaked")
  }

  /// A closed scope still held releases what it cached: a request's scoped instances (past the
  /// inline slots), a session's singleton.
  @Test func aClosedScopeStillHeldReleasesWhatItCached() throws {
    weak var weakWidget: Widget?
    weak var weakSingleton: LabeledService?
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 1) }
      registry.register(LabeledService.self, lifetime: .singleton) { _ in LabeledService("s") }
    }
    let tenant = try container.makeScope(.session) { registry in
      registry.register(LabeledService.self, lifetime: .singleton) { _ in LabeledService("t") }
    }
    let request = try container.makeScope(.request)
    do {
      for index in 0..<6 {
        try request.register { registry in
          registry.register(Widget.self, name: index, lifetime: .scoped) { _ in Widget(id: index) }
        }
        _ = try request.resolve(Widget.self, name: index)
      }
      weakWidget = try request.resolve(Widget.self)
      weakSingleton = try tenant.resolve(LabeledService.self)
    }

    try request.close()
    #expect(weakWidget == nil, "the closed request kept its scoped instance")
    try tenant.close()
    #expect(weakSingleton == nil, "the closed tenant kept its singleton")

    try container.close()
    withExtendedLifetime((tenant, request, container)) {}
  }

  /// Closing a request with eight disposers, every other one failing: every disposer runs, in
  /// reverse creation order, and the close reports each failure.
  @Test func everyDisposerRunsAndEveryDisposerErrorIsReported() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      for index in 0..<8 {
        registry.register(TrackedResource.self, name: index, lifetime: .scoped(.request)) { _ in
          TrackedResource("\(index)", log: log, fails: index % 2 == 0)
        }
      }
    }
    let request = try container.makeScope(.request)
    for index in 0..<8 { _ = try request.resolve(TrackedResource.self, name: index) }

    let error = resolutionError { try request.close() }

    #expect(error?.code == .disposalFailed)
    let labels = underlyingErrors(error?.disposalErrors ?? []).compactMap { ($0 as? DisposalFailure)?.label }
    #expect(Set(labels) == ["0", "2", "4", "6"], "\(labels)")
    #expect(log.elements == (0..<8).reversed().map { "dispose \($0)" })
    try container.close()
  }
}
