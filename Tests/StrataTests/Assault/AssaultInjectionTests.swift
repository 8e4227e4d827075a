import Strata
import Testing

/// An `@Injected` property and `inject(into:)` resolve from their scope as a resolve would: after
/// the scope or an ancestor closed they fail with `scopeClosed` and make nothing; read from many
/// threads at once they make one instance; racing their scope's close, each instance made is
/// disposed once; a factory reading the property it fills is a cycle, not a deadlock.
@Suite struct AssaultInjectionTests {
  /// A container with a disposable `TrackedResource` (labelled with its factory run, counted in
  /// `runs`) of `lifetime` and the dependencies of ``RecordingScreen``.
  private static func container(runs: Counter, lifetime: Lifetime = .scoped(.request)) throws -> Container {
    try Container { registry in
      registry.register(TrackedResource.self, lifetime: lifetime) { _ in
        TrackedResource("\(runs.increment())")
      }
      registry.register(RecordingScreen.Dependencies.self, RecordingScreen.Dependencies.init)
    }
  }

  /// An `@Injected` property of an object made in `withScope`, read after the body returned:
  /// `scopeClosed` while the scope is still referenced and after it is freed; no factory runs.
  @Test func anInjectedPropertyReadAfterItsRequestClosedIsScopeClosedWhileTheScopeIsHeld() async throws {
    let runs = Counter()
    let container = try Self.container(runs: runs)
    var request: Scope?
    let holder = try await container.withScope(.request) { scope in
      request = scope
      return AmbientPartHolder()
    }
    #expect(request?.isClosed == true)
    let error = resolutionError { _ = try holder.$part.resolve() }
    #expect(error?.code == .scopeClosed)
    #expect(runs.value == 0)
    // And once the scope is freed.
    request = nil
    let again = resolutionError { _ = try holder.$part.resolve() }
    #expect(again?.code == .scopeClosed)
    #expect(runs.value == 0)
  }

  /// An `@Injected` property bound to an open request whose session closed: `scopeClosed`, and
  /// the transient factory does not run.
  @Test func anInjectedPropertyFromAScopeWhoseAncestorClosedIsScopeClosed() async throws {
    let runs = Counter()
    let container = try Self.container(runs: runs, lifetime: .transient)
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let holder = ExplicitPartHolder(from: request)
    try await session.close()
    let error = resolutionError { _ = try holder.$part.resolve() }
    #expect(error?.code == .scopeClosed)
    #expect(runs.value == 0)
    withExtendedLifetime(request) {}
  }

  /// Sixteen threads reading one `@Injected` property of a transient service for the first time
  /// at once: the factory runs once and all sixteen get that instance. 20 rounds.
  @Test func sixteenThreadsReadingOneInjectedPropertyFirstGetOneInstance() async throws {
    for round in 0..<20 {
      let runs = Counter()
      let container = try Self.container(runs: runs, lifetime: .transient)
      let holder = ExplicitPartHolder(from: container)
      let barrier = Barrier(parties: 16)
      let outcomes = Collector<Outcome>()
      let finished = await runOnThreads(16) { _ in
        barrier.arriveAndWait()
        outcomes.append(Outcome { try holder.$part.resolve() })
      }
      #expect(finished, "deadlock in round \(round)")
      #expect(runs.value == 1, "round \(round)")
      let instances = outcomes.elements.compactMap(\.instance)
      #expect(instances.count == 16 && Set(instances).count == 1, "round \(round): \(outcomes.elements)")
    }
  }

  /// Eight threads reading the `@Injected` properties of eight objects bound to one request
  /// while a ninth closes it: each read gets the request's one instance or `scopeClosed`, the
  /// close succeeds, and the instance, if made, is disposed once. 20 rounds.
  @Test func readingInjectedPropertiesWhileTheirScopeClosesDisposesWhatWasMadeOnce() async throws {
    for round in 0..<20 {
      let runs = Counter()
      let made = Collector<TrackedResource>()
      let container = try Container { registry in
        registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
          let part = TrackedResource("\(runs.increment())")
          made.append(part)
          return part
        }
      }
      let request = try container.makeScope(.request)
      let holders = (0..<8).map { _ in ExplicitPartHolder(from: request) }
      let barrier = Barrier(parties: 9)
      let closed = Slot<Outcome>()
      let outcomes = Collector<Outcome>()
      let finished = await runOnThreads(9) { index in
        barrier.arriveAndWait()
        if index == 8 {
          closed.value = Outcome(discarding: { try request.close() })
        } else {
          outcomes.append(Outcome { try holders[index].$part.resolve() })
        }
      }
      #expect(finished, "deadlock in round \(round)")
      #expect(closed.value?.isSuccess == true, "round \(round): \(String(describing: closed.value))")
      #expect(
        Set(outcomes.elements.compactMap(\.instance)).count <= 1, "round \(round): \(outcomes.elements)")
      #expect(
        outcomes.elements.allSatisfy { $0.isSuccess || $0 == .failure(.scopeClosed) },
        "round \(round): \(outcomes.elements)")
      #expect(runs.value <= 1, "round \(round)")
      #expect(made.elements.allSatisfy { $0.disposeCount == 1 }, "round \(round)")
    }
  }

  /// An `@Injected` property whose service's factory reads that same property: the read fails
  /// with `cycle` instead of waiting for itself.
  @Test func anInjectedPropertyWhoseFactoryReadsTheSamePropertyIsACycleNotADeadlock() async throws {
    let holder = Slot<SelfReadingHolder>()
    let container = try Container { registry in
      registry.register(LoopedService.self) { _ in
        _ = try holder.value?.$looped.resolve()
        return LoopedService()
      }
    }
    holder.value = SelfReadingHolder(from: container)
    let outcome = await withDeadline(.seconds(5)) {
      Outcome(discarding: { try holder.value?.$looped.resolve() })
    }
    #expect(outcome == .failure(.cycle), "\(outcome.map { "\($0)" } ?? "deadlock")")
    holder.value = nil
  }

  /// `inject(into:)` from a request whose session closed: `scopeClosed`, and the target keeps
  /// only the bundle it received before, whose instance the close disposed once.
  @Test func injectIntoAfterTheAncestorClosedIsScopeClosedAndLeavesTheTargetUntouched() async throws {
    let runs = Counter()
    let container = try Self.container(runs: runs)
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let screen = RecordingScreen()
    try request.inject(into: screen)
    try await session.close()
    let error = resolutionError { try request.inject(into: screen) }
    #expect(error?.code == .scopeClosed)
    #expect(screen.received.count == 1)
    #expect(screen.received.first?.part.disposeCount == 1)
  }

  /// Eight threads each injecting twice into one target from a request while a ninth closes it:
  /// each gets through or fails with `scopeClosed`, the close succeeds, the target only ever
  /// receives the request's one instance, and that instance is disposed once. 20 rounds.
  @Test func injectingIntoOneTargetFromManyThreadsWhileTheScopeClosesIsTypedAndDisposedOnce() async throws {
    for round in 0..<20 {
      let runs = Counter()
      let made = Collector<TrackedResource>()
      let container = try Container { registry in
        registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
          let part = TrackedResource("\(runs.increment())")
          made.append(part)
          return part
        }
        registry.register(RecordingScreen.Dependencies.self, RecordingScreen.Dependencies.init)
      }
      let request = try container.makeScope(.request)
      let screen = RecordingScreen()
      let barrier = Barrier(parties: 9)
      let closed = Slot<Outcome>()
      let outcomes = Collector<Outcome>()
      let finished = await runOnThreads(9) { index in
        barrier.arriveAndWait()
        if index == 8 {
          closed.value = Outcome(discarding: { try request.close() })
        } else {
          outcomes.append(
            Outcome(discarding: {
              try request.inject(into: screen)
              try request.inject(into: screen)
            }))
        }
      }
      #expect(finished, "deadlock in round \(round)")
      #expect(closed.value?.isSuccess == true, "round \(round): \(String(describing: closed.value))")
      #expect(
        outcomes.elements.allSatisfy { $0.isSuccess || $0 == .failure(.scopeClosed) },
        "round \(round): \(outcomes.elements)")
      #expect(runs.value <= 1, "round \(round): a scoped instance was made \(runs.value) times")
      #expect(Set(screen.received.map { ObjectIdentifier($0.part) }).count <= 1, "round \(round)")
      #expect(made.elements.allSatisfy { $0.disposeCount == 1 }, "round \(round)")
    }
  }
}
