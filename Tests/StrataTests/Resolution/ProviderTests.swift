import Strata
import Testing

@Suite struct ProviderTests {
  @Test func providerMakesANewTransientInstanceEachCall() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: runs.increment()) }
    }

    let provider = container.provider(Widget.self)
    #expect(runs.value == 0)

    let first = try provider()
    let second = try provider.get()
    let third = try provider()

    #expect(first !== second)
    #expect(second !== third)
    #expect([first.id, second.id, third.id] == [1, 2, 3])
    #expect(runs.value == 3)
  }

  @Test func providerFollowsTheRegistrationsLifetime() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: runs.increment()) }
    }
    let provider = container.provider(Widget.self)
    #expect(try provider() === (try provider()))
    #expect(try provider() === (try container.resolve(Widget.self)))
    #expect(runs.value == 1)
  }

  @Test func providerSeesRegistrationsMadeAfterItWasCreated() throws {
    let container = Container()
    let provider = container.provider(Widget.self)
    #expect(throws: ResolutionError.self) { try provider() }

    try container.register { registry in
      registry.register(Widget.self) { _ in Widget(id: 8) }
    }
    #expect(try provider().id == 8)
  }

  @Test func providerResolvedDirectlyNeedsNoRegistration() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: runs.increment()) }
    }
    let provider = try container.resolve(Provider<Widget>.self)
    #expect(runs.value == 0)
    #expect(try provider().id == 1)
    #expect(try provider().id == 2)
  }
}
