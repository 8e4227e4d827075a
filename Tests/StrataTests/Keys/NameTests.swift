import Strata
import Testing

/// Names: a registration's name is part of its key, compared by type and value.
@Suite struct NameTests {
  @Test func enumNamesSelectTheirOwnRegistration() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: DatabaseRole.primary) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: DatabaseRole.replica) { _ in Widget(id: 2) }
    }

    #expect(try container.resolve(Widget.self, name: DatabaseRole.primary).id == 1)
    #expect(try container.resolve(Widget.self, name: DatabaseRole.replica).id == 2)
    let error = try #require(throws: ResolutionError.self) { try container.resolve(Widget.self) }
    #expect(error.code == .notRegistered)
  }

  @Test func stringNamesSelectTheirOwnRegistration() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: "audit") { _ in Widget(id: 1) }
      registry.register(Widget.self, name: "metrics") { _ in Widget(id: 2) }
    }

    #expect(try container.resolve(Widget.self, name: "audit").id == 1)
    #expect(try container.resolve(Widget.self, name: "metrics").id == 2)
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: "missing")
    }
    #expect(error.code == .notRegistered)
    #expect(error.key.isNamed)
    #expect(error.key.nameDescription == "\"missing\"")
  }

  @Test func equalLookingNamesOfDifferentTypesDoNotCollide() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: DatabaseRole.primary) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: CacheRole.primary) { _ in Widget(id: 2) }
      registry.register(Widget.self, name: "primary") { _ in Widget(id: 3) }
      registry.register(Widget.self, name: 1) { _ in Widget(id: 4) }
      registry.register(Widget.self, name: UInt(1)) { _ in Widget(id: 5) }
    }

    #expect(try container.resolve(Widget.self, name: DatabaseRole.primary).id == 1)
    #expect(try container.resolve(Widget.self, name: CacheRole.primary).id == 2)
    #expect(try container.resolve(Widget.self, name: "primary").id == 3)
    #expect(try container.resolve(Widget.self, name: 1).id == 4)
    #expect(try container.resolve(Widget.self, name: UInt(1)).id == 5)
    #expect(try container.resolveAll(Widget.self, name: DatabaseRole.primary).map(\.id) == [1])
    #expect(try container.resolveAll(Widget.self, name: CacheRole.primary).map(\.id) == [2])
  }

  @Test func nameOfAnotherTypeDoesNotMatch() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: DatabaseRole.primary) { _ in Widget(id: 1) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: CacheRole.primary)
    }
    #expect(error.code == .notRegistered)
  }
}
