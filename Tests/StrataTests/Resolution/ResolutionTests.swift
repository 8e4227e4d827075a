import Strata
import Testing

@Suite struct ResolutionTests {
  // MARK: resolve

  @Test func resolveFindsExactlyTheRegisteredType() throws {
    let container = try Container { registry in
      registry.register(InMemoryDatabase.self) { _ in InMemoryDatabase() }
    }

    _ = try container.resolve(InMemoryDatabase.self)
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve((any Database).self)
    }
    #expect(error.code == .notRegistered)
    #expect(isPlainKey(error.key, of: (any Database).self))
  }

  @Test func resolveInfersTheTypeFromContext() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 9) }
    }
    let widget: Widget = try container.resolve()
    #expect(widget.id == 9)
  }

  @Test func valueTypeServicesAreCopiedOut() throws {
    let container = try Container { registry in
      registry.register(Greeting.self, lifetime: .singleton) { _ in Greeting(text: "hi") }
      registry.register(Int.self) { _ in 42 }
    }
    #expect(try container.resolve(Greeting.self) == Greeting(text: "hi"))
    #expect(try container.resolve(Int.self) == 42)
  }

  // MARK: resolveIfRegistered

  @Test func resolveIfRegisteredIsNilForAnUnregisteredService() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
    }
    #expect(try container.resolveIfRegistered((any Database).self) == nil)
    #expect(try container.resolveIfRegistered(Widget.self, name: DatabaseRole.primary) == nil)
  }

  @Test func resolveIfRegisteredReturnsARegisteredService() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: DatabaseRole.replica) { _ in Widget(id: 2) }
    }
    #expect(try container.resolveIfRegistered(Widget.self)?.id == 1)
    #expect(try container.resolveIfRegistered(Widget.self, name: DatabaseRole.replica)?.id == 2)
  }

  @Test func resolveIfRegisteredThrowsWhenADependencyIsMissing() throws {
    let container = try Container { registry in
      registry.register((any UserRepository).self, UserRepositoryImpl.init)
    }

    let error = try #require(throws: ResolutionError.self) {
      try container.resolveIfRegistered((any UserRepository).self)
    }

    #expect(error.code == .notRegistered)
    #expect(isPlainKey(error.key, of: (any Database).self))
    #expect(identifiers(error.path) == identifiers(of: (any UserRepository).self, (any Database).self))
  }

  @Test func namedResolveIfRegisteredThrowsWhenItsFactoryFails() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: CacheRole.primary) { _ in throw FixtureError(code: 3) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolveIfRegistered(Widget.self, name: CacheRole.primary)
    }
    #expect(error.code == .factoryFailed)
  }

  // MARK: resolveAll

  @Test func resolveAllIsEmptyForAnUnregisteredService() throws {
    let container = Container()
    #expect(try container.resolveAll(Widget.self).isEmpty)
    #expect(try container.resolveAll(Widget.self, name: "none").isEmpty)
  }

  @Test func resolveAllGivesEachRegistrationItsOwnLifetime() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: 100 + runs.increment()) }
      registry.register(Widget.self) { _ in Widget(id: 200 + runs.increment()) }
    }

    let first = try container.resolveAll(Widget.self)
    let second = try container.resolveAll(Widget.self)

    #expect(first.count == 2)
    #expect(second.count == 2)
    #expect(first[0] === second[0], "the singleton is shared")
    #expect(first[1] !== second[1], "the transient is not")
    #expect(runs.value == 3)
  }

  @Test func resolveAllExcludesNamedAndArgumentRegistrations() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { _ in Greeting(text: "plain") }
      registry.register(Greeting.self, name: "named") { _ in Greeting(text: "named") }
      registry.register(Greeting.self) { (_, text: String) in Greeting(text: text) }
    }
    #expect(try container.resolveAll(Greeting.self) == [Greeting(text: "plain")])
  }

  @Test func resolveAllFailsIfAnyRegistrationFails() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self) { _ in throw FixtureError(code: 2) }
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolveAll(Widget.self) }
    #expect(error.code == .factoryFailed)
    #expect(error.underlying as? FixtureError == FixtureError(code: 2))
  }

  // MARK: Inside factories

  @Test func factoriesResolveNamedAndArgumentServicesThroughTheirResolver() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: DatabaseRole.replica) { _ in Widget(id: 5) }
      registry.register(Greeting.self) { (_, name: String) in Greeting(text: name) }
      registry.register(Greeting.self, name: "both") { resolver in
        let widget = try resolver.resolve(Widget.self, name: DatabaseRole.replica)
        return try resolver.resolve(Greeting.self, arguments: "widget \(widget.id)")
      }
    }
    #expect(try container.resolve(Greeting.self, name: "both") == Greeting(text: "widget 5"))
  }

  @Test func factoriesResolveAllThroughTheirResolver() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self) { _ in Widget(id: 2) }
      registry.register([Int].self) { resolver in try resolver.resolveAll(Widget.self).map(\.id) }
    }
    #expect(try container.resolve([Int].self) == [1, 2])
  }
}
