import Strata
import Testing

// Who disposes what, at the edges: a type that adopts both disposal protocols, ready-made and weak
// instances (nobody), eager singletons of a child scope (that scope), and a second close.

private protocol EdgeCloser: Sendable {}

/// Adopts both protocols: "A type that adopts both protocols is disposed asynchronously."
private final class BothDisposals: Disposable, AsyncDisposable, EdgeCloser, Sendable {
  let syncRuns = Counter()
  let asyncRuns = Counter()
  func dispose() throws { syncRuns.increment() }
  func dispose() async throws { asyncRuns.increment() }
}

@Suite struct OwnershipEdgeTests {
  @Test func aTypeAdoptingBothProtocolsIsAwaitedWhateverItsRegisteredType() async throws {
    let container = try Container { registry in
      registry.register(BothDisposals.self, lifetime: .scoped) { _ in BothDisposals() }
      registry.register((any EdgeCloser).self, lifetime: .scoped) { _ in BothDisposals() }
      registry.register(Any.self, lifetime: .unchecked(.scoped)) { _ in BothDisposals() }
    }
    let request = try container.makeScope(.request)
    let concrete = try request.resolve(BothDisposals.self)
    let existential = try #require(try request.resolve((any EdgeCloser).self) as? BothDisposals)
    let any = try #require(try request.resolve(Any.self) as? BothDisposals)
    try await request.close()
    for instance in [concrete, existential, any] {
      #expect(instance.syncRuns.value == 0)
      #expect(instance.asyncRuns.value == 1)
    }
  }

  @Test func aSynchronousCloseReportsATypeAdoptingBothAsNeedingAnAwaitedClose() async throws {
    let container = try Container { registry in
      registry.register(BothDisposals.self, lifetime: .scoped) { _ in BothDisposals() }
    }
    let request = try container.makeScope(.request)
    let instance = try request.resolve(BothDisposals.self)
    let error = resolutionError { try closeSynchronously(request) }
    #expect(error?.code == .disposalFailed)
    #expect(underlyingErrors(error?.disposalErrors ?? []).map { $0 is AsyncDisposalRequired } == [true])
    try await container.close()  // returns after the background task that disposes the instance
    #expect(instance.syncRuns.value == 0)
    #expect(instance.asyncRuns.value == 1)
  }

  @Test func readyMadeAndWeakInstancesAreDisposedByNobody() throws {
    let ready = TrackedResource("ready")
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .weak) { _ in
        TrackedResource("weak")
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(instance: ready)
    }
    let request = try session.makeScope(.request)
    let weak = try request.resolve(TrackedResource.self, name: Ordinal.first)
    #expect(try request.resolve(TrackedResource.self) === ready)
    try request.close()
    try session.close()
    try container.close()
    #expect(ready.disposeCount == 0)
    #expect(weak.disposeCount == 0)
  }

  @Test func aChildsEagerSingletonIsMadeWithTheScopeAndDisposedOnceByIt() throws {
    let made = Collector<TrackedResource>()
    let container = Container()
    let child = try container.makeScope(.session) { registry in
      registry.register(TrackedResource.self, lifetime: .eagerSingleton) { _ in
        let resource = TrackedResource("eager")
        made.append(resource)
        return resource
      }
    }
    #expect(made.elements.count == 1)
    try child.close()
    try child.close()
    try container.close()
    #expect(made.elements.map(\.disposeCount) == [1])
  }

  @Test func aChildWhoseEagerSingletonFailsDisposesTheOnesItMade() throws {
    let made = Collector<TrackedResource>()
    let container = Container()
    let error = resolutionError {
      _ = try container.makeScope(.session) { registry in
        registry.register(TrackedResource.self, lifetime: .eagerSingleton) { _ in
          let resource = TrackedResource("made")
          made.append(resource)
          return resource
        }
        registry.register(Widget.self, lifetime: .eagerSingleton) { _ in throw FixtureError(code: 1) }
      }
    }
    #expect(error?.code == .factoryFailed)
    #expect(made.elements.map(\.disposeCount) == [1])
  }
}
