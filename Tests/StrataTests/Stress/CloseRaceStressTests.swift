import Foundation
import Strata
import Synchronization
import Testing

/// Forced interleavings of `close()` with resolves and with other closes, many rounds each.
@Suite struct CloseRaceStressTests {
  /// How a round orders the resolve and the close.
  enum Order: CaseIterable, CustomStringConvertible {
    /// The close starts while the factory runs; the factory returns once the scope is closed.
    case closeDuringFactory
    /// The resolve returns before the close starts.
    case resolveFirst
    /// Both start together.
    case race
    /// The instance exists; a second resolve races the close.
    case raceWithExisting

    var description: String {
      switch self {
      case .closeDuringFactory: "close during the factory"
      case .resolveFirst: "resolve first"
      case .race: "race"
      case .raceWithExisting: "race with an existing instance"
      }
    }
  }

  /// Each combination of order, closing the request or its session, and closing synchronously or
  /// with `await`, `rounds` times: the failures found.
  private static func closeRacingResolve<Probe: StressDisposalProbe>(
    rounds: Int, _ make: @escaping @Sendable () -> Probe
  ) async -> [String] {
    var failures: [String] = []
    for order in Order.allCases {
      for closeParent in [false, true] {
        for closeAsync in [false, true] {
          for round in 0..<rounds {
            let context =
              "\(order), closing the \(closeParent ? "session" : "request")"
              + "\(closeAsync ? " with await" : ""), round \(round)"
            let found = await closeRacingResolveRound(
              order: order, closeParent: closeParent, closeAsync: closeAsync, make)
            failures += found.map { "\(context): \($0)" }
            if !found.isEmpty { break }  // one failing round per combination is enough
          }
        }
      }
    }
    return failures
  }

  private static func closeRacingResolveRound<Probe: StressDisposalProbe>(
    order: Order, closeParent: Bool, closeAsync: Bool, _ make: @escaping @Sendable () -> Probe
  ) async -> [String] {
    let created = Locked<[Probe]>([])
    let failures = Locked<[String]>([])
    let entered = StressSignal()
    let resolved = StressSignal()
    let go = StressBarrier(2)
    let session: Scope
    let request: Scope
    do {
      let container = try Container { registry in
        registry.register(Probe.self, lifetime: .scoped(.request)) { resolver in
          let probe = make()
          created.withLock { $0.append(probe) }
          if order == .closeDuringFactory {
            entered.signal()
            let scope = resolver.currentScope
            var waited = 0
            while !scope.isClosed && waited < 2_000_000 {
              usleep(100)
              waited += 100
            }
          }
          return probe
        }
      }
      session = try container.makeScope(.session)
      request = try session.makeScope(.request)
      if order == .raceWithExisting { _ = try request.resolve(Probe.self) }
    } catch {
      return ["setting up failed: \(error)"]
    }
    let closing = closeParent ? session : request

    let finished = await stressRunThreads(2, seconds: 10) { index in
      if index == 0 {
        if order == .race || order == .raceWithExisting { go.arriveAndWait() }
        do {
          let probe = try request.resolve(Probe.self)
          // Disposal comes after the close starts: a disposed instance means a closed scope.
          if probe.disposeCount > 0 && !request.isClosed {
            failures.withLock { $0.append("an open scope handed out a disposed instance") }
          }
        } catch let error as ResolutionError where error.code == .scopeClosed {
        } catch {
          failures.withLock { $0.append("unexpected error: \(error)") }
        }
        resolved.signal()
      } else {
        switch order {
        case .closeDuringFactory: entered.wait()
        case .resolveFirst: resolved.wait()
        case .race, .raceWithExisting: go.arriveAndWait()
        }
        if closeAsync {
          stressBlockOn {
            do {
              try await closing.close()
            } catch {
              failures.withLock { $0.append("await close() threw \(error)") }
            }
          }
        } else {
          do {
            try closing.close()
          } catch {
            // A synchronous close reports the async disposers it could not await: expected.
            if stressExpectedErrorName(error) != "disposalFailed" {
              failures.withLock { $0.append("close() threw \(error)") }
            }
          }
        }
      }
    }
    guard finished else { return ["the resolve and the close did not finish within 10 s (deadlock?)"] }

    // A synchronous close disposes async disposers in a background task: give it time to be
    // scheduled. Under ThreadSanitizer, with other suites blocking the two pool threads, 0.5 s was
    // once not enough (CI flake, disposed [0] times); the wait ends as soon as all are disposed.
    _ = await stressWait(seconds: 20) { created.withLock { $0.allSatisfy { $0.disposeCount > 0 } } }
    let counts = created.withLock { $0.map(\.disposeCount) }
    var result = failures.withLock { $0 }
    if counts.count > 1 && order != .closeDuringFactory {
      result.append("\(counts.count) instances were made for one scope")
    }
    if counts.contains(where: { $0 != 1 }) {
      result.append("instances made were disposed \(counts) times; every one must be disposed once")
    }
    return result
  }

  /// A resolve racing the close of its scope (or of the scope's parent) returns the instance,
  /// which the close disposes, or throws `scopeClosed`; an instance the close made the factory
  /// discard is disposed too. Synchronous disposers.
  @Test(.timeLimit(.minutes(1)))
  func closeRacingResolveDisposesEveryInstanceOnceAndNeverHandsOutADisposedOne() async {
    let failures = await Self.closeRacingResolve(rounds: 12) { StressProbe("request") }
    #expect(failures.isEmpty, "\(failures.count) failure(s), first: \(failures.prefix(5))")
  }

  /// As above, with asynchronous disposers: an instance the factory made while the scope closed is
  /// disposed, even though the close that discarded it could not await its disposer.
  @Test(.timeLimit(.minutes(1)))
  func closeRacingResolveDisposesEveryAsyncDisposableOnce() async {
    let failures = await Self.closeRacingResolve(rounds: 12) { StressAsyncProbe() }
    #expect(failures.isEmpty, "\(failures.count) failure(s), first: \(failures.prefix(5))")
  }

  /// A second `close()` while the first is still running its slow disposer returns only once the
  /// disposal finished, whichever of the two is `async`.
  @Test(.timeLimit(.minutes(1)))
  func aSecondCloseReturnsOnlyAfterTheFirstFinishedDisposing() async {
    var failures: [String] = []
    for firstAsync in [false, true] {
      for secondAsync in [false, true] {
        for round in 0..<5 {
          let context =
            "first \(firstAsync ? "await close()" : "close()"), second "
            + "\(secondAsync ? "await close()" : "close()"), round \(round)"
          failures += await Self.secondCloseRound(firstAsync: firstAsync, secondAsync: secondAsync)
            .map { "\(context): \($0)" }
        }
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s), first: \(failures.prefix(5))")
  }

  private static func secondCloseRound(firstAsync: Bool, secondAsync: Bool) async -> [String] {
    let started = StressSignal()
    let release = StressSignal()
    let secondCalling = StressSignal()
    let probe = StressProbe("slow", started: started, release: release)
    let request: Scope
    do {
      let container = try Container { registry in
        registry.register(StressProbe.self, lifetime: .scoped(.request)) { _ in probe }
      }
      request = try container.makeScope(.request)
      _ = try request.resolve(StressProbe.self)
    } catch {
      return ["setting up failed: \(error)"]
    }
    let finishedAtReturn = Locked<[Int: Bool]>([:])
    let failures = Locked<[String]>([])

    // Thread 0 closes first; thread 1 closes again once the disposer runs; thread 2 lets the
    // disposer finish 20 ms after the second close was called. (Plain threads all: an `await
    // close()` runs a synchronous disposer on a pool thread, which then blocks.)
    let finished = await stressRunThreads(3, seconds: 10) { index in
      switch index {
      case 1:
        guard started.wait() else {
          failures.withLock { $0.append("the first close never started the disposer") }
          secondCalling.signal()
          return
        }
        secondCalling.signal()
      case 2:
        secondCalling.wait()
        usleep(20_000)
        release.signal()
        return
      default:
        break
      }
      if index == 0 ? firstAsync : secondAsync {
        stressBlockOn { try? await request.close() }
      } else {
        try? request.close()
      }
      finishedAtReturn.withLock { $0[index] = probe.disposeFinished != 0 }
    }
    guard finished else { return ["the closes did not finish within 10 s (deadlock?)"] }

    var result = failures.withLock { $0 }
    let observed = finishedAtReturn.withLock { $0 }
    if observed[1] == false { result.append("the second close returned before the first finished disposing") }
    if observed[0] != true { result.append("the first close returned before its disposer finished") }
    if probe.disposeCount != 1 { result.append("disposed \(probe.disposeCount) times") }
    return result
  }

  /// A parent's close racing a child's close on another thread: the child's instance is
  /// disposed (to the end of its disposer) before the parent's instance is.
  @Test(.timeLimit(.minutes(1)))
  func aParentClosingWhileItsChildClosesDisposesTheChildFirst() async {
    var failures: [String] = []
    for childAsync in [false, true] {
      for parentAsync in [false, true] {
        for round in 0..<5 {
          let context =
            "child \(childAsync ? "await close()" : "close()"), parent "
            + "\(parentAsync ? "await close()" : "close()"), round \(round)"
          failures += await Self.parentRacingChildRound(childAsync: childAsync, parentAsync: parentAsync)
            .map { "\(context): \($0)" }
        }
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s), first: \(failures.prefix(5))")
  }

  private static func parentRacingChildRound(childAsync: Bool, parentAsync: Bool) async -> [String] {
    let childStarted = StressSignal()
    let childProbe = StressProbe("child", started: childStarted, sleepMicroseconds: 5000)
    let parentProbe = StressProbe("parent")
    let session: Scope
    let request: Scope
    do {
      let container = try Container { registry in
        registry.register(StressProbe.self, name: "child", lifetime: .scoped(.request)) { _ in childProbe }
        registry.register(StressProbe.self, name: "parent", lifetime: .scoped(.session)) { _ in parentProbe }
      }
      session = try container.makeScope(.session)
      request = try session.makeScope(.request)
      _ = try request.resolve(StressProbe.self, name: "parent")
      _ = try request.resolve(StressProbe.self, name: "child")
    } catch {
      return ["setting up failed: \(error)"]
    }

    let finished = await stressRunThreads(2, seconds: 10) { index in
      let scope = index == 0 ? request : session
      if index == 1 { guard childStarted.wait() else { return } }
      if index == 0 ? childAsync : parentAsync {
        stressBlockOn { try? await scope.close() }
      } else {
        try? scope.close()
      }
    }
    guard finished else { return ["the closes did not finish within 10 s (deadlock?)"] }
    return Self.orderFailures(children: [childProbe], parent: parentProbe)
  }

  /// Every child probe disposed once, to its end, before the parent probe's disposal started.
  private static func orderFailures(children: [StressProbe], parent: StressProbe) -> [String] {
    var failures: [String] = []
    let counts = children.map(\.disposeCount) + [parent.disposeCount]
    if counts.contains(where: { $0 != 1 }) { failures.append("disposed \(counts) times; each once") }
    for child in children where child.disposeFinished == 0 || child.disposeFinished > parent.disposeStarted {
      failures.append(
        "the parent's instance was disposed (tick \(parent.disposeStarted)) before the child's "
          + "finished (tick \(child.disposeFinished))")
    }
    return failures
  }

  /// Unforced: four children and their parent closed at once from five threads, many rounds;
  /// every child's instance is disposed before the parent's.
  @Test(.timeLimit(.minutes(1)))
  func childrenAndTheirParentClosedAtOnceDisposeChildrenFirst() async {
    var failures: [String] = []
    for round in 0..<150 {
      let parentProbe = StressProbe("parent")
      let childProbes = (0..<4).map {
        StressProbe("child \($0)", sleepMicroseconds: round % 3 == 0 ? 200 : 0)
      }
      let session: Scope
      let requests: [Scope]
      do {
        let container = try Container { registry in
          registry.register(StressProbe.self, name: "parent", lifetime: .scoped(.session)) { _ in parentProbe
          }
        }
        session = try container.makeScope(.session)
        requests = try childProbes.map { probe in
          try session.makeScope(.request) { registry in
            registry.register(StressProbe.self, name: "child", lifetime: .scoped) { _ in probe }
          }
        }
        for request in requests {
          _ = try request.resolve(StressProbe.self, name: "child")
          _ = try request.resolve(StressProbe.self, name: "parent")
        }
      } catch {
        failures.append("round \(round): setting up failed: \(error)")
        continue
      }
      let go = StressBarrier(5)
      let finished = await stressRunThreads(5, seconds: 10) { index in
        go.arriveAndWait()
        let scope = index < 4 ? requests[index] : session
        if (index + round) % 2 == 0 {
          stressBlockOn { try? await scope.close() }
        } else {
          try? scope.close()
        }
      }
      guard finished else {
        failures.append("round \(round): the closes did not finish within 10 s (deadlock?)")
        break
      }
      failures += Self.orderFailures(children: childProbes, parent: parentProbe).map {
        "round \(round): \($0)"
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s), first: \(failures.prefix(5))")
  }

  /// A singleton registered in a session is read by another thread right up to the session's
  /// close: the close frees the singleton only after every reader that saw the session open is
  /// out (ThreadSanitizer checks the order; without it, a reader could retain a freed instance).
  @Test func aScopesOwnSingletonReadUpToItsCloseIsNeverFreedUnderTheReader() async throws {
    for _ in 0..<200 {
      let container = Container()
      let session = try container.makeScope(.session)
      try session.register { registry in
        registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: 1) }
      }
      let made = try session.resolve(Widget.self)
      let reading = Barrier(parties: 2)
      let wrong = Locked<[String]>([])
      let done = await runOnThreads(2) { index in
        reading.arriveAndWait()
        if index == 1 {
          try? session.close()
          return
        }
        while true {
          do {
            let widget = try session.resolve(Widget.self)
            if widget.id != 1 { wrong.withLock { $0.append("read \(widget.id)") } }
          } catch let error as ResolutionError where error.code == .scopeClosed {
            return
          } catch {
            wrong.withLock { $0.append("\(error)") }
            return
          }
        }
      }
      #expect(done)
      #expect(wrong.withLock { $0 }.isEmpty)
      #expect(made.id == 1)
    }
  }
}
