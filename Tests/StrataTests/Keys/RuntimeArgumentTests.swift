import Strata
import Testing

/// Runtime arguments: their types are part of the key; the values are passed to the factory.
@Suite struct RuntimeArgumentTests {
  @Test func runtimeArgumentOfArityOne() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, name: String) in Greeting(text: "Hello, \(name)") }
    }
    #expect(try container.resolve(Greeting.self, arguments: "Ada") == Greeting(text: "Hello, Ada"))
    #expect(try container.resolve(Greeting.self, arguments: "Bob") == Greeting(text: "Hello, Bob"))
  }

  @Test func runtimeArgumentsOfArityTwo() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, name: String, times: Int) in
        Greeting(text: Array(repeating: name, count: times).joined(separator: " "))
      }
    }
    #expect(try container.resolve(Greeting.self, arguments: "Ada", 3) == Greeting(text: "Ada Ada Ada"))
  }

  @Test func runtimeArgumentsOfArityThree() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, name: String, times: Int, excited: Bool) in
        Greeting(text: String(repeating: name, count: times) + (excited ? "!" : "."))
      }
    }
    #expect(try container.resolve(Greeting.self, arguments: "Ha", 2, true) == Greeting(text: "HaHa!"))
    #expect(try container.resolve(Greeting.self, arguments: "Ha", 1, false) == Greeting(text: "Ha."))
  }

  @Test func argumentTypesArePartOfTheKey() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { _ in Greeting(text: "none") }
      registry.register(Greeting.self) { (_, name: String) in Greeting(text: "one: \(name)") }
      registry.register(Greeting.self) { (_, number: Int) in Greeting(text: "int: \(number)") }
      registry.register(Greeting.self) { (_, name: String, number: Int) in
        Greeting(text: "two: \(name) \(number)")
      }
    }

    #expect(try container.resolve(Greeting.self) == Greeting(text: "none"))
    #expect(try container.resolve(Greeting.self, arguments: "a") == Greeting(text: "one: a"))
    #expect(try container.resolve(Greeting.self, arguments: 7) == Greeting(text: "int: 7"))
    #expect(try container.resolve(Greeting.self, arguments: "a", 7) == Greeting(text: "two: a 7"))
  }

  @Test func namedRegistrationWithRuntimeArguments() throws {
    let container = try Container { registry in
      registry.register(Greeting.self, name: DatabaseRole.primary) { (_, name: String) in
        Greeting(text: "primary \(name)")
      }
      registry.register(Greeting.self, name: DatabaseRole.replica) { (_, name: String) in
        Greeting(text: "replica \(name)")
      }
    }
    #expect(
      try container.resolve(Greeting.self, name: DatabaseRole.replica, arguments: "x")
        == Greeting(text: "replica x"))
    #expect(
      try container.resolve(Greeting.self, name: DatabaseRole.primary, arguments: "y")
        == Greeting(text: "primary y"))
  }

  @Test func wrongArgumentTypesAreNotRegisteredWithAHintNamingBothLists() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, name: String, times: Int) in Greeting(text: "\(name)\(times)") }
    }

    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Greeting.self, arguments: "Ada")
    }

    #expect(error.code == .notRegistered)
    #expect(ObjectIdentifier(error.key.serviceType) == ObjectIdentifier(Greeting.self))
    #expect(ObjectIdentifier(error.key.argumentTypes) == ObjectIdentifier(String.self))
    let hint = try #require(error.hint)
    #expect(hint.contains("(String, Int)"))
    #expect(hint.contains("(String)"))
  }

  @Test func resolvingWithoutArgumentsAServiceThatNeedsThemHintsAtTheArguments() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, name: String, times: Int) in Greeting(text: "\(name)\(times)") }
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(Greeting.self) }

    #expect(error.code == .notRegistered)
    #expect(!error.key.hasArguments)
    #expect(error.hint?.contains("(String, Int)") == true)
  }
}
