import Strata
import Testing

@Suite struct RegistrationTests {
  /// A registration keeps its lifetime's kind and tag apart and rebuilds the lifetime from them:
  /// every kind, untagged and tagged scopes, built-in and named tags read back as registered.
  @Test func everyLifetimeReadsBackAsRegistered() throws {
    let lifetimes: [Lifetime] = [
      .transient, .singleton, .eagerSingleton, .weak, .graph, .scoped, .scoped(.root), .scoped(.session),
      .scoped(.request), .scoped(ScopeTag("tenant")),
      .scoped(ScopeTag("tenant-\(UInt64.random(in: 0...(1 << 40)))")),
    ]
    let container = try Container { registry in
      for (number, lifetime) in lifetimes.enumerated() {
        registry.register(Widget.self, name: number, lifetime: lifetime) { _ in Widget(id: number) }
      }
    }
    #expect(container.registrations.map(\.lifetime) == lifetimes)
    #expect(container.registrations.map(\.lifetime.description) == lifetimes.map(\.description))
  }

  // MARK: Factories and instances

  @Test func factoryClosureReceivesAResolverForTheContainer() throws {
    let container = Container()
    let scopes = Collector<ObjectIdentifier>()
    try container.register { registry in
      registry.register((any Database).self) { _ in InMemoryDatabase() }
      registry.register((any UserRepository).self) { resolver in
        scopes.append(ObjectIdentifier(resolver.currentScope))
        return UserRepositoryImpl(database: try resolver.resolve((any Database).self))
      }
    }

    let repository = try container.resolve((any UserRepository).self)

    #expect(repository is UserRepositoryImpl)
    #expect(repository.database is InMemoryDatabase)
    #expect(scopes.elements == [ObjectIdentifier(container)])
  }

  @Test func closureFactoryRecordsNoStaticDependencies() throws {
    let container = try Container { registry in
      registry.register((any Database).self) { _ in InMemoryDatabase() }
    }
    let registration = try #require(descriptor(of: (any Database).self, in: container.registrations))
    #expect(registration.dependencies == nil)
    #expect(registration.lifetime == .transient)
  }

  @Test func readyInstanceIsReturnedEveryTime() throws {
    let database = InMemoryDatabase()
    let container = try Container { registry in
      registry.register((any Database).self, instance: database)
    }

    #expect(try container.resolve((any Database).self) === database)
    #expect(try container.resolve((any Database).self) === database)
    let registration = try #require(descriptor(of: (any Database).self, in: container.registrations))
    #expect(registration.lifetime == .singleton)
  }

  @Test func readyInstanceTypeIsInferredFromTheInstance() throws {
    let container = try Container { registry in
      registry.register(instance: Greeting(text: "hello"))
    }
    #expect(try container.resolve(Greeting.self) == Greeting(text: "hello"))
  }

  @Test func descriptorDescribesKeyLifetimeAndSite() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register(Widget.self, name: CacheRole.primary, lifetime: .singleton) { _ in Widget(id: 1) }
    }
    let registration = try #require(container.registrations.first)
    #expect(registration.registeredAt.fileID.hasSuffix("RegistrationTests.swift"))
    #expect(registration.registeredAt.line == line)
    #expect(registration.key.nameDescription == ".primary")
    #expect(
      registration.description
        == "Widget named .primary (singleton) at \(registration.registeredAt.fileID):\(line)")
  }

  // MARK: Activation hooks

  @Test func activationHooksRunInOrderForEveryNewInstance() throws {
    let events = Collector<String>()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
        .onActivated { _, widget in events.append("first \(widget.id)") }
        .onActivated { _, widget in events.append("second \(widget.id)") }
    }

    _ = try container.resolve(Widget.self)
    _ = try container.resolve(Widget.self)

    #expect(events.elements == ["first 1", "second 1", "first 1", "second 1"])
  }

  @Test func activationHookRunsOnceForASingleton() throws {
    let events = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: 1) }
        .onActivated { _, _ in events.increment() }
    }
    _ = try container.resolve(Widget.self)
    _ = try container.resolve(Widget.self)
    #expect(events.value == 1)
  }

  @Test func activationHookCanResolveDependencies() throws {
    let seen = Collector<Int>()
    let container = try Container { registry in
      registry.register(Int.self) { _ in 7 }
      registry.register(Widget.self) { _ in Widget(id: 1) }
        .onActivated { resolver, _ in seen.append(try resolver.resolve(Int.self)) }
    }
    _ = try container.resolve(Widget.self)
    #expect(seen.elements == [7])
  }

  @Test func singletonWhoseActivationFailedIsDiscardedAndMadeAgain() throws {
    let runs = Counter()
    let activations = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: runs.increment()) }
        .onActivated { _, _ in
          if activations.increment() == 1 { throw FixtureError(code: 1) }
        }
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(Widget.self) }
    #expect(error.code == .activationFailed)

    let widget = try container.resolve(Widget.self)
    #expect(widget.id == 2, "the instance whose hook failed is not handed out")
    #expect(try container.resolve(Widget.self) === widget)
    #expect(runs.value == 2)
  }

  // MARK: Several registrations per key

  @Test func resolveReturnsTheLastAndResolveAllReturnsAllInOrder() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self) { _ in Widget(id: 2) }
      registry.register(Widget.self) { _ in Widget(id: 3) }
    }

    #expect(try container.resolve(Widget.self).id == 3)
    #expect(try container.resolveAll(Widget.self).map(\.id) == [1, 2, 3])
  }

  @Test func registrationsFromLaterBatchesComeLast() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self) { _ in Widget(id: 2) }
    }
    try container.register { registry in
      registry.register(Widget.self) { _ in Widget(id: 3) }
    }

    #expect(try container.resolve(Widget.self).id == 3)
    #expect(try container.resolveAll(Widget.self).map(\.id) == [1, 2, 3])
    #expect(container.registrations.count == 3)
  }

  @Test func namedResolveAllReturnsOnlyThatName() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: DatabaseRole.primary) { _ in Widget(id: 1) }
      registry.register(Widget.self) { _ in Widget(id: 2) }
      registry.register(Widget.self, name: DatabaseRole.replica) { _ in Widget(id: 3) }
      registry.register(Widget.self, name: DatabaseRole.primary) { _ in Widget(id: 4) }
    }

    #expect(try container.resolveAll(Widget.self, name: DatabaseRole.primary).map(\.id) == [1, 4])
    #expect(try container.resolveAll(Widget.self, name: DatabaseRole.replica).map(\.id) == [3])
    #expect(try container.resolveAll(Widget.self).map(\.id) == [2])
    #expect(try container.resolve(Widget.self, name: DatabaseRole.primary).id == 4)
    #expect(try container.resolveAll(Widget.self, name: CacheRole.primary).isEmpty)
  }

  // MARK: Batches

  @Test func thousandServicesInOneBatchAreAllResolvable() throws {
    let types = markerTypes(count: 1_000)
    #expect(Set(types.map { ObjectIdentifier($0) }).count == 1_000)

    let container = try Container { registry in
      for (index, type) in types.enumerated() { type.register(in: registry, index: index) }
    }

    #expect(container.registrations.count == 1_000)
    let wrong = types.indices.filter { index in (try? types[index].resolvedIndex(in: container)) != index }
    #expect(wrong.isEmpty, "unresolvable or wrong services at indices \(wrong.prefix(10))")
  }

  @Test func thousandNamedRegistrationsOfOneTypeInOneBatch() throws {
    let container = try Container { registry in
      for index in 0..<1_000 {
        registry.register(Widget.self, name: index) { _ in Widget(id: index) }
      }
    }

    #expect(container.registrations.count == 1_000)
    // `index` is annotated: left to inference, it would become `Int?` as the name.
    let wrong = (0..<1_000).filter { (index: Int) in
      (try? container.resolve(Widget.self, name: index).id) != index
    }
    #expect(wrong.isEmpty, "unresolvable or wrong names \(wrong.prefix(10))")
  }

  @Test(.timeLimit(.minutes(1)))
  func registeringFromInsideAFactoryDoesNotDeadlock() async throws {
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { resolver in
        try resolver.currentScope.register { registry in
          registry.register(Greeting.self) { _ in Greeting(text: "registered late") }
        }
        // What the factory just registered is visible to it at once.
        let greeting = try resolver.resolve(Greeting.self)
        return Widget(id: greeting.text.count)
      }
    }

    let outcome = await withDeadline {
      Result { (try container.resolve(Widget.self).id, try container.resolve(Greeting.self)) }
    }

    let result = try #require(outcome, "resolving deadlocked")
    let (id, greeting) = try result.get()
    #expect(id == "registered late".count)
    #expect(greeting == Greeting(text: "registered late"))
  }

  @Test func eagerSingletonMayRegisterFromItsFactoryDuringContainerInit() async throws {
    let outcome = await withDeadline { () -> String? in
      let container = try? Container { registry in
        registry.register(Widget.self, lifetime: .eagerSingleton) { resolver in
          try resolver.currentScope.register { registry in
            registry.register(Greeting.self) { _ in Greeting(text: "from eager") }
          }
          return Widget(id: 1)
        }
      }
      return try? container?.resolve(Greeting.self).text
    }
    let text = try #require(outcome, "container init deadlocked")
    #expect(text == "from eager")
  }

  // MARK: Invalid registrations

  @Test(arguments: [Lifetime.singleton, .eagerSingleton, .weak, .scoped])
  func sharedLifetimeWithRuntimeArgumentsIsInvalidAndPublishesNothing(lifetime: Lifetime) throws {
    let container = Container()
    // Registered outside `#require`: inside a macro argument, `#line` would be the macro's line.
    let line = #line + 4
    let thrown = resolutionError {
      try container.register { registry in
        registry.register(Widget.self) { _ in Widget(id: 1) }
        registry.register(Greeting.self, lifetime: lifetime) { (_, name: String) in Greeting(text: name) }
        registry.register((any Database).self) { _ in InMemoryDatabase() }
      }
    }
    let error = try #require(thrown)

    #expect(error.code == .invalidRegistration)
    #expect(ObjectIdentifier(error.key.serviceType) == ObjectIdentifier(Greeting.self))
    #expect(error.registeredAt?.fileID.hasSuffix("RegistrationTests.swift") == true)
    #expect(error.registeredAt?.line == line)
    #expect(container.registrations.isEmpty)
    let widgetError = try #require(throws: ResolutionError.self) { try container.resolve(Widget.self) }
    #expect(widgetError.code == .notRegistered)
    #expect(throws: ResolutionError.self) { try container.resolve((any Database).self) }
  }

  @Test func invalidRegistrationMakesContainerInitThrow() throws {
    let error = try #require(throws: ResolutionError.self) {
      _ = try Container { registry in
        registry.register(Widget.self, lifetime: .singleton) { (_, id: Int) in Widget(id: id) }
      }
    }
    #expect(error.code == .invalidRegistration)
  }

  @Test func invalidBatchLeavesEarlierBatchesIntact() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
    }
    #expect(throws: ResolutionError.self) {
      try container.register { registry in
        registry.register(Widget.self) { _ in Widget(id: 2) }
        registry.register(Greeting.self, lifetime: .weak) { (_, name: String) in Greeting(text: name) }
      }
    }
    #expect(try container.resolve(Widget.self).id == 1)
    #expect(try container.resolveAll(Widget.self).map(\.id) == [1])
  }
}

// MARK: - A thousand distinct service types

/// A service type per combination of `Zero`/`One` wrappers: 2^10 distinct types from one generic.
private struct Marker<Tag>: Sendable {
  let index: Int
}

private enum Zero<Tag> {}
private enum One<Tag> {}

private protocol MarkerType {
  static func register(in registry: Registrar, index: Int)
  static func resolvedIndex(in container: Container) throws -> Int
}

extension Marker: MarkerType {
  static func register(in registry: Registrar, index: Int) {
    registry.register(Marker<Tag>.self) { _ in Marker(index: index) }
  }

  static func resolvedIndex(in container: Container) throws -> Int {
    try container.resolve(Marker<Tag>.self).index
  }
}

private func markerTypes(count: Int) -> [any MarkerType.Type] {
  var result: [any MarkerType.Type] = []
  func collect<Tag>(_: Tag.Type, depth: Int) {
    guard result.count < count else { return }
    if depth == 0 {
      result.append(Marker<Tag>.self)
      return
    }
    collect(Zero<Tag>.self, depth: depth - 1)
    collect(One<Tag>.self, depth: depth - 1)
  }
  collect(Void.self, depth: 10)
  return result
}
