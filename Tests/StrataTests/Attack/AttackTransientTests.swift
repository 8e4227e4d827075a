import Strata
import Testing

/// A transient's factory that closes, registers into or recurses through the scope it runs in gets
/// a typed error or a working resolve, and leaves nothing undisposed: the inline top-level
/// transient path (c0c0a36) and the nested closed-scope paths.
@Suite struct AttackTransientTests {
  /// Thrown by a factory if the scope it expects is gone.
  struct MissingScope: Error {}

  /// A container transient, resolved from a request with an argument, closes the request (the
  /// scope it was resolved from, not its registration's owner), then resolves a disposable
  /// `scoped(.request)` service, named or not: `scopeClosed`, and nothing made is left undisposed
  /// (the request owns what it makes).
  @Test(arguments: [false, true])
  func aScopedResolveAfterATransientClosedItsRequestIsScopeClosed(named: Bool) throws {
    let made = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        made.increment()
        return TrackedResource("plain", disposed: disposed)
      }
      registry.register(TrackedResource.self, name: "n", lifetime: .scoped(.request)) { _ in
        made.increment()
        return TrackedResource("named", disposed: disposed)
      }
      registry.register(Probe.self) { (resolver, named: Bool) in
        try resolver.currentScope.close()
        return Probe(
          outcome: Outcome {
            named
              ? try resolver.resolve(TrackedResource.self, name: "n")
              : try resolver.resolve(TrackedResource.self)
          })
      }
    }
    let request = try container.makeScope(.request)

    let probe = try request.resolve(Probe.self, arguments: named)

    #expect(request.isClosed)
    #expect(probe.outcome == .failure(.scopeClosed), "\(probe.outcome)")
    #expect(made.value == disposed.value, "made \(made.value), disposed \(disposed.value): leaked")
    try container.close()
  }

  /// A transient whose factory closes the container it is resolved from, then resolves a
  /// disposable singleton of that container that was never made: `scopeClosed`, and nothing made
  /// is left undisposed. The transient is resolved by each route: 0 plain, 1 named, 2 with an
  /// argument, 3 named with an argument; after the close, every route is `scopeClosed`.
  @Test(arguments: 0..<4)
  func aSingletonResolveAfterATransientClosedTheContainerIsScopeClosed(route: Int) throws {
    let made = Counter()
    let disposed = Counter()
    let inner = Collector<Outcome>()
    let closeAndResolve: @Sendable (borrowing Resolver) throws -> Probe = { resolver in
      try resolver.currentScope.close()
      let outcome = Outcome { try resolver.resolve(TrackedResource.self) }
      inner.append(outcome)
      return Probe(outcome: outcome)
    }
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { _ in
        made.increment()
        return TrackedResource("singleton", disposed: disposed)
      }
      registry.register(Probe.self) { resolver in try closeAndResolve(resolver) }
      registry.register(Probe.self, name: "n") { resolver in try closeAndResolve(resolver) }
      registry.register(Probe.self) { (resolver, _: Int) in try closeAndResolve(resolver) }
      registry.register(Probe.self, name: "n") { (resolver, _: Int) in try closeAndResolve(resolver) }
    }
    let resolveProbe: (Int) throws -> Probe = { route in
      switch route {
      case 1: try container.resolve(Probe.self, name: "n")
      case 2: try container.resolve(Probe.self, arguments: 1)
      case 3: try container.resolve(Probe.self, name: "n", arguments: 1)
      default: try container.resolve(Probe.self)
      }
    }

    let outer = Outcome(discarding: { try resolveProbe(route) })

    #expect(outer.isSuccess || outer == .failure(.scopeClosed), "\(outer)")
    #expect(inner.elements == [.failure(.scopeClosed)], "\(inner.elements)")
    #expect(made.value == disposed.value, "made \(made.value), disposed \(disposed.value): leaked")
    for route in 0..<4 {
      #expect(resolutionError { _ = try resolveProbe(route) }?.code == .scopeClosed, "route \(route)")
    }
  }

  /// A transient's factory that closes its scope, then resolves from that scope at top level,
  /// through its resolver's `currentScope` and through the captured container: `scopeClosed`.
  @Test func aTopLevelResolveFromInsideAFactoryOfTheScopeItClosedIsScopeClosed() throws {
    let outcomes = Collector<Outcome>()
    let captured = Slot<WeakBox<Scope>>()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Probe.self) { resolver in
        let scope = resolver.currentScope
        try scope.close()
        let throughScope = Outcome { try scope.resolve(Widget.self) }
        let throughContainer = Outcome {
          guard let container = captured.value?.object else { throw MissingScope() }
          return try container.resolve(Widget.self)
        }
        outcomes.append(throughScope)
        outcomes.append(throughContainer)
        return Probe(outcome: throughScope)
      }
    }
    captured.value = WeakBox(container)

    _ = Outcome(discarding: { try container.resolve(Probe.self) })

    #expect(outcomes.elements == [.failure(.scopeClosed), .failure(.scopeClosed)], "\(outcomes.elements)")
  }

  /// A throwing transient, plain and with an argument: the caller gets a `factoryFailed`
  /// `ResolutionError` wrapping the factory's error, and the next resolve works (the failed run
  /// left nothing behind). 100 rounds of each.
  @Test func aThrowingTransientWrapsItsErrorAndLeavesTheNextResolveWorking() throws {
    let calls = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in
        if calls.increment() % 2 == 1 { throw FixtureError(code: 7) }
        return Widget(id: 2)
      }
      registry.register(Widget.self) { (_, argument: Int) in
        if calls.increment() % 2 == 1 { throw FixtureError(code: argument) }
        return Widget(id: argument)
      }
    }
    for _ in 0..<100 {
      let error = resolutionError { _ = try container.resolve(Widget.self) }
      #expect(error?.code == .factoryFailed)
      #expect(error?.underlying as? FixtureError == FixtureError(code: 7))
      #expect(try container.resolve(Widget.self).id == 2)
    }
    for argument in 0..<100 {
      let error = resolutionError { _ = try container.resolve(Widget.self, arguments: argument) }
      #expect(error?.code == .factoryFailed)
      #expect(error?.underlying as? FixtureError == FixtureError(code: argument))
      #expect(try container.resolve(Widget.self, arguments: argument).id == argument)
    }
    try container.close()
  }

  /// Transients resolved by all four routes from a request on one thread while another closes it;
  /// 500 rounds. Every resolve succeeds or is `scopeClosed`, and none that started after the close
  /// returned succeeds.
  @Test func transientsRacingTheirScopesCloseSucceedOrAreScopeClosed() async throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: "n") { _ in Widget(id: 2) }
      registry.register(Widget.self) { (_, argument: Int) in Widget(id: argument) }
      registry.register(Widget.self, name: "n") { (_, argument: Int) in Widget(id: argument) }
    }
    let problems = Collector<String>()
    for round in 0..<500 {
      let request = try container.makeScope(.request)
      let start = Barrier(parties: 2)
      let closed = Flag()
      let finished = await runOnThreads(2) { index in
        start.arriveAndWait()
        if index == 0 {
          try? request.close()
          closed.raise()
          return
        }
        for step in 0..<50 {
          let closeHadReturned = closed.isRaised
          let outcome = Outcome {
            switch step % 4 {
            case 1: try request.resolve(Widget.self, name: "n")
            case 2: try request.resolve(Widget.self, arguments: step)
            case 3: try request.resolve(Widget.self, name: "n", arguments: step)
            default: try request.resolve(Widget.self)
            }
          }
          if !outcome.isSuccess && outcome != .failure(.scopeClosed) { problems.append("\(outcome)") }
          if closeHadReturned && outcome.isSuccess {
            problems.append("route \(step % 4) resolved after the close returned")
          }
        }
      }
      #expect(finished, "deadlock in round \(round)")
    }
    #expect(problems.elements.isEmpty, "\(Set(problems.elements))")
    try closeSynchronously(container)
  }

  /// A transient's factory that registers a new service into its own scope can resolve it at
  /// once, through its resolver and through the scope; a later top-level resolve sees it too.
  @Test func aTransientsRegistrationIntoItsScopeIsResolvableAtOnce() throws {
    final class Late: Sendable {}
    let inner = Collector<Outcome>()
    let container = try Container { registry in
      registry.register(Probe.self) { resolver in
        try resolver.currentScope.register { registry in
          registry.register(Late.self) { _ in Late() }
        }
        let throughResolver = Outcome { try resolver.resolve(Late.self) }
        inner.append(throughResolver)
        inner.append(Outcome { try resolver.currentScope.resolve(Late.self) })
        return Probe(outcome: throughResolver)
      }
    }
    let request = try container.makeScope(.request)

    _ = try request.resolve(Probe.self)

    #expect(inner.elements.count == 2 && inner.elements.allSatisfy(\.isSuccess), "\(inner.elements)")
    #expect(Outcome { try request.resolve(Late.self) }.isSuccess)
    try request.close()
    try container.close()
  }

  /// A transient chain 10,000 deep through its resolver, with a counter argument: a typed error,
  /// not a stack overflow, on the test's stack and on small thread stacks; a 20-deep chain
  /// resolves (no false cycle).
  @Test(arguments: [0, 512 * 1024, 256 * 1024, 128 * 1024, 64 * 1024])
  func aTenThousandDeepTransientChainIsATypedErrorOnAnyStack(stackSize: Int) async throws {
    final class Node: Sendable {
      let child: Node?
      init(child: Node?) { self.child = child }
    }
    let container = try Container { registry in
      registry.register(Node.self) { (resolver, depth: Int) in
        Node(child: depth == 0 ? nil : try resolver.resolve(Node.self, arguments: depth - 1))
      }
    }
    let body: @Sendable () -> Outcome = {
      Outcome { try container.resolve(Node.self, arguments: 10_000) }
    }

    let outcome: Outcome?
    if stackSize == 0 {
      outcome = body()
    } else {
      outcome = await onThread(stackSize: stackSize, body)
    }

    #expect(
      outcome?.code == .depthLimitExceeded || outcome?.code == .cycle,
      "\(outcome.map { "\($0)" } ?? "hung")")
    #expect(Outcome { try container.resolve(Node.self, arguments: 20) }.isSuccess)
  }

  /// The same 10,000-deep recursion, each level a top-level resolve from inside the factory:
  /// through the captured container, or through `Scope.current`. A typed error on 512 KiB and
  /// 128 KiB stacks; a 10-deep recursion resolves.
  @Test(arguments: [false, true])
  func aTenThousandDeepChainOfTopLevelResolvesIsATypedError(throughCurrentScope: Bool) async throws {
    final class Node: Sendable {
      let child: Node?
      init(child: Node?) { self.child = child }
    }
    let container = Container()
    // Weak: a strong capture would be a reference cycle of the test's own.
    let weakContainer = WeakBox(container)
    try container.register { registry in
      registry.register(Node.self) { (_, depth: Int) in
        guard depth > 0 else { return Node(child: nil) }
        let scope: Scope? = throughCurrentScope ? Scope.current : weakContainer.object
        guard let scope else { throw MissingScope() }
        return Node(child: try scope.resolve(Node.self, arguments: depth - 1))
      }
    }
    for stackSize in [512 * 1024, 128 * 1024] {
      let outcome = await onThread(stackSize: stackSize) {
        Outcome { try container.withScope(.request) { try $0.resolve(Node.self, arguments: 10_000) } }
      }
      #expect(
        outcome?.code == .depthLimitExceeded || outcome?.code == .cycle,
        "\(outcome.map { "\($0)" } ?? "hung") at \(stackSize)")
    }
    let short = await onThread(stackSize: 512 * 1024) {
      Outcome { try container.withScope(.request) { try $0.resolve(Node.self, arguments: 10) } }
    }
    #expect(short?.isSuccess == true, "a 10-deep acyclic recursion: \(short.map { "\($0)" } ?? "hung")")
    try await container.close()
  }

  /// An unnamed transient resolving itself through its resolver (no argument: a real infinite
  /// cycle) is a typed error on a 256 KiB stack, not a stack overflow.
  @Test func aTransientResolvingItselfIsATypedErrorNotAStackOverflow() async throws {
    final class Loop: Sendable {
      init(_: Loop?) {}
    }
    let container = try Container { registry in
      registry.register(Loop.self) { resolver in Loop(try resolver.resolve(Loop.self)) }
    }

    let outcome = await onThread(stackSize: 256 * 1024) {
      Outcome { try container.resolve(Loop.self) }
    }

    #expect(
      outcome?.code == .depthLimitExceeded || outcome?.code == .cycle,
      "\(outcome.map { "\($0)" } ?? "hung")")
  }

  /// A disposable transient whose activation hook throws: the caller gets `activationFailed`
  /// wrapping the hook's error, and each instance made is disposed exactly once.
  @Test func aDisposableTransientWhoseActivationHookThrowsIsDisposedOnce() throws {
    let made = Collector<TrackedResource>()
    let container = try Container { registry in
      registry.register(TrackedResource.self) { _ in
        let resource = TrackedResource("transient")
        made.append(resource)
        return resource
      }
      .onActivated { _, _ in throw FixtureError(code: 3) }
    }
    for _ in 0..<10 {
      let error = resolutionError { _ = try container.resolve(TrackedResource.self) }
      #expect(error?.code == .activationFailed)
      #expect(error?.underlying as? FixtureError == FixtureError(code: 3))
    }
    #expect(made.elements.count == 10)
    #expect(made.elements.allSatisfy { $0.disposeCount == 1 }, "\(made.elements.map(\.disposeCount))")
    try container.close()
  }
}
