import Strata
import StrataModules
import Testing

// A small application with deliberate problems. Every factory counts its runs in `runs`.

private final class RequestContext: Sendable {}
private final class SessionToken: Sendable {}
private final class Tracker: Sendable {}
private struct Repository: Sendable { let database: Database }
private struct OrderService: Sendable {
  let mailer: Mailer
  let context: RequestContext
}
private struct Formatter: Sendable { let context: RequestContext }
private struct Reporter: Sendable { let formatter: Formatter }
private struct Audit: Sendable { let tracker: Tracker }
private struct Greeting: Sendable { let name: String }
private struct Welcome: Sendable { let greeting: Greeting }
private final class Left: Sendable {
  let right: Right
  init(right: Right) { self.right = right }
}
private final class Right: Sendable {
  let left: Left
  init(left: Left) { self.left = left }
}
private final class Watcher: Sendable {
  let left: Lazy<Left>
  let again: Provider<Watcher>
  init(left: Lazy<Left>, again: Provider<Watcher>) {
    self.left = left
    self.again = again
  }
}
private struct Cart: Sendable {
  let token: SessionToken
  let context: RequestContext
}

private struct CoreModule: Module {
  let runs: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton, dependsOn: []) { _ in
      runs.tick()
      return Database()
    }
    registry.register(Clock.self, lifetime: .singleton) { _ in
      runs.tick()
      return Clock()
    }
    registry.register(RequestContext.self, lifetime: .scoped(.request), dependsOn: []) { _ in
      runs.tick()
      return RequestContext()
    }
    registry.register(Tracker.self, lifetime: .scoped, dependsOn: []) { _ in
      runs.tick()
      return Tracker()
    }
  }
}

private struct OrdersModule: Module {
  let runs: FactoryRuns
  var requires: [any Module] { [CoreModule(runs: runs)] }
  func register(in registry: Registrar) {
    registry.register(Repository.self) { (database: Database) in
      runs.tick()
      return Repository(database: database)
    }
    registry.register(OrderService.self, lifetime: .singleton) { (mailer: Mailer, context: RequestContext) in
      runs.tick()
      return OrderService(mailer: mailer, context: context)
    }
    registry.register(Formatter.self) { (context: RequestContext) in
      runs.tick()
      return Formatter(context: context)
    }
    registry.register(Reporter.self, lifetime: .singleton) { (formatter: Formatter) in
      runs.tick()
      return Reporter(formatter: formatter)
    }
    registry.register(Audit.self, lifetime: .singleton) { (tracker: Tracker) in
      runs.tick()
      return Audit(tracker: tracker)
    }
  }
}

private struct GreetingModule: Module {
  let runs: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(Greeting.self) { (_, name: String) in
      runs.tick()
      return Greeting(name: name)
    }
    registry.register(Welcome.self) { (greeting: Greeting) in
      runs.tick()
      return Welcome(greeting: greeting)
    }
  }
}

private struct CycleModule: Module {
  let runs: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(Left.self) { (right: Right) in
      runs.tick()
      return Left(right: right)
    }
    registry.register(Right.self) { (left: Left) in
      runs.tick()
      return Right(left: left)
    }
    // Deferred edges close no cycle.
    registry.register(Watcher.self) { (left: Lazy<Left>, again: Provider<Watcher>) in
      runs.tick()
      return Watcher(left: left, again: again)
    }
  }
}

private struct SessionModule: Module {
  let runs: FactoryRuns
  var requires: [any Module] { [CoreModule(runs: runs)] }
  func register(in registry: Registrar) {
    registry.register(SessionToken.self, lifetime: .scoped(.session), dependsOn: []) { _ in
      runs.tick()
      return SessionToken()
    }
    registry.register(Cart.self, lifetime: .scoped(.session)) {
      (token: SessionToken, context: RequestContext) in
      runs.tick()
      return Cart(token: token, context: context)
    }
  }
}

private struct HealthyModule: Module {
  let runs: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton, dependsOn: []) { _ in
      runs.tick()
      return Database()
    }
    registry.register(Repository.self) { (database: Database) in
      runs.tick()
      return Repository(database: database)
    }
    registry.register(RequestContext.self, lifetime: .scoped(.request), dependsOn: []) { _ in
      runs.tick()
      return RequestContext()
    }
    registry.register(Formatter.self, lifetime: .scoped(.request)) { (context: RequestContext) in
      runs.tick()
      return Formatter(context: context)
    }
  }
}

@Suite struct ValidationTests {
  @Test func everyProblemOfSeveralModulesIsReportedAtOnceAndNoFactoryRuns() throws {
    let runs = FactoryRuns()
    let container = try Container(modules: [
      OrdersModule(runs: runs), GreetingModule(runs: runs), CycleModule(runs: runs),
    ])
    let session = try container.makeScope(.session, modules: [SessionModule(runs: runs)])

    let error = try #require(throws: ValidationError.self) { try session.validate() }

    let found = error.problems.map { "\($0.code) " + $0.path.map(\.description).joined(separator: " → ") }
    #expect(
      found == [
        "missingDependency OrderService → Mailer",
        "captiveDependency OrderService → RequestContext",
        "captiveDependency Reporter → Formatter → RequestContext",
        "captiveDependency Audit → Tracker",
        "argumentMismatch Welcome → Greeting",
        "captiveDependency Cart → RequestContext",
        "cycle Left → Right → Left",
      ])
    #expect(runs.value == 0)
    #expect(error.report.unchecked.map(\.key.description) == ["Clock", "Greeting with arguments (String)"])
    #expect(error.report.registrationCount == 16)
  }

  @Test func aProblemReadsAsCodePathSiteAndHint() throws {
    let runs = FactoryRuns()
    let container = try Container(modules: [OrdersModule(runs: runs)])
    let problem = try #require(container.validationReport().problems.first)

    #expect(problem.registeredAt.fileID == "StrataModulesTests/ValidationTests.swift")
    #expect(
      problem.description == """
        missingDependency: nothing is registered for `Mailer`
          path: OrderService → Mailer
          registered at \(problem.registeredAt) by OrdersModule
          hint: register `Mailer` where the resolve can see it (in that scope or above), or install the \
        module that does
        """)
    #expect(runs.value == 0)
  }

  @Test func theReportNumbersEveryProblemAndListsUncheckedFactories() throws {
    let container = try Container { registry in
      registry.register(Welcome.self, Welcome.init)
      registry.register(Clock.self) { _ in Clock() }
    }
    let report = container.validationReport()
    let line = report.problems[0].registeredAt.line

    #expect(
      report.description == """
        validation of root found 1 problem in 2 registrations
        1. missingDependency: nothing is registered for `Greeting`
             path: Welcome → Greeting
             registered at StrataModulesTests/ValidationTests.swift:\(line)
             hint: register `Greeting` where the resolve can see it (in that scope or above), or install \
        the module that does
        unchecked (closure factories that declare no dependencies with dependsOn:):
          `Clock` (transient) at StrataModulesTests/ValidationTests.swift:\(line + 1)
        """)
  }

  @Test func aHealthyGraphValidatesAndReturnsItsReport() throws {
    let runs = FactoryRuns()
    let container = try Container(modules: [HealthyModule(runs: runs)])

    let report = try container.validate(expecting: [.session, .request])
    #expect(report.isValid)
    #expect(report.unchecked.isEmpty)
    #expect(runs.value == 0)
  }

  @Test func aSingletonInTheRootCannotSeeAChildScopesRegistrations() throws {
    let container = try Container { registry in
      registry.register(Repository.self, lifetime: .singleton, Repository.init)
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Database.self) { _ in Database() }
    }

    let problems = session.validationReport().problems
    #expect(problems.map(\.code) == [.missingDependency])
    #expect(problems.first?.path == container.registrations.first.map { [$0.key] + ($0.dependencies ?? []) })
  }

  @Test func withExpectedScopesAScopedServiceNoScopeCanOwnIsReported() throws {
    let container = try Container { registry in
      registry.register(SessionToken.self, lifetime: .scoped(.session), dependsOn: []) { _ in SessionToken() }
    }

    #expect(container.validationReport().isValid)  // a session scope may exist below
    let problems = container.validationReport(expecting: [.request]).problems
    #expect(problems.map(\.code) == [.noMatchingScope])
    #expect(
      problems.first?.message == "`SessionToken` (scoped(.session)) is resolved where no .session scope "
        + "encloses it: root → request")
  }

  @Test func aRequestScopedServiceMayDependOnASessionScopedOne() throws {
    let container = try Container { registry in
      registry.register(SessionToken.self, lifetime: .scoped(.session), dependsOn: []) { _ in SessionToken() }
      registry.register(
        RequestContext.self, lifetime: .scoped(.request), dependsOn: [.service(SessionToken.self)]
      ) {
        _ in RequestContext()
      }
    }
    #expect(container.validationReport(expecting: [.session, .request]).isValid)
    // The other way round, a session would keep a request's instance.
    let reversed = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request), dependsOn: []) { _ in
        RequestContext()
      }
      registry.register(
        SessionToken.self, lifetime: .scoped(.session), dependsOn: [.service(RequestContext.self)]
      ) {
        _ in SessionToken()
      }
    }
    let problems = reversed.validationReport(expecting: [.session, .request]).problems
    #expect(problems.map(\.code) == [.captiveDependency])
  }

  @Test func declaredDependenciesAreCheckedAndDeferredOnesBreakCycles() throws {
    let deferred = try Container { registry in
      registry.register(Database.self, dependsOn: [.service(Clock.self)]) { _ in Database() }
      registry.register(Clock.self, dependsOn: [.deferred(Database.self)]) { _ in Clock() }
    }
    #expect(deferred.validationReport().isValid)
    #expect(deferred.registrations.map { $0.edges?.map(\.isDeferred) } == [[false], [true]])

    let immediate = try Container { registry in
      registry.register(Database.self, dependsOn: [.service(Clock.self)]) { _ in Database() }
      registry.register(Clock.self, dependsOn: [.service(Database.self), .service(Mailer.self)]) { _ in
        Clock()
      }
    }
    let problems = immediate.validationReport().problems
    #expect(problems.map(\.code) == [.missingDependency, .cycle])
    #expect(problems.last?.message == "circular dependency: Database → Clock → Database")
  }

  @Test func lazyAndProviderParametersAreDeferredEdgesToTheirService() throws {
    let container = try Container { registry in
      registry.register(Watcher.self, Watcher.init)
    }
    let registration = try #require(container.registrations.first)

    #expect(registration.edges?.map(\.description) == ["Left (deferred)", "Watcher (deferred)"])
    #expect(registration.dependencies?.map(\.description) == ["Left", "Watcher"])
    #expect(container.validationReport().problems.map(\.code) == [.missingDependency])
  }
}
