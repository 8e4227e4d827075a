import Foundation
import Strata
import Testing

/// A scoped instance is made at most once per scope, shared by every resolve of it, and disposed
/// exactly once, in reverse creation order, by its scope's close, under races with other creators
/// and with the close, in the inline slots and past them.
@Suite struct AttackScopedTests {
  /// Two threads race to make one request-scoped disposable (slow factory) while a third closes
  /// the request, 200 rounds: made at most once per request, the resolves that succeed get the
  /// same instance, and everything made is disposed exactly once.
  @Test func racingCreatorsAndACloseMakeEachInstanceOnce() async throws {
    let made = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        pause(microseconds: 300)
        made.increment()
        return TrackedResource("scoped", disposed: disposed)
      }
    }
    let problems = Collector<String>()
    for round in 0..<200 {
      let request = try container.makeScope(.request)
      let start = Barrier(parties: 3)
      let instances = Collector<TrackedResource>()
      let madeBefore = made.value

      let finished = await runOnThreads(3) { index in
        start.arriveAndWait()
        if index == 2 {
          pause(microseconds: UInt32(round % 5) * 100)
          do { try request.close() } catch { problems.append("close: \(error)") }
          return
        }
        do {
          instances.append(try request.resolve(TrackedResource.self))
        } catch let error as ResolutionError where error.code == .scopeClosed {
          // The close came first.
        } catch {
          problems.append("resolve: \(error)")
        }
      }

      #expect(finished, "deadlock in round \(round)")
      if made.value - madeBefore > 1 { problems.append("round \(round): made \(made.value - madeBefore)") }
      if Set(instances.elements.map(ObjectIdentifier.init)).count > 1 {
        problems.append("round \(round): two instances")
      }
      for instance in instances.elements where instance.disposeCount != 1 {
        problems.append("round \(round): an instance handed out was disposed \(instance.disposeCount) times")
      }
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(10))")
    #expect(made.value == disposed.value, "made \(made.value), disposed \(disposed.value)")
    try closeSynchronously(container)
  }

  /// A scoped factory that throws on its first call and succeeds on the second, raced by four
  /// threads, 100 rounds: at most one of them gets the error, the rest and every later resolve get
  /// the one instance, which the close disposes.
  @Test func aScopedFactoryThatThrowsOnceLeavesOneInstanceForEveryone() async throws {
    for round in 0..<100 {
      let calls = Counter()
      let made = Counter()
      let disposed = Counter()
      let container = try Container { registry in
        registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
          pause(microseconds: 200)
          if calls.increment() == 1 { throw FixtureError(code: 1) }
          made.increment()
          return TrackedResource("scoped", disposed: disposed)
        }
      }
      let request = try container.makeScope(.request)
      let start = Barrier(parties: 4)
      let outcomes = Collector<Outcome>()

      let finished = await runOnThreads(4) { _ in
        start.arriveAndWait()
        outcomes.append(Outcome { try request.resolve(TrackedResource.self) })
      }

      #expect(finished, "deadlock in round \(round)")
      let failures = outcomes.elements.filter { !$0.isSuccess }
      #expect(failures.count <= 1 && failures.allSatisfy { $0 == .failure(.factoryFailed) }, "\(failures)")
      #expect(made.value == 1)
      let again = Outcome { try request.resolve(TrackedResource.self) }
      #expect(again.isSuccess)
      #expect(outcomes.elements.filter(\.isSuccess).allSatisfy { $0 == again })
      try closeSynchronously(request)
      #expect(disposed.value == 1)
      try closeSynchronously(container)
    }
  }

  /// A scoped factory that closes its own request, with 0, 4 or 6 other scoped instances made
  /// first (inline slots free, full, overflowing): `scopeClosed`, and the instance it returned,
  /// like the others, is disposed (never kept by the closed scope).
  @Test(arguments: [0, 4, 6])
  func aScopedFactoryThatClosesItsScopeIsScopeClosedAndItsInstanceDisposed(others: Int) throws {
    let made = Counter()
    let disposed = Counter()
    let othersMade = Counter()
    let othersDisposed = Counter()
    let container = try Container { registry in
      registerNumbered(registry, made: othersMade, disposed: othersDisposed)
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { resolver in
        try resolver.currentScope.close()
        made.increment()
        return TrackedResource("closer", disposed: disposed)
      }
    }
    let request = try container.makeScope(.request)
    for index in 0..<others { _ = try resolveNumbered(index, from: request) }

    let error = resolutionError { _ = try request.resolve(TrackedResource.self) }

    #expect(error?.code == .scopeClosed)
    #expect(made.value == 1 && disposed.value == 1, "made \(made.value), disposed \(disposed.value)")
    #expect(othersMade.value == others && othersDisposed.value == others)
    let nextRequest = try container.makeScope(.request)
    #expect(resolutionError { _ = try nextRequest.resolve(TrackedResource.self) }?.code == .scopeClosed)
    #expect(made.value == disposed.value)
    try container.close()
  }

  /// Ten scoped disposables (four in the inline slots, six past them) resolved by four threads in
  /// opposite orders, 50 rounds: each made once, every thread gets the same instances, and the
  /// close disposes each once.
  @Test func tenScopedServicesResolvedFromFourThreadsAreEachMadeOnce() async throws {
    for round in 0..<50 {
      let made = Counter()
      let disposed = Counter()
      let container = try Container { registry in
        registerNumbered(registry, made: made, disposed: disposed, pauseMicroseconds: 50)
      }
      let request = try container.makeScope(.request)
      let start = Barrier(parties: 4)
      let seen = Collector<[ObjectIdentifier]>()
      let errors = Collector<String>()

      let finished = await runOnThreads(4) { index in
        start.arriveAndWait()
        var ids: [ObjectIdentifier?] = Array(repeating: nil, count: 10)
        let order = index % 2 == 0 ? Array(0..<10) : Array((0..<10).reversed())
        for service in order {
          do {
            ids[service] = ObjectIdentifier(try resolveNumbered(service, from: request))
          } catch {
            errors.append("\(error)")
          }
        }
        seen.append(ids.compactMap { $0 })
      }

      #expect(finished, "deadlock in round \(round)")
      #expect(errors.elements.isEmpty, "\(errors.elements)")
      #expect(made.value == 10)
      #expect(seen.elements.count == 4 && Set(seen.elements).count == 1, "threads saw different instances")
      try closeSynchronously(request)
      #expect(disposed.value == 10)
      try closeSynchronously(container)
    }
  }

  /// Twelve scoped disposables made in a shuffled order, then resolved again: nothing more is
  /// made, and the close disposes each once, in reverse creation order.
  @Test func twelveScopedServicesAreDisposedInReverseCreationOrder() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      for index in 0..<12 {
        registry.register(TrackedResource.self, name: index, lifetime: .scoped(.request)) { _ in
          log.append("make \(index)")
          return TrackedResource("\(index)", log: log)
        }
      }
    }
    let request = try container.makeScope(.request)
    let order = [5, 0, 11, 3, 7, 1, 9, 2, 10, 4, 8, 6]
    for index in order { _ = try request.resolve(TrackedResource.self, name: index) }
    for index in order { _ = try request.resolve(TrackedResource.self, name: index) }

    try request.close()

    #expect(log.elements == order.map { "make \($0)" } + order.reversed().map { "dispose \($0)" })
    try container.close()
  }

  /// Two threads resolving the ten scoped services while a third closes the request, 300 rounds:
  /// only `scopeClosed` is thrown, and everything made is disposed exactly once.
  @Test func scopedResolvesRacingTheCloseLeaveNothingUndisposed() async throws {
    let made = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registerNumbered(registry, made: made, disposed: disposed)
    }
    let problems = Collector<String>()
    for round in 0..<300 {
      let request = try container.makeScope(.request)
      let start = Barrier(parties: 3)

      let finished = await runOnThreads(3) { index in
        start.arriveAndWait()
        if index == 2 {
          for _ in 0..<(round % 7) { sched_yield() }
          do { try request.close() } catch { problems.append("close: \(error)") }
          return
        }
        for step in 0..<10 {
          let outcome = Outcome { try resolveNumbered(index == 0 ? step : 9 - step, from: request) }
          if !outcome.isSuccess && outcome != .failure(.scopeClosed) { problems.append("\(outcome)") }
        }
      }

      #expect(finished, "deadlock in round \(round)")
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(5))")
    #expect(made.value == disposed.value, "made \(made.value), disposed \(disposed.value)")
    try closeSynchronously(container)
  }

  /// A thread making requests under a session and resolving in them while another thread closes
  /// the session, 200 rounds: only `scopeClosed` is thrown, and once the close returned everything
  /// made in the session and its requests is disposed exactly once.
  @Test func aSessionClosingUnderItsBusyRequestsDisposesEverything() async throws {
    let made = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registerNumbered(registry, made: made, disposed: disposed)
      registry.register(TrackedResource.self, lifetime: .scoped(.session)) { _ in
        made.increment()
        return TrackedResource("session", disposed: disposed)
      }
    }
    let problems = Collector<String>()
    for round in 0..<200 {
      let session = try container.makeScope(.session)
      let start = Barrier(parties: 2)

      let finished = await runOnThreads(2) { index in
        start.arriveAndWait()
        if index == 1 {
          for _ in 0..<(round % 11) { sched_yield() }
          do { try session.close() } catch { problems.append("close: \(error)") }
          return
        }
        for _ in 0..<5 {
          let outcome = Outcome(discarding: {
            let request = try session.makeScope(.request)
            _ = try request.resolve(TrackedResource.self)
            for service in 0..<6 { _ = try resolveNumbered(service, from: request) }
          })
          if !outcome.isSuccess && outcome != .failure(.scopeClosed) { problems.append("\(outcome)") }
        }
      }

      #expect(finished, "deadlock in round \(round)")
      if made.value != disposed.value {
        problems.append("round \(round): made \(made.value), disposed \(disposed.value) after the close")
      }
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(5))")
    try closeSynchronously(container)
  }

  /// Requests made under a session while another thread closes it, 300 rounds: each is refused
  /// with `scopeClosed` or, once the session's close returned, closed, and a resolve in it is
  /// `scopeClosed`.
  @Test func aChildMadeWhileItsParentClosesIsRefusedOrClosed() async throws {
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 1) }
    }
    let problems = Collector<String>()
    for round in 0..<300 {
      let session = try container.makeScope(.session)
      let start = Barrier(parties: 2)
      let children = Collector<Scope>()

      let finished = await runOnThreads(2) { index in
        start.arriveAndWait()
        if index == 1 {
          try? session.close()
          return
        }
        for _ in 0..<20 {
          do {
            children.append(try session.makeScope(.request))
          } catch let error as ResolutionError where error.code == .scopeClosed {
            // The close came first.
          } catch {
            problems.append("makeScope: \(error)")
          }
        }
      }

      #expect(finished, "deadlock in round \(round)")
      for child in children.elements {
        if !child.isClosed { problems.append("round \(round): a child of a closed session is open") }
        let outcome = Outcome { try child.resolve(Widget.self) }
        if outcome != .failure(.scopeClosed) {
          problems.append("round \(round): resolve in a child: \(outcome)")
        }
      }
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(5))")
    try closeSynchronously(container)
  }
}
