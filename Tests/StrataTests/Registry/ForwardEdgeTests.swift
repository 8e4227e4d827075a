import Strata
import Testing

// Forwards share their target's lifetime on every route: per scope, per graph, under the lifetime
// rules, and in `resolveAll`.

private protocol EdgeShape: Sendable {}
private final class EdgeSquare: EdgeShape {}
private class EdgeBase: @unchecked Sendable { init() {} }  // no state
private final class EdgeDerived: EdgeBase, @unchecked Sendable {}

private final class EdgeHolder: Sendable {
  let square: EdgeSquare
  let shape: any EdgeShape
  init(square: EdgeSquare, shape: any EdgeShape) {
    self.square = square
    self.shape = shape
  }
}

private final class EdgeSingleton: Sendable {
  let shape: any EdgeShape
  init(shape: any EdgeShape) { self.shape = shape }
}

@Suite struct ForwardEdgeTests {
  @Test func aForwardToASuperclassIsTheSameSingleton() throws {
    let container = try Container { registry in
      registry.register(EdgeDerived.self, lifetime: .singleton) { _ in EdgeDerived() }
        .forwarding(to: EdgeBase.self)
    }
    #expect(try container.resolve(EdgeBase.self) === (try container.resolve(EdgeDerived.self)))
  }

  @Test(arguments: [Lifetime.scoped, .scoped(.request)])
  func aScopedForwardIsTheResolvingScopesInstance(lifetime: Lifetime) throws {
    let container = try Container { registry in
      registry.register(EdgeSquare.self, lifetime: lifetime) { _ in EdgeSquare() }
        .forwarding(to: (any EdgeShape).self)
    }
    let first = try container.makeScope(.request)
    let second = try container.makeScope(.request)
    #expect(try first.resolve((any EdgeShape).self) as? EdgeSquare === (try first.resolve(EdgeSquare.self)))
    #expect(try second.resolve((any EdgeShape).self) as? EdgeSquare === (try second.resolve(EdgeSquare.self)))
    #expect(try first.resolve(EdgeSquare.self) !== (try second.resolve(EdgeSquare.self)))
  }

  @Test func aScopedDisposableReachedThroughAForwardIsDisposedOnce() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("r") }
        .forwarding(to: (any Disposable).self)
    }
    let request = try container.makeScope(.request)
    let direct = try request.resolve(TrackedResource.self)
    _ = try request.resolve((any Disposable).self)
    try request.close()
    #expect(direct.disposeCount == 1)
  }

  @Test func aGraphForwardIsTheGraphInstanceOfTheResolve() throws {
    let container = try Container { registry in
      registry.register(EdgeSquare.self, lifetime: .graph) { _ in EdgeSquare() }
        .forwarding(to: (any EdgeShape).self)
      registry.register(EdgeHolder.self, EdgeHolder.init)
    }
    let first = try container.resolve(EdgeHolder.self)
    let second = try container.resolve(EdgeHolder.self)
    #expect(first.square === (first.shape as? EdgeSquare))
    #expect(first.square !== second.square)
  }

  @Test(arguments: [Lifetime.scoped, .scoped(.request)])
  func aSingletonReachingAScopedServiceThroughAForwardIsCaptive(lifetime: Lifetime) throws {
    let container = try Container { registry in
      registry.register(EdgeSquare.self, lifetime: lifetime) { _ in EdgeSquare() }
        .forwarding(to: (any EdgeShape).self)
      registry.register(EdgeSingleton.self, lifetime: .singleton, EdgeSingleton.init)
    }
    let request = try container.makeScope(.request)
    let error = resolutionError { _ = try request.resolve(EdgeSingleton.self) }
    #expect(error?.code == .captiveDependency)
  }

  @Test func resolveAllListsForwardsOfEveryScopeRootFirstAndResolveGivesTheLast() throws {
    let container = try Container { registry in
      registry.register(EdgeSquare.self) { _ in EdgeSquare() }.forwarding(to: AnyObject.self)
    }
    let child = try container.makeScope(.request) { registry in
      registry.register(EdgeDerived.self) { _ in EdgeDerived() }.forwarding(to: AnyObject.self)
    }
    let all = try child.resolveAll(AnyObject.self)
    #expect(all.count == 2)
    #expect(all.first is EdgeSquare)
    #expect(all.last is EdgeDerived)
    #expect(try child.resolve(AnyObject.self) is EdgeDerived)
    #expect(try container.resolveAll(AnyObject.self).count == 1)
  }
}
