import Strata
import Testing

@Suite struct LifetimeTests {
  // MARK: transient

  @Test func transientMakesANewInstanceEveryTime() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: runs.increment()) }
    }

    let first = try container.resolve(Widget.self)
    let second = try container.resolve(Widget.self)

    #expect(first !== second)
    #expect([first.id, second.id] == [1, 2])
    #expect(runs.value == 2)
  }

  // MARK: singleton

  @Test func singletonIsSharedByEveryServiceThatDependsOnIt() throws {
    let container = try Container { registry in
      registry.register((any Database).self, lifetime: .singleton, InMemoryDatabase.init)
      registry.register((any UserRepository).self, UserRepositoryImpl.init)
    }

    let first = try container.resolve((any UserRepository).self)
    let second = try container.resolve((any UserRepository).self)

    #expect(first !== second)
    #expect(first.database === second.database)
    #expect(first.database === (try container.resolve((any Database).self)))
  }

  @Test func singletonIsPerContainer() throws {
    func makeContainer() throws -> Container {
      try Container { registry in
        registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: 0) }
      }
    }
    let one = try makeContainer()
    let other = try makeContainer()
    #expect(try one.resolve(Widget.self) !== (try other.resolve(Widget.self)))
  }

  @Test func singletonWhoseFactoryFailedIsMadeAgainOnTheNextResolve() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in
        let run = runs.increment()
        if run == 1 { throw FixtureError(code: 1) }
        return Widget(id: run)
      }
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(Widget.self) }
    #expect(error.code == .factoryFailed)

    let widget = try container.resolve(Widget.self)
    #expect(widget.id == 2)
    #expect(try container.resolve(Widget.self) === widget)
    #expect(runs.value == 2)
  }

  // MARK: eagerSingleton

  @Test func eagerSingletonIsMadeDuringContainerInit() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .eagerSingleton) { _ in Widget(id: runs.increment()) }
    }
    #expect(runs.value == 1, "made before any resolve")

    let first = try container.resolve(Widget.self)
    let second = try container.resolve(Widget.self)

    #expect(first.id == 1)
    #expect(first === second)
    #expect(runs.value == 1)
  }

  @Test func eagerSingletonAddedLaterIsMadeWhenItsBatchIsRegistered() throws {
    let runs = Counter()
    let container = Container()
    try container.register { registry in
      registry.register(Widget.self, lifetime: .eagerSingleton) { _ in Widget(id: runs.increment()) }
    }
    #expect(runs.value == 1)
    #expect(try container.resolve(Widget.self).id == 1)
    #expect(runs.value == 1)
  }

  @Test func failingEagerSingletonMakesContainerInitThrow() throws {
    let error = try #require(throws: ResolutionError.self) {
      _ = try Container { registry in
        registry.register(Widget.self) { _ in Widget(id: 0) }
        registry.register(Widget.self, name: "eager", lifetime: .eagerSingleton) { _ in
          throw FixtureError(code: 7)
        }
      }
    }

    #expect(error.code == .factoryFailed)
    #expect(error.key.nameDescription == "\"eager\"")
    #expect(error.underlying as? FixtureError == FixtureError(code: 7))
  }

  @Test func failingEagerSingletonInALaterBatchIsMadeAgainOnFirstUse() throws {
    let runs = Counter()
    let container = Container()
    let error = resolutionError {
      try container.register { registry in
        registry.register(Widget.self, lifetime: .eagerSingleton) { _ in
          let run = runs.increment()
          if run == 1 { throw FixtureError(code: 1) }
          return Widget(id: run)
        }
      }
    }
    #expect(error?.code == .factoryFailed)

    // Documented: the batch is published, and the singleton is made again on first use.
    #expect(try container.resolve(Widget.self).id == 2)
    #expect(runs.value == 2)
  }

  // MARK: weak

  @Test func weakIsSharedWhileHeldAndMadeAgainAfterRelease() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .weak) { _ in Widget(id: runs.increment()) }
    }
    weak var released: Widget?

    do {
      let first = try container.resolve(Widget.self)
      let second = try container.resolve(Widget.self)
      #expect(first === second)
      #expect(runs.value == 1)
      released = first
      #expect(released != nil)
    }

    #expect(released == nil, "the container must not keep a weak instance alive")
    let third = try container.resolve(Widget.self)
    #expect(third.id == 2)
    #expect(runs.value == 2)
    #expect(try container.resolve(Widget.self) === third)
    #expect(runs.value == 2)
  }

  // MARK: graph

  @Test func graphIsSharedWithinOneResolveAndNotAcrossResolves() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(GraphShared.self, lifetime: .graph) { _ in GraphShared(id: runs.increment()) }
      registry.register(GraphLeft.self, GraphLeft.init)
      registry.register(GraphRight.self, GraphRight.init)
      registry.register(GraphRoot.self, GraphRoot.init)
    }

    let first = try container.resolve(GraphRoot.self)
    #expect(first.left.shared === first.right.shared)
    #expect(runs.value == 1)

    let second = try container.resolve(GraphRoot.self)
    #expect(second.left.shared === second.right.shared)
    #expect(second.left.shared !== first.left.shared)
    #expect(runs.value == 2)
  }

  @Test func graphResolvedDirectlyIsNewForEachTopLevelResolve() throws {
    let container = try Container { registry in
      registry.register(GraphShared.self, lifetime: .graph) { _ in GraphShared(id: 0) }
    }
    #expect(try container.resolve(GraphShared.self) !== (try container.resolve(GraphShared.self)))
  }

  /// One resolve asking for a graph service with two sets of arguments gets an instance made from
  /// each (it got the first one's twice), and with the same arguments twice, two instances.
  @Test func aGraphServiceWithArgumentsIsMadeForEachSetOfArguments() throws {
    let container = try Container { registry in
      registry.register(GraphShared.self, lifetime: .graph) { (_, id: Int) in GraphShared(id: id) }
      registry.register(GraphPair.self) { resolver in
        GraphPair(
          first: try resolver.resolve(GraphShared.self, arguments: 1),
          second: try resolver.resolve(GraphShared.self, arguments: 2),
          again: try resolver.resolve(GraphShared.self, arguments: 2))
      }
    }
    let pair = try container.resolve(GraphPair.self)
    #expect(pair.first.id == 1)
    #expect(pair.second.id == 2)
    #expect(pair.again.id == 2)
    #expect(pair.second !== pair.again)
  }

  // MARK: descriptions

  @Test func lifetimeDescriptions() {
    #expect(Lifetime.transient.description == "transient")
    #expect(Lifetime.singleton.description == "singleton")
    #expect(Lifetime.eagerSingleton.description == "eagerSingleton")
    #expect(Lifetime.weak.description == "weak")
    #expect(Lifetime.graph.description == "graph")
    #expect(Lifetime.scoped.description == "scoped")
    #expect(Lifetime.scoped(.request).description == "scoped(.request)")
    #expect(Lifetime.scoped(.request).scopeTag == .request)
  }
}

// MARK: - Fixtures for the graph lifetime

final class GraphShared: Sendable {
  let id: Int

  init(id: Int) {
    self.id = id
  }
}

final class GraphLeft: Sendable {
  let shared: GraphShared

  init(shared: GraphShared) {
    self.shared = shared
  }
}

final class GraphRight: Sendable {
  let shared: GraphShared

  init(shared: GraphShared) {
    self.shared = shared
  }
}

final class GraphRoot: Sendable {
  let left: GraphLeft
  let right: GraphRight

  init(left: GraphLeft, right: GraphRight) {
    self.left = left
    self.right = right
  }
}

final class GraphPair: Sendable {
  let first: GraphShared
  let second: GraphShared
  let again: GraphShared
  init(first: GraphShared, second: GraphShared, again: GraphShared) {
    self.first = first
    self.second = second
    self.again = again
  }
}
