import Strata
import Testing

/// Not `Sendable` on purpose: the registrations below are about such a type.
private final class Notebook {
  var pages: [String] = []
  let id: Int

  init(id: Int) { self.id = id }
  init(clock: SendableClock) { self.id = clock.now }
}

private final class SendableClock: Sendable {
  let now = 7
  init() {}
}

/// A service that is not `Sendable` takes an `UnsharedLifetime`; each one behaves exactly as the
/// `Lifetime` it stands for (the compile-time side is checked in Tests/CompileFailures).
@Suite struct SendableLifetimeTests {
  @Test func anUnsharedLifetimeStandsForItsLifetime() {
    #expect(UnsharedLifetime.transient.lifetime == .transient)
    #expect(UnsharedLifetime.graph.lifetime == .graph)
    #expect(UnsharedLifetime.unchecked(.singleton).lifetime == .singleton)
    #expect(UnsharedLifetime.unchecked(.eagerSingleton).lifetime == .eagerSingleton)
    #expect(UnsharedLifetime.unchecked(.weak).lifetime == .weak)
    #expect(UnsharedLifetime.unchecked(.scoped).lifetime == .scoped)
    #expect(UnsharedLifetime.unchecked(.scoped(.request)).lifetime == .scoped(.request))
    #expect(UnsharedLifetime.unchecked(.scoped(.request)).description == "scoped(.request)")
  }

  @Test func aServiceThatIsNotSendableIsTransientByDefault() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Notebook.self) { _ in Notebook(id: runs.increment()) }
    }

    let first = try container.resolve(Notebook.self)
    let second = try container.resolve(Notebook.self)

    #expect(first !== second)
    #expect(container.registrations.map(\.lifetime) == [.transient])
  }

  @Test func everyRegistrationFormKeepsTheLifetimeItWasGiven() throws {
    let log = try Container { registry in
      registry.register(SendableClock.self, lifetime: .singleton) { _ in SendableClock() }
      registry.register(Notebook.self, name: "graph", lifetime: .graph) { _ in Notebook(id: 0) }
      registry.register(Notebook.self, name: "singleton", lifetime: .unchecked(.singleton)) { _ in
        Notebook(id: 1)
      }
      registry.register(
        Notebook.self, name: "wired", lifetime: .unchecked(.scoped(.request)), Notebook.init(clock:))
      registry.register(
        Notebook.self, name: "declared", lifetime: .unchecked(.weak), dependsOn: []
      ) { _ in Notebook(id: 2) }
      registry.register(Notebook.self, name: "argument", lifetime: .graph) { (_, id: Int) in Notebook(id: id)
      }
    }

    #expect(
      log.registrations.map(\.lifetime) == [
        .singleton, .graph, .singleton, .scoped(.request), .weak, .graph,
      ])
  }

  @Test func anUncheckedSingletonIsOneInstance() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Notebook.self, lifetime: .unchecked(.singleton)) { _ in
        Notebook(id: runs.increment())
      }
    }

    let first = try container.resolve(Notebook.self)
    first.pages.append("one thread only in this test")

    #expect(try container.resolve(Notebook.self) === first)
    #expect(runs.value == 1)
  }

  @Test func anUncheckedScopedInstanceBelongsToItsScope() throws {
    let container = try Container { registry in
      registry.register(SendableClock.self, SendableClock.init)
      registry.register(Notebook.self, lifetime: .unchecked(.scoped(.request)), Notebook.init(clock:))
    }
    let one = try container.makeScope(.request)
    let two = try container.makeScope(.request)
    defer {
      try? one.close()
      try? two.close()
    }

    let first = try one.resolve(Notebook.self)

    #expect(first.id == 7)
    #expect(try one.resolve(Notebook.self) === first)
    #expect(try two.resolve(Notebook.self) !== first)
  }

  @Test func anUncheckedInstanceIsReturnedAsItIs() throws {
    let notebook = Notebook(id: 42)
    let container = try Container { registry in
      registry.register(uncheckedInstance: notebook)
      registry.register(Notebook.self, name: "named", uncheckedInstance: Notebook(id: 43))
    }

    #expect(try container.resolve(Notebook.self) === notebook)
    #expect(try container.resolve(Notebook.self, name: "named").id == 43)
    #expect(container.registrations.map(\.lifetime) == [.singleton, .singleton])
  }

  @Test func aLifetimeHeldInAVariableWorksForASendableService() throws {
    let lifetime: Lifetime = .singleton
    let container = try Container { registry in
      registry.register(SendableClock.self, lifetime: lifetime) { _ in SendableClock() }
    }

    #expect(try container.resolve(SendableClock.self) === (try container.resolve(SendableClock.self)))
  }
}
