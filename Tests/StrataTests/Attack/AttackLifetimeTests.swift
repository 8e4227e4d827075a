import Strata
import Testing

/// Each lifetime keeps its promise under pressure: an eager singleton of a failed batch and a
/// request dropped without a close are still disposed once, a weak service held by someone is
/// never made twice, a graph service is one per top-level resolve, and a factory sees the scope
/// that runs it as `Scope.current`.
@Suite struct AttackLifetimeTests {
  /// A later batch into an open session whose second eager singleton throws: the error is typed,
  /// a resolve of the first is an instance or `notRegistered` (whatever the registry kept), and
  /// each instance the first factory made is disposed exactly once by the session's close.
  @Test func aLaterBatchWhoseSecondEagerSingletonThrowsDisposesTheFirstOnce() throws {
    let made = Collector<TrackedResource>()
    let container = Container()
    let session = try container.makeScope(.session)

    let error = resolutionError {
      try session.register { registry in
        registry.register(TrackedResource.self, lifetime: .eagerSingleton) { _ in
          let resource = TrackedResource("eager")
          made.append(resource)
          return resource
        }
        registry.register(Widget.self, lifetime: .eagerSingleton) { _ in throw FixtureError(code: 1) }
      }
    }

    #expect(error != nil)
    let first = Outcome { try session.resolve(TrackedResource.self) }
    #expect(first.isSuccess || first == .failure(.notRegistered), "\(first)")
    try session.close()
    #expect(!made.elements.isEmpty)
    #expect(made.elements.allSatisfy { $0.disposeCount == 1 }, "\(made.elements.map(\.disposeCount))")
    try container.close()
  }

  /// 2,000 requests, each making a disposable scoped instance, dropped without a close while the
  /// container is open: the container's close disposes each instance exactly once (a dropped
  /// request owning a disposable stays on its parent's list).
  @Test func requestsDroppedWithoutACloseAreDisposedByTheContainersClose() throws {
    let made = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        made.increment()
        return TrackedResource("request", disposed: disposed)
      }
    }
    for _ in 0..<2_000 {
      let request = try container.makeScope(.request)
      _ = try request.resolve(TrackedResource.self)
    }
    #expect(disposed.value == 0)

    try container.close()

    #expect(made.value == 2_000)
    #expect(disposed.value == 2_000)
  }

  /// A weak service resolved by four threads, 3,000 times each, each holding one instance while it
  /// resolves again: the second resolve gives the instance held, never a second one (and never a
  /// freed one, which the sanitizers would see).
  @Test func aWeakServiceHeldByItsResolverIsNeverMadeTwice() async throws {
    final class Shared: Sendable {}
    let container = try Container { registry in
      registry.register(Shared.self, lifetime: .weak) { _ in Shared() }
    }
    let problems = Collector<String>()

    let finished = await runOnThreads(4) { _ in
      for _ in 0..<3_000 {
        guard let held = try? container.resolve(Shared.self), let again = try? container.resolve(Shared.self)
        else {
          problems.append("a resolve failed")
          continue
        }
        if held !== again { problems.append("two instances while one was held") }
      }
    }

    #expect(finished, "deadlock")
    #expect(problems.elements.isEmpty, "\(Set(problems.elements))")
    try closeSynchronously(container)
  }

  /// `Scope.current` inside a factory resolved from a request: a singleton's factory sees the
  /// container, a transient's sees the request or no scope, never a closed or foreign one.
  @Test func scopeCurrentInsideAFactoryIsTheScopeItsInstanceBelongsTo() throws {
    let seen = Collector<ObjectIdentifier?>()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .singleton) { _ in
        seen.append(Scope.current.map(ObjectIdentifier.init))
        return LabeledService("singleton")
      }
      registry.register(Widget.self) { _ in
        seen.append(Scope.current.map(ObjectIdentifier.init))
        return Widget(id: 1)
      }
    }
    let requestID = Slot<ObjectIdentifier>()

    try container.withScope(.request) { request in
      requestID.value = ObjectIdentifier(request)
      _ = try request.resolve(LabeledService.self)
      _ = try request.resolve(Widget.self)
    }

    #expect(seen.elements.count == 2)
    #expect(seen.elements.first == ObjectIdentifier(container), "the singleton's factory")
    #expect(
      seen.elements.last == requestID.value || seen.elements.last == .some(nil), "the transient's factory")
    try container.close()
  }

  /// A graph service is one instance throughout a top-level resolve and a fresh one in the next.
  @Test func aGraphServiceIsSharedWithinOneResolveAndFreshAcrossResolves() throws {
    final class Part: Sendable {}
    final class Pair: Sendable {
      let first: Part
      let second: Part
      init(first: Part, second: Part) {
        self.first = first
        self.second = second
      }
    }
    let container = try Container { registry in
      registry.register(Part.self, lifetime: .graph) { _ in Part() }
      registry.register(Pair.self) { resolver in
        Pair(first: try resolver.resolve(Part.self), second: try resolver.resolve(Part.self))
      }
    }

    let one = try container.resolve(Pair.self)
    let other = try container.resolve(Pair.self)

    #expect(one.first === one.second)
    #expect(one.first !== other.first)
    try container.close()
  }
}
