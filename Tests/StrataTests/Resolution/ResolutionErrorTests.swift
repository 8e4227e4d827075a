import Strata
import Testing

@Suite struct ResolutionErrorTests {
  // MARK: notRegistered

  @Test func missingServiceAtTopLevel() throws {
    let container = Container()

    let error = try #require(throws: ResolutionError.self) { try container.resolve((any Database).self) }

    #expect(error.code == .notRegistered)
    #expect(isPlainKey(error.key, of: (any Database).self))
    #expect(identifiers(error.path) == identifiers(of: (any Database).self))
    #expect(error.registeredAt == nil)
    #expect(error.underlying == nil)
    #expect(error.cycle == nil)
    #expect(error.message.contains("Database"))
  }

  @Test func missingServiceDeepInAChain() throws {
    let appLine = #line + 3
    let serviceLine = #line + 3
    let container = try Container { registry in
      registry.register(App.self, App.init)
      registry.register((any UserService).self) { resolver in
        _ = try resolver.resolve((any Database).self)
        return UserServiceImpl(
          repository: UserRepositoryImpl(database: InMemoryDatabase()), logger: ConsoleLogger(),
          timeSource: FixedTimeSource())
      }
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(App.self) }

    #expect(error.code == .notRegistered)
    #expect(isPlainKey(error.key, of: (any Database).self))
    #expect(
      identifiers(error.path) == identifiers(of: App.self, (any UserService).self, (any Database).self))
    let registeredAt = try #require(error.registeredAt)
    #expect(registeredAt.fileID.hasSuffix("ResolutionErrorTests.swift"))
    #expect(registeredAt.line == serviceLine, "the UserService registration asked for Database")
    #expect(registeredAt.line != appLine)
  }

  @Test func missingAutoWiredParameterPointsAtTheAutoWiredRegistration() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register((any UserRepository).self, UserRepositoryImpl.init)
    }

    let error = try #require(throws: ResolutionError.self) {
      try container.resolve((any UserRepository).self)
    }

    #expect(error.registeredAt?.fileID.hasSuffix("ResolutionErrorTests.swift") == true)
    #expect(error.registeredAt?.line == line)
    #expect(error.registeredAt?.description.hasSuffix("ResolutionErrorTests.swift:\(line)") == true)
  }

  // MARK: factoryFailed

  @Test func factoryErrorIsWrappedWithItsPath() throws {
    let failingLine = #line + 3
    let container = try Container { registry in
      registry.register(App.self, App.init)
      registry.register((any UserService).self) { _ in throw FixtureError(code: 42) }
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(App.self) }

    #expect(error.code == .factoryFailed)
    #expect(isPlainKey(error.key, of: (any UserService).self))
    let underlying = try #require(error.underlying as? FixtureError)
    #expect(underlying == FixtureError(code: 42))
    #expect(identifiers(error.path) == identifiers(of: App.self, (any UserService).self))
    #expect(error.registeredAt?.fileID.hasSuffix("ResolutionErrorTests.swift") == true)
    #expect(error.registeredAt?.line == failingLine)
    #expect(error.message.contains("FixtureError"))
  }

  @Test func nestedResolutionErrorIsNotWrappedAgain() throws {
    let container = try Container { registry in
      registry.register(App.self, App.init)
      registry.register((any UserService).self, UserServiceImpl.init)
      registry.register((any UserRepository).self) { _ in throw FixtureError(code: 1) }
      registry.register((any EventLogger).self, ConsoleLogger.init)
      registry.register((any TimeSource).self, FixedTimeSource.init)
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(App.self) }

    #expect(error.code == .factoryFailed)
    #expect(error.underlying is FixtureError, "the original error, not a ResolutionError around it")
    #expect(
      identifiers(error.path)
        == identifiers(of: App.self, (any UserService).self, (any UserRepository).self))
  }

  @Test func activationHookErrorIsReported() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
        .onActivated { _, _ in throw FixtureError(code: 5) }
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve(Widget.self) }
    #expect(error.code == .activationFailed)
    #expect(error.underlying as? FixtureError == FixtureError(code: 5))
    #expect(isPlainKey(error.key, of: Widget.self))
  }

  // MARK: Hints

  @Test func hintNamesANamedRegistrationWhenResolvedWithoutName() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: DatabaseRole.primary) { _ in Widget(id: 1) }
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve(Widget.self) }
    let hint = try #require(error.hint)
    #expect(hint.contains("a registration named `.primary` exists"))
  }

  @Test func hintNamesAStringNamedRegistration() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: "audit") { _ in Widget(id: 1) }
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve(Widget.self) }
    #expect(error.hint?.contains("\"audit\"") == true)
  }

  @Test func hintNamesTheRegisteredNameWhenResolvedWithAnother() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: DatabaseRole.primary) { _ in Widget(id: 1) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: DatabaseRole.replica)
    }
    let hint = try #require(error.hint)
    #expect(hint.contains(".primary"))
    #expect(hint.contains(".replica"))
  }

  @Test func hintPointsAtTheUnnamedRegistrationWhenResolvedWithAName() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: "primary")
    }
    #expect(error.hint?.contains("unnamed") == true)
  }

  @Test func hintSuggestsASimilarlyNamedRegisteredType() throws {
    let container = try Container { registry in
      registry.register(UserRepositoryImpl.self) { _ in UserRepositoryImpl(database: InMemoryDatabase()) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve((any UserRepository).self)
    }
    #expect(error.code == .notRegistered)
    #expect(error.hint?.contains("UserRepositoryImpl") == true)
  }

  @Test func hintForAnUnknownServiceSaysHowToRegisterIt() throws {
    let container = Container()
    let error = try #require(throws: ResolutionError.self) { try container.resolve(Widget.self) }
    #expect(error.hint?.contains("register") == true)
    #expect(error.hint?.contains("Widget") == true)
  }

  // MARK: description

  @Test func descriptionHasCodePathAndRegistrationSite() throws {
    let line = #line + 3
    let container = try Container { registry in
      registry.register(App.self, App.init)
      registry.register((any UserService).self) { resolver in
        _ = try resolver.resolve((any Database).self)
        throw FixtureError(code: 0)
      }
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(App.self) }

    #expect(error.description.contains("notRegistered"))
    #expect(error.description.contains("App → UserService → Database"))
    #expect(error.description.contains("ResolutionErrorTests.swift:\(line)"))
    #expect(error.description.contains(error.message))
    #expect(error.description.contains(try #require(error.hint)))
  }

  @Test func factoryFailureDescriptionNamesTheFailingRegistration() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register(Widget.self, name: CacheRole.replica) { _ in throw FixtureError(code: 9) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: CacheRole.replica)
    }
    #expect(error.description.contains("factoryFailed"))
    #expect(error.description.contains("ResolutionErrorTests.swift:\(line)"))
    #expect(error.description.contains("Widget"))
  }

  @Test func errorCodesDescribeThemselves() {
    #expect(ResolutionError.Code.notRegistered.description == "notRegistered")
    #expect(ResolutionError.Code.cycle.description == "cycle")
    #expect(ResolutionError.Code.factoryFailed.description == "factoryFailed")
    #expect(ResolutionError.Code.typeMismatch.description == "typeMismatch")
    #expect(ResolutionError.Code.invalidRegistration.description == "invalidRegistration")
  }

  // MARK: ServiceKey as shown in errors

  @Test func keysDescribeNameAndArguments() throws {
    let container = Container()
    let named = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: DatabaseRole.primary)
    }
    let withArguments = try #require(throws: ResolutionError.self) {
      try container.resolve(Greeting.self, arguments: "a", 1)
    }

    #expect(named.key.description == "Widget named .primary")
    #expect(named.key.nameDescription == ".primary")
    #expect(named.key.isNamed)
    #expect(withArguments.key.description == "Greeting with arguments (String, Int)")
    #expect(withArguments.key.hasArguments)
    #expect(!withArguments.key.isNamed)
  }
}
