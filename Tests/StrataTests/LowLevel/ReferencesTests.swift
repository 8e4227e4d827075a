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

    @Test func eachResolveGetsItsOwnCache() {
      let (outer, inner) = GraphCacheSlot.with { outer in
        GraphCacheSlot.with { inner in (ObjectIdentifier(outer.cache), ObjectIdentifier(inner.cache)) }
      }
      #expect(outer != inner)
    }
  }
}
