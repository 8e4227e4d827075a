import Foundation
import Strata
import Testing

/// The rules hold on every route: nothing resolves through a closed scope (`resolveAll`,
/// `resolveIfRegistered`, `inject`, `makeScope`, `register` included) or leaves an instance made
/// there undisposed; no longer-lived instance captures a shorter-lived one, whatever lies between;
/// a resolve sees a registration batch whole.
@Suite struct AttackRulesTests {
  /// Thrown by a factory if the scope it expects is gone.
  struct MissingScope: Error {}

  /// Which lifetime the registrations of `aResolveAllAfterAFactoryClosedTheOwnerIsScopeClosed`
  /// have.
  enum SharedOrNot: CaseIterable, Sendable {
    case singleton
    case scoped
    case transient

    var lifetime: Lifetime {
      switch self {
      case .singleton: .singleton
      case .scoped: .scoped(.session)
      case .transient: .transient
      }
    }
  }

  /// A factory's `resolveAll` after it closed the session holding two registrations of a
  /// disposable: for shared lifetimes `scopeClosed`, and nothing made in the closing session is
  /// left undisposed; transients belong to the caller, so they may be made.
  @Test(arguments: SharedOrNot.allCases)
  func aResolveAllAfterAFactoryClosedTheOwnerIsScopeClosed(lifetime: SharedOrNot) throws {
    let made = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(Probe.self) { resolver in
        guard let session = resolver.currentScope.parent else { throw MissingScope() }
        try session.close()
        return Probe(outcome: Outcome(discarding: { try resolver.resolveAll(TrackedResource.self) }))
      }
    }
    let session = try container.makeScope(.session) { registry in
      for label in ["first", "second"] {
        registry.register(TrackedResource.self, lifetime: lifetime.lifetime) { _ in
          made.increment()
          return TrackedResource(label, disposed: disposed)
        }
      }
    }
    let request = try session.makeScope(.request)

    let outcome = try request.resolve(Probe.self).outcome

    #expect(session.isClosed)
    if lifetime == .transient {
      #expect(outcome.isSuccess || outcome == .failure(.scopeClosed), "\(outcome)")
    } else {
      #expect(outcome == .failure(.scopeClosed), "\(outcome)")
      #expect(
        made.value == disposed.value, "made \(made.value) in a closed scope, disposed \(disposed.value)")
    }
    try container.close()
  }

  /// A factory's `resolveIfRegistered`, unnamed and named, after it closed the session holding the
  /// singletons: `scopeClosed`, and nothing left undisposed.
  @Test func aResolveIfRegisteredAfterAFactoryClosedTheOwnerIsScopeClosed() throws {
    let made = Counter()
    let disposed = Counter()
    let outcomes = Collector<Outcome>()
    let container = try Container { registry in
      registry.register(Probe.self) { resolver in
        guard let session = resolver.currentScope.parent else { throw MissingScope() }
        try session.close()
        let unnamed = Outcome(discarding: { try resolver.resolveIfRegistered(TrackedResource.self) })
        outcomes.append(unnamed)
        outcomes.append(
          Outcome(discarding: { try resolver.resolveIfRegistered(TrackedResource.self, name: "n") }))
        return Probe(outcome: unnamed)
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { _ in
        made.increment()
        return TrackedResource("plain", disposed: disposed)
      }
      registry.register(TrackedResource.self, name: "n", lifetime: .singleton) { _ in
        made.increment()
        return TrackedResource("named", disposed: disposed)
      }
    }
    let request = try session.makeScope(.request)

    _ = try request.resolve(Probe.self)

    #expect(outcomes.elements == [.failure(.scopeClosed), .failure(.scopeClosed)], "\(outcomes.elements)")
    #expect(made.value == disposed.value)
    try container.close()
  }

  /// Every other entry point of a closed scope at top level: `resolveAll`, `resolveIfRegistered`,
  /// `inject(into:)` and `makeScope` are `scopeClosed`; `register` throws.
  @Test func everyEntryPointOfAClosedScopeIsScopeClosed() throws {
    final class Target: Injectable {
      struct Dependencies: Sendable { let widget: Widget }
      var widget: Widget?
      func inject(_ dependencies: Dependencies) { widget = dependencies.widget }
    }
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Target.Dependencies.self) { resolver in
        Target.Dependencies(widget: try resolver.resolve(Widget.self))
      }
    }
    let request = try container.makeScope(.request)
    try request.close()

    #expect(resolutionError { _ = try request.resolveAll(Widget.self) }?.code == .scopeClosed)
    #expect(resolutionError { _ = try request.resolveAll(Widget.self, name: "x") }?.code == .scopeClosed)
    #expect(resolutionError { _ = try request.resolveIfRegistered(Widget.self) }?.code == .scopeClosed)
    #expect(
      resolutionError { _ = try request.resolveIfRegistered(Widget.self, name: "x") }?.code == .scopeClosed)
    let target = Target()
    #expect(resolutionError { try request.inject(into: target) }?.code == .scopeClosed)
    #expect(target.widget == nil)
    #expect(resolutionError { _ = try request.makeScope(.request) }?.code == .scopeClosed)
    #expect(throws: (any Error).self) {
      try request.register { registry in
        registry.register(LabeledService.self) { _ in LabeledService("late") }
      }
    }
    try container.close()
  }

  /// A session-scoped holder of an untagged `.scoped` service, first resolved from a request:
  /// either `captiveDependency`, or the holder's dependency is not the request's instance (which
  /// the request's close would dispose under it), and the holder is the session's.
  @Test func aSessionServiceNeverHoldsTheRequestsUntaggedScopedInstance() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped) { _ in TrackedResource("untagged") }
      registry.register(Holding<TrackedResource>.self, lifetime: .scoped(.session)) { resolver in
        Holding(try resolver.resolve(TrackedResource.self))
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)

    let outcome = Outcome { try request.resolve(Holding<TrackedResource>.self) }

    if outcome.isSuccess {
      let holder = try request.resolve(Holding<TrackedResource>.self)
      let requestsOwn = try request.resolve(TrackedResource.self)
      #expect(holder.held !== requestsOwn, "the session's instance captured the request's scoped instance")
      try request.close()
      #expect(holder.held.disposeCount == 0, "the session's instance holds a disposed dependency")
      let nextRequest = try session.makeScope(.request)
      #expect(try nextRequest.resolve(Holding<TrackedResource>.self) === holder)
      try nextRequest.close()
    } else {
      #expect(outcome == .failure(.captiveDependency), "\(outcome)")
    }
    try session.close()
    try container.close()
  }

  /// A singleton reaching a `scoped(.request)` service by each route: 0 through a transient, 1
  /// through a graph service, 2 `resolveAll`, 3 `resolveIfRegistered`, 4 a `Lazy` read in the
  /// factory, 5 `Scope.current`; and a weak service through a transient: `captiveDependency`.
  @Test(arguments: 0..<6)
  func aSingletonReachingARequestServiceByAnyRouteIsCaptive(route: Int) throws {
    final class Middle: Sendable {
      let widget: Widget
      init(widget: Widget) { self.widget = widget }
    }
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 1) }
      registry.register(Middle.self, name: "t") { resolver in
        Middle(widget: try resolver.resolve(Widget.self))
      }
      registry.register(Middle.self, name: "g", lifetime: .graph) { resolver in
        Middle(widget: try resolver.resolve(Widget.self))
      }
      registry.register(Holding<[Widget]>.self, lifetime: .singleton) { resolver in
        switch route {
        case 0: return Holding([try resolver.resolve(Middle.self, name: "t").widget])
        case 1: return Holding([try resolver.resolve(Middle.self, name: "g").widget])
        case 2: return Holding(try resolver.resolveAll(Widget.self))
        case 3: return Holding([try resolver.resolveIfRegistered(Widget.self)].compactMap { $0 })
        case 4: return Holding([try resolver.lazy(Widget.self).value])
        default:
          guard let current = Scope.current else { throw MissingScope() }
          return Holding([try current.resolve(Widget.self)])
        }
      }
      registry.register(Holding<[Widget]>.self, name: "weak", lifetime: .weak) { resolver in
        Holding([try resolver.resolve(Middle.self, name: "t").widget])
      }
    }
    let request = try container.makeScope(.request)

    let singleton = Outcome { try request.resolve(Holding<[Widget]>.self) }
    let weak = Outcome { try request.resolve(Holding<[Widget]>.self, name: "weak") }

    #expect(singleton == .failure(.captiveDependency), "route \(route): \(singleton)")
    #expect(weak == .failure(.captiveDependency), "weak: \(weak)")
    try request.close()
    try container.close()
  }

  /// An eager singleton registered into a session while another thread closes it, 300 rounds: the
  /// registration is refused with `scopeClosed`, or the instance is made and disposed; never made
  /// and left undisposed.
  @Test func anEagerSingletonRegisteredRacingACloseIsRefusedOrDisposed() async throws {
    let made = Counter()
    let disposed = Counter()
    let container = Container()
    let problems = Collector<String>()
    for round in 0..<300 {
      let session = try container.makeScope(.session)
      let start = Barrier(parties: 2)

      let finished = await runOnThreads(2) { index in
        start.arriveAndWait()
        if index == 1 {
          for _ in 0..<(round % 13) { sched_yield() }
          do { try session.close() } catch { problems.append("close: \(error)") }
          return
        }
        let registered = Outcome(discarding: {
          try session.register { registry in
            registry.register(TrackedResource.self, lifetime: .eagerSingleton) { _ in
              pause(microseconds: UInt32(round % 3) * 100)
              made.increment()
              return TrackedResource("eager", disposed: disposed)
            }
          }
        })
        if !registered.isSuccess && registered != .failure(.scopeClosed) {
          problems.append("register: \(registered)")
        }
      }

      #expect(finished, "deadlock in round \(round)")
      if made.value != disposed.value {
        problems.append("round \(round): made \(made.value), disposed \(disposed.value)")
        break
      }
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(5))")
    try closeSynchronously(container)
  }

  /// A singleton whose factory closes its own scope is `scopeClosed`, and its instance is disposed
  /// once; an eager singleton doing the same leaves nothing undisposed either.
  @Test func aSingletonFactoryThatClosesItsScopeIsScopeClosedAndItsInstanceDisposed() throws {
    let made = Counter()
    let disposed = Counter()
    let container = Container()
    let tenant = try container.makeScope(.session) { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { resolver in
        try resolver.currentScope.close()
        made.increment()
        return TrackedResource("singleton", disposed: disposed)
      }
    }

    let error = resolutionError { _ = try tenant.resolve(TrackedResource.self) }

    #expect(error?.code == .scopeClosed)
    #expect(made.value == 1 && disposed.value == 1, "made \(made.value), disposed \(disposed.value)")

    let eagerTenant = try container.makeScope(.session)
    let eager = Outcome(discarding: {
      try eagerTenant.register { registry in
        registry.register(TrackedResource.self, lifetime: .eagerSingleton) { resolver in
          try resolver.currentScope.close()
          made.increment()
          return TrackedResource("eager", disposed: disposed)
        }
      }
    })
    #expect(made.value == disposed.value, "eager (\(eager)): made \(made.value), disposed \(disposed.value)")
    try container.close()
  }

  /// Batches registered into a session, 2,000 of them, while two threads resolve a service that
  /// reads two of the batch's registrations (from the session and from a request below it): each
  /// resolve sees one batch whole.
  @Test func aResolveRacingRegistrationsSeesEachBatchWhole() async throws {
    final class First: Sendable {
      let batch: Int
      init(_ batch: Int) { self.batch = batch }
    }
    final class Second: Sendable {
      let batch: Int
      init(_ batch: Int) { self.batch = batch }
    }
    final class Pair: Sendable {
      let first: Int
      let second: Int
      init(first: Int, second: Int) {
        self.first = first
        self.second = second
      }
    }
    let container = try Container { registry in
      registry.register(First.self) { _ in First(0) }
      registry.register(Second.self) { _ in Second(0) }
      registry.register(Pair.self) { resolver in
        let first = try resolver.resolve(First.self).batch
        sched_yield()
        let second = try resolver.resolve(Second.self).batch
        return Pair(first: first, second: second)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let torn = Collector<String>()
    let registered = Flag()

    let finished = await runOnThreads(3) { index in
      if index == 0 {
        for batch in 1...2_000 {
          try? session.register { registry in
            registry.register(First.self) { _ in First(batch) }
            registry.register(Second.self) { _ in Second(batch) }
          }
        }
        registered.raise()
        return
      }
      let scope = index == 1 ? session : request
      while !registered.isRaised {
        if let pair = try? scope.resolve(Pair.self), pair.first != pair.second {
          torn.append("\(pair.first)/\(pair.second)")
        }
      }
    }

    #expect(finished, "deadlock")
    #expect(torn.elements.isEmpty, "torn reads: \(torn.elements.prefix(5))")
    try closeSynchronously(container)
  }
}
