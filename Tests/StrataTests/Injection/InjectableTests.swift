import Strata
import Testing

/// A screen made by a framework, not by the container, that receives its dependencies as a bundle.
private final class InjectableTestScreen: Injectable {
  struct Dependencies {
    let dependency: Dependency
    let service: LabeledService
  }

  private(set) var received: [Dependencies] = []

  init() {}

  func inject(_ dependencies: Dependencies) {
    received.append(dependencies)
  }
}

/// `Injectable` and `Scope.inject(into:)`.
@Suite struct InjectableTests {
  @Test func injectResolvesTheBundleAndHandsItOver() throws {
    let container = try Container { registry in
      registry.register(Dependency.self, lifetime: .singleton) { _ in
        Dependency(origin: "root")
      }
      registry.register(LabeledService.self) { _ in LabeledService("service") }
      registry.register(InjectableTestScreen.Dependencies.self, InjectableTestScreen.Dependencies.init)
    }
    let screen = InjectableTestScreen()
    #expect(screen.received.isEmpty)

    try container.inject(into: screen)

    #expect(screen.received.count == 1)
    let bundle = try #require(screen.received.first)
    #expect(bundle.dependency === (try container.resolve(Dependency.self)))
    #expect(bundle.service.label == "service")
  }

  @Test func injectFromAScopeUsesThatScopesInstancesAndRegistrations() throws {
    let container = try Container { registry in
      registry.register(Dependency.self, lifetime: .scoped(.request)) { resolver in
        Dependency(origin: resolver.currentScope.name ?? "?")
      }
      registry.register(LabeledService.self) { _ in LabeledService("root") }
      registry.register(InjectableTestScreen.Dependencies.self, InjectableTestScreen.Dependencies.init)
    }
    let request = try container.makeScope(.request, name: "r1") { registry in
      registry.register(LabeledService.self) { _ in LabeledService("request") }
    }
    let screen = InjectableTestScreen()

    try request.inject(into: screen)

    let bundle = try #require(screen.received.first)
    #expect(bundle.dependency === (try request.resolve(Dependency.self)))
    #expect(bundle.dependency.origin == "r1")
    #expect(bundle.service.label == "request")
  }

  @Test func anUnregisteredBundleIsNotRegisteredWithAHintOnHowToRegisterIt() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(LabeledService.self) { _ in LabeledService("service") }
    }
    let screen = InjectableTestScreen()

    let error = try #require(resolutionError { try container.inject(into: screen) })

    #expect(error.code == .notRegistered)
    #expect(isPlainKey(error.key, of: InjectableTestScreen.Dependencies.self))
    let hint = try #require(error.hint)
    #expect(hint.contains("InjectableTestScreen.Dependencies"), "hint: \(hint)")
    #expect(hint.contains("registry.register("), "hint: \(hint)")
    #expect(hint.contains(".init"), "hint: \(hint)")
    #expect(screen.received.isEmpty)
  }

  @Test func aBundleRegisteredOnlyUnderANameOrWithArgumentsGetsAHintThatSaysSo() throws {
    let named = try Container { registry in
      registry.register(InjectableTestScreen.Dependencies.self, name: "profile") { _ in
        InjectableTestScreen.Dependencies(
          dependency: Dependency(origin: "root"), service: LabeledService("s"))
      }
    }
    let withArguments = try Container { registry in
      registry.register(InjectableTestScreen.Dependencies.self) { (_, origin: String) in
        InjectableTestScreen.Dependencies(
          dependency: Dependency(origin: origin), service: LabeledService("s"))
      }
    }
    let screen = InjectableTestScreen()

    let namedError = try #require(resolutionError { try named.inject(into: screen) })
    let argumentsError = try #require(resolutionError { try withArguments.inject(into: screen) })

    #expect(namedError.code == .notRegistered && argumentsError.code == .notRegistered)
    #expect(
      namedError.hint
        == "`inject(into:)` resolves `InjectableTestScreen.Dependencies` without a name, and it is "
        + "registered only under the name `\"profile\"`: register it without a name, e.g. "
        + "`registry.register(InjectableTestScreen.Dependencies.self, InjectableTestScreen.Dependencies.init)`"
    )
    #expect(
      argumentsError.hint
        == "`inject(into:)` resolves `InjectableTestScreen.Dependencies` without runtime arguments, and "
        + "it is registered with arguments (String): register it without, e.g. "
        + "`registry.register(InjectableTestScreen.Dependencies.self, InjectableTestScreen.Dependencies.init)`"
    )
    #expect(screen.received.isEmpty)
  }

  @Test func aMissingDependencyOfTheBundleIsReportedAndTheTargetIsLeftUntouched() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(InjectableTestScreen.Dependencies.self, InjectableTestScreen.Dependencies.init)
    }
    let screen = InjectableTestScreen()

    let error = try #require(resolutionError { try container.inject(into: screen) })

    #expect(error.code == .notRegistered)
    #expect(isPlainKey(error.key, of: LabeledService.self))
    #expect(
      error.path.map { ObjectIdentifier($0.serviceType) } == [
        ObjectIdentifier(InjectableTestScreen.Dependencies.self), ObjectIdentifier(LabeledService.self),
      ])
    #expect(screen.received.isEmpty)
  }

  @Test func injectingFromAClosedScopeIsScopeClosed() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(LabeledService.self) { _ in LabeledService("service") }
      registry.register(InjectableTestScreen.Dependencies.self, InjectableTestScreen.Dependencies.init)
    }
    let request = try container.makeScope(.request)
    try request.close()
    let screen = InjectableTestScreen()

    let error = resolutionError { try request.inject(into: screen) }

    #expect(error?.code == .scopeClosed)
    #expect(screen.received.isEmpty)
  }

  @Test func injectingTwiceHandsOverAFreshBundleEachTime() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(LabeledService.self) { _ in LabeledService("service") }
      registry.register(InjectableTestScreen.Dependencies.self, InjectableTestScreen.Dependencies.init)
    }
    let screen = InjectableTestScreen()

    try container.inject(into: screen)
    try container.inject(into: screen)

    #expect(screen.received.count == 2)
    #expect(screen.received[0].dependency !== screen.received[1].dependency)
  }
}
