import Strata
import Testing

private protocol InjectedTestRepository: AnyObject, Sendable {
  var label: String { get }
}

private final class InjectedTestLiveRepository: InjectedTestRepository {
  let label: String

  init(_ label: String) {
    self.label = label
  }
}

private final class InjectedTestStubRepository: InjectedTestRepository {
  let label = "stub"
}

private enum InjectedTestChannel: Hashable, Sendable {
  case audit
  case metrics
}

/// Injects from the scope that is current on first access.
private final class InjectedTestProfileController {
  @Injected var repository: any InjectedTestRepository
  @Injected(name: InjectedTestChannel.audit) var audit: LabeledService

  init() {}
}

/// Injects from a scope given at creation.
private final class InjectedTestExplicitController {
  @Injected var repository: any InjectedTestRepository
  @Injected var metrics: LabeledService

  init(scope: Scope) {
    _repository = Injected(from: scope)
    _metrics = Injected(name: InjectedTestChannel.metrics, from: scope)
  }
}

/// Has its value from the initializer, as in a test.
private final class InjectedTestStubbedController {
  @Injected var repository: any InjectedTestRepository = InjectedTestStubRepository()

  init() {}
}

/// `@Injected`: lazy, kept, overridable, and with a throwing projected value.
@Suite struct InjectedTests {
  private static func makeContainer(
    runs: Counter, lifetime: Lifetime = .transient
  ) throws -> Container {
    try Container { registry in
      registry.register((any InjectedTestRepository).self, lifetime: lifetime) { _ in
        InjectedTestLiveRepository("live \(runs.increment())")
      }
      registry.register(LabeledService.self, name: InjectedTestChannel.audit) { _ in
        LabeledService("audit")
      }
      registry.register(LabeledService.self, name: InjectedTestChannel.metrics) { _ in
        LabeledService("metrics")
      }
      registry.register(LabeledService.self) { _ in LabeledService("unnamed") }
    }
  }

  // MARK: Lazy and kept

  @Test func nothingIsResolvedWhenTheObjectIsCreatedWithoutACurrentScope() throws {
    let runs = Counter()
    _ = try Self.makeContainer(runs: runs)
    #expect(Scope.current == nil)

    let controller = InjectedTestProfileController()

    #expect(runs.value == 0)
    #expect(!controller.$repository.isResolved)
    #expect(!controller.$audit.isResolved)
  }

  @Test func thePropertyIsResolvedOnFirstAccessFromTheCurrentScopeThenKept() throws {
    let runs = Counter()
    let container = try Self.makeContainer(runs: runs)
    let controller = InjectedTestProfileController()

    let first = try container.withScope(.request) { _ in controller.repository }
    #expect(runs.value == 1)
    #expect(controller.$repository.isResolved)

    let second = try container.withScope(.request) { _ in controller.repository }
    let third = controller.repository

    #expect(first === second)
    #expect(second === third)
    #expect(runs.value == 1, "the transient factory ran once: the property keeps its instance")
  }

  @Test func thePropertyResolvesFromTheAmbientScopeNotFromTheRoot() throws {
    let runs = Counter()
    let container = try Self.makeContainer(runs: runs, lifetime: .scoped(.request))

    try container.withScope(.session) { _ in
      try withScope(.request) { request in
        let controller = InjectedTestProfileController()
        // The throwing access first: resolving from the wrong scope must fail the test, not trap.
        let injected = try controller.$repository.resolve()
        #expect(try injected === request.resolve((any InjectedTestRepository).self))
        #expect(controller.repository === injected)
        #expect(runs.value == 1)
      }
    }
  }

  @Test func theNamedVariantResolvesTheNamedRegistration() throws {
    let runs = Counter()
    let container = try Self.makeContainer(runs: runs)
    let controller = InjectedTestProfileController()

    let label = try container.withScope(.request) { _ in controller.audit.label }

    #expect(label == "audit")
  }

  @Test func anExplicitScopeIsUsedWithoutAnyCurrentScope() throws {
    let runs = Counter()
    let container = try Self.makeContainer(runs: runs)

    let controller = InjectedTestExplicitController(scope: container)
    #expect(runs.value == 0)

    #expect(controller.repository.label == "live 1")
    #expect(controller.metrics.label == "metrics")
    #expect(controller.repository === (try controller.$repository.resolve()))
    #expect(runs.value == 1)
  }

  @Test func anExplicitScopeWinsOverTheCurrentOne() throws {
    let runs = Counter()
    let container = try Self.makeContainer(runs: runs, lifetime: .scoped(.request))
    let request = try container.makeScope(.request)
    let expected = try request.resolve((any InjectedTestRepository).self)
    let controller = InjectedTestExplicitController(scope: request)

    let injected = try container.withScope(.request) { _ in controller.repository }

    #expect(injected === expected)
  }

  @Test func aLocalInjectedVariableWorksLikeAProperty() throws {
    let runs = Counter()
    let container = try Self.makeContainer(runs: runs)

    @Injected(from: container) var repository: any InjectedTestRepository
    #expect(!$repository.isResolved)
    #expect(runs.value == 0)

    let first = repository
    let second = repository
    #expect(first === second)
    #expect($repository.isResolved)
    #expect(runs.value == 1)
  }

  // MARK: A value given to the initializer

  @Test func aValuePassedToTheInitializerWinsAndTheFactoryNeverRuns() throws {
    let runs = Counter()
    let container = try Self.makeContainer(runs: runs)
    let controller = InjectedTestStubbedController()

    #expect(controller.$repository.isResolved)
    #expect(controller.repository.label == "stub")
    let inScope = try container.withScope(.request) { _ in controller.repository }

    #expect(inScope is InjectedTestStubRepository)
    #expect(try controller.$repository.resolve() === inScope)
    #expect(runs.value == 0)
  }

  // MARK: The throwing projected value

  @Test func theProjectedValueThrowsWhenNoScopeIsCurrentAndRetriesLater() throws {
    let runs = Counter()
    let container = try Self.makeContainer(runs: runs)
    let controller = InjectedTestProfileController()

    let error = resolutionError { _ = try controller.$repository.resolve() }

    #expect(error?.code == .noMatchingScope)
    #expect(error?.hint?.contains("@Injected") == true)
    #expect(!controller.$repository.isResolved)
    #expect(runs.value == 0)

    let resolved = try container.withScope(.request) { _ in try controller.$repository.resolve() }
    #expect(resolved.label == "live 1")
    #expect(controller.$repository.isResolved)
    #expect(controller.repository === resolved)
  }

  @Test func theProjectedValueThrowsWhenTheServiceIsNotRegistered() throws {
    let container = Container()
    let controller = InjectedTestProfileController()

    let error = resolutionError {
      _ = try container.withScope(.request) { _ in try controller.$repository.resolve() }
    }

    #expect(error?.code == .notRegistered)
    #expect(error.map { isPlainKey($0.key, of: (any InjectedTestRepository).self) } == true)
    #expect(!controller.$repository.isResolved)
  }

  @Test func theProjectedValueOfANamedPropertyThrowsForAMissingName() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { _ in LabeledService("unnamed only") }
    }
    let controller = InjectedTestProfileController()

    let error = resolutionError {
      _ = try container.withScope(.request) { _ in try controller.$audit.resolve() }
    }

    #expect(error?.code == .notRegistered)
    #expect(error?.key.isNamed == true)
  }
}
