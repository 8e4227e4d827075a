import Strata
import Testing

@Suite struct AutoWiringTests {
  private func makeApplicationContainer() throws -> Container {
    try Container { registry in
      registry.register((any Database).self, lifetime: .singleton, InMemoryDatabase.init)
      registry.register((any UserRepository).self, UserRepositoryImpl.init)
      registry.register((any EventLogger).self, ConsoleLogger.init)
      registry.register((any TimeSource).self, FixedTimeSource.init)
      registry.register((any UserService).self, lifetime: .singleton, UserServiceImpl.init)
      registry.register(App.self, App.init)
    }
  }

  // MARK: One initializer of each arity

  @Test func autoWiredInitializerWithoutParameters() throws {
    let container = try Container { registry in
      registry.register((any Database).self, InMemoryDatabase.init)
    }

    #expect(try container.resolve((any Database).self) is InMemoryDatabase)
    let registration = try #require(descriptor(of: (any Database).self, in: container.registrations))
    #expect(registration.dependencies?.isEmpty == true)
  }

  @Test func autoWiredInitializerWithOneParameter() throws {
    let container = try Container { registry in
      registry.register((any Database).self, InMemoryDatabase.init)
      registry.register((any UserRepository).self, UserRepositoryImpl.init)
    }

    let repository = try container.resolve((any UserRepository).self)
    #expect(repository is UserRepositoryImpl)
    #expect(repository.database is InMemoryDatabase)

    let registration = try #require(
      descriptor(of: (any UserRepository).self, in: container.registrations))
    let dependencies = try #require(registration.dependencies)
    #expect(identifiers(dependencies) == identifiers(of: (any Database).self))
    #expect(dependencies.allSatisfy { !$0.isNamed && !$0.hasArguments })
  }

  @Test func autoWiredInitializerWithThreeParameters() throws {
    let container = try Container { registry in
      registry.register((any Database).self, InMemoryDatabase.init)
      registry.register((any UserRepository).self, UserRepositoryImpl.init)
      registry.register((any EventLogger).self, ConsoleLogger.init)
      registry.register((any TimeSource).self, FixedTimeSource.init)
      registry.register((any UserService).self, UserServiceImpl.init)
    }

    let service = try container.resolve((any UserService).self)
    #expect(service is UserServiceImpl)
    #expect(service.repository is UserRepositoryImpl)
    #expect(service.logger is ConsoleLogger)
    #expect(service.timeSource is FixedTimeSource)

    let registration = try #require(descriptor(of: (any UserService).self, in: container.registrations))
    let dependencies = try #require(registration.dependencies)
    #expect(
      identifiers(dependencies)
        == identifiers(
          of: (any UserRepository).self, (any EventLogger).self, (any TimeSource).self))
  }

  // MARK: A whole graph

  @Test func wholeGraphIsBuiltFromInitializers() throws {
    let container = try makeApplicationContainer()

    let app = try container.resolve(App.self)

    #expect(app.userService is UserServiceImpl)
    #expect(app.userService.repository is UserRepositoryImpl)
    #expect(app.userService.repository.database === (try container.resolve((any Database).self)))
    #expect(app.userService === (try container.resolve(App.self).userService))
  }

  @Test func everyAutoWiredRegistrationRecordsItsParameterTypes() throws {
    let container = try makeApplicationContainer()
    let registrations = container.registrations

    #expect(registrations.count == 6)
    #expect(
      identifiers(registrations.map(\.key))
        == identifiers(
          of: (any Database).self, (any UserRepository).self, (any EventLogger).self,
          (any TimeSource).self, (any UserService).self, App.self))

    let expected: [(Any.Type, [Any.Type])] = [
      ((any Database).self, []),
      ((any UserRepository).self, [(any Database).self]),
      ((any EventLogger).self, []),
      ((any TimeSource).self, []),
      ((any UserService).self, [(any UserRepository).self, (any EventLogger).self, (any TimeSource).self]),
      (App.self, [(any UserService).self]),
    ]
    for (service, parameters) in expected {
      let registration = try #require(descriptor(of: service, in: registrations))
      #expect(registration.dependencies.map(identifiers) == parameters.map { ObjectIdentifier($0) })
    }
  }

  @Test func autoWiredRegistrationKeepsItsLifetimeAndName() throws {
    let container = try Container { registry in
      registry.register(
        (any Database).self, name: DatabaseRole.replica, lifetime: .singleton, InMemoryDatabase.init)
    }

    let first = try container.resolve((any Database).self, name: DatabaseRole.replica)
    #expect(first === (try container.resolve((any Database).self, name: DatabaseRole.replica)))
    let registration = try #require(container.registrations.first)
    #expect(registration.lifetime == .singleton)
    #expect(registration.key.nameDescription == ".replica")
  }

  @Test func throwingInitializerFailsTheResolve() throws {
    let container = try Container { registry in
      registry.register(Validated.self, Validated.init)
      registry.register(Int.self) { _ in -1 }
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve(Validated.self) }
    #expect(error.code == .factoryFailed)
    #expect(error.underlying as? FixtureError == FixtureError(code: -1))
  }

  @Test func missingParameterIsReportedWithThePath() throws {
    let container = try Container { registry in
      registry.register((any UserService).self, UserServiceImpl.init)
      registry.register((any UserRepository).self, UserRepositoryImpl.init)
      registry.register((any Database).self, InMemoryDatabase.init)
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve((any UserService).self) }
    #expect(error.code == .notRegistered)
    #expect(isPlainKey(error.key, of: (any EventLogger).self))
    #expect(identifiers(error.path) == identifiers(of: (any UserService).self, (any EventLogger).self))
  }

  @Test func lazyAndProviderParametersNeedNoRegistration() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: runs.increment()) }
      registry.register(WidgetConsumer.self, WidgetConsumer.init)
    }

    let consumer = try container.resolve(WidgetConsumer.self)

    #expect(runs.value == 0, "neither Lazy nor Provider resolves while the consumer is built")
    #expect(!consumer.lazyWidget.isResolved)
    let lazy = try consumer.lazyWidget.value
    #expect(try consumer.lazyWidget.value === lazy)
    #expect(runs.value == 1)
    let provided = try consumer.makeWidget()
    #expect(provided !== lazy)
    #expect(try consumer.makeWidget() !== provided)
    #expect(runs.value == 3)
  }

  @Test func lazyParameterOfAMissingServiceFailsOnlyWhenRead() throws {
    let container = try Container { registry in
      registry.register(WidgetConsumer.self, WidgetConsumer.init)
    }
    let consumer = try container.resolve(WidgetConsumer.self)

    let error = try #require(throws: ResolutionError.self) { try consumer.lazyWidget.value }
    #expect(error.code == .notRegistered)
    #expect(isPlainKey(error.key, of: Widget.self))
    #expect(throws: ResolutionError.self) { try consumer.makeWidget() }
  }
}

// MARK: - Fixtures

final class WidgetConsumer: Sendable {
  let lazyWidget: Lazy<Widget>
  let makeWidget: Provider<Widget>

  init(lazyWidget: Lazy<Widget>, makeWidget: Provider<Widget>) {
    self.lazyWidget = lazyWidget
    self.makeWidget = makeWidget
  }
}

private final class Validated {
  let value: Int

  init(value: Int) throws {
    guard value >= 0 else { throw FixtureError(code: value) }
    self.value = value
  }
}
