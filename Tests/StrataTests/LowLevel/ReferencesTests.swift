import Strata
import Testing

extension LowLevel {
  /// The unretained references of the read path on their own: they reach what they were made from,
  /// take no reference count, and the graph cache lives exactly as long as its resolve.
  @Suite struct ReferencesTests {
    @Test func aScopeRefReachesItsScopeAndItsAncestorsWithoutRetainingThem() throws {
      let container = Container()
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request)
      weak let watched = request
      var reference: ScopeRef? = ScopeRef(request)

      #expect(reference?.with { $0 === request } == true)
      #expect(reference?.parent.map { $0 === ScopeRef(session) } == true)
      #expect(reference?.parent?.parent.map { $0 === ScopeRef(container) } == true)
      #expect(reference?.parent?.parent?.parent == nil)

      _ = consume request
      #expect(watched == nil, "a ScopeRef keeps nothing alive")
      reference = nil
      _ = reference
      try session.close()
    }

    @Test func aGraphCacheIsMadeOnFirstUseAndFreedWhenItsResolveEnds() {
      weak var watched: GraphCache?
      let sameCache = GraphCacheSlot.with { slot in
        let first = slot.cache
        watched = first
        return first === slot.cache
      }

      #expect(sameCache)
      #expect(watched == nil, "the slot gave its retain back")
    }

    @Test func aLazyObjectIsMadeOnceOnFirstUseAndFreedWithItsOwner() {
      final class Made {}
      weak var watched: Made?
      var makes = 0
      do {
        var lazy = LazyObject<Made>()
        let before = lazy.withObjectIfMade { $0 == nil }
        #expect(before, "nothing is made before first use")
        let make = {
          makes += 1
          return Made()
        }
        let first = lazy.withObject(making: make) { object in
          watched = object
          return ObjectIdentifier(object)
        }
        let second = lazy.withObject(making: make) { ObjectIdentifier($0) }
        let seen = lazy.withObjectIfMade { $0.map(ObjectIdentifier.init) }
        #expect(first == second && seen == first, "the same object every time")
        #expect(makes == 1)
        #expect(watched != nil, "kept while its owner lives")
        _ = consume lazy
      }
      #expect(watched == nil, "released with its owner, once")
    }

    /// Threads racing to make a `PublishedObject`'s object: all of them get the one object that
    /// was published, every object that lost the race is freed at once, and the winner is freed
    /// with its owner.
    @Test(.timeLimit(.minutes(1)))
    func aPublishedObjectRacedForByManyThreadsIsMadeVisibleOnceAndLosersAreFreed() async {
      final class Made: Sendable {}
      final class Owner: Sendable { let published = PublishedObject<Made>() }
      for _ in 0..<50 {
        let made = Collector<WeakBox<Made>>()
        let seen = Collector<ObjectIdentifier>()
        var owner: Owner? = Owner()
        let shared = WeakBox(owner)
        let barrier = Barrier(parties: 4)
        let finished = await runOnThreads(4) { _ in
          barrier.arriveAndWait()
          let identity = shared.object?.published.withObject(making: {
            let object = Made()
            made.append(WeakBox(object))
            return object
          }) { ObjectIdentifier($0) }
          if let identity { seen.append(identity) }
        }
        #expect(finished)
        #expect(Set(seen.elements).count == 1, "every thread sees the published object")
        let alive = made.elements.filter { $0.object != nil }
        #expect(alive.count == 1, "\(made.elements.count) made, \(alive.count) alive")
        #expect(alive.first.flatMap { $0.object.map(ObjectIdentifier.init) } == seen.elements.first)
        owner = nil
        _ = owner
        #expect(made.elements.allSatisfy { $0.object == nil }, "released with its owner")
      }
    }

    /// What a scope keeps in its guarded state (the snapshots it published, its linked children)
    /// goes when the scope goes.
    @Test func aClosedScopesStateIsFreedWithIt() throws {
      final class Captured: Sendable {}
      final class Service: Sendable {}
      weak var watched: Captured?
      let container = Container()
      do {
        let captured = Captured()
        watched = captured
        let session = try container.makeScope(.session) { registry in
          registry.register(Service.self) { _ in
            _ = captured
            return Service()
          }
        }
        let request = try session.makeScope(.request)
        _ = try request.resolve(Service.self)
        try session.close()
      }
      #expect(watched == nil, "the session's published snapshot was freed with the session")
      try container.close()
    }

    @Test func eachResolveGetsItsOwnCache() {
      let (outer, inner) = GraphCacheSlot.with { outer in
        GraphCacheSlot.with { inner in (ObjectIdentifier(outer.cache), ObjectIdentifier(inner.cache)) }
      }
      #expect(outer != inner)
    }
  }
}
