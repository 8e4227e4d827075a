import Strata
import Testing

/// A test suite's use of Strata: every test makes a child scope of one shared container that
/// overrides a service, and the tests run in parallel. Each must see its own override, and only
/// its own, however the resolves interleave: in the child's transient and `scoped` services, not
/// in the application's singletons (which resolve their dependencies where they were registered),
/// and never in a sibling test's scope.
@Suite struct ParallelOverrideTests {
  /// What a test overrides: a clock with the id of the test that made it (`-1`: the application's).
  final class Clock: Sendable {
    let id: Int
    init(id: Int) { self.id = id }
  }

  /// An application-wide singleton that reads the clock.
  final class Billing: Sendable {
    let clock: Clock
    init(clock: Clock) { self.clock = clock }
  }

  /// What a test resolves: auto-wired, transient.
  final class Checkout: Sendable {
    let clock: Clock
    let billing: Billing
    init(clock: Clock, billing: Billing) {
      self.clock = clock
      self.billing = billing
    }
  }

  /// A service scoped to the test's scope, built from the (overridden) clock.
  final class TestSession: Sendable {
    let clock: Clock
    init(clock: Clock) { self.clock = clock }
  }

  static let testTag = ScopeTag("unit-test")

  /// The application's container, counting the `Billing` singletons it makes.
  private static func application(billingsMade: Counter) throws -> Container {
    try Container { registry in
      registry.register(Clock.self, lifetime: .singleton) { _ in Clock(id: -1) }
      registry.register(Billing.self, lifetime: .singleton) { resolver in
        billingsMade.increment()
        return Billing(clock: try resolver.resolve(Clock.self))
      }
      registry.register(Checkout.self, Checkout.init)
      registry.register(TestSession.self, lifetime: .scoped(testTag), TestSession.init)
    }
  }

  /// One parallel test: its own clock, checked on every resolve; the first `Billing` may be made
  /// from inside any test's scope, and must still read the application's clock.
  private static func runTest(_ number: Int, in container: Container, rounds: Int) throws -> [String] {
    var problems: [String] = []
    let scope = try container.makeScope(testTag, name: "test-\(number)") { registry in
      registry.register(Clock.self, lifetime: .singleton) { _ in Clock(id: number) }
    }
    for round in 0..<rounds {
      let checkout = try scope.resolve(Checkout.self)
      if checkout.clock.id != number {
        problems.append("test \(number) round \(round): Checkout got clock \(checkout.clock.id)")
      }
      if checkout.billing.clock.id != -1 {
        problems.append("test \(number): the application's Billing got clock \(checkout.billing.clock.id)")
      }
      let session = try scope.resolve(TestSession.self)
      if session.clock.id != number {
        problems.append("test \(number): its TestSession got clock \(session.clock.id)")
      }
      let request = try scope.makeScope(.request)
      let fromRequest = try request.resolve(Checkout.self)
      if try fromRequest.clock.id != number || request.resolve(TestSession.self) !== session {
        problems.append("test \(number): a request below the test's scope saw another clock or session")
      }
      try request.close()
    }
    try scope.close()
    return problems
  }

  @Test func parallelTestsEachSeeTheirOwnOverrideAndNoneLeaksIntoASingleton() async throws {
    for _ in 0..<5 {
      let billingsMade = Counter()
      let container = try Self.application(billingsMade: billingsMade)
      let problems = try await withThrowingTaskGroup(of: [String].self) { group in
        for number in 0..<100 {
          group.addTask { try Self.runTest(number, in: container, rounds: 20) }
        }
        var all: [String] = []
        for try await found in group { all += found }
        return all
      }
      #expect(problems.isEmpty, "\(problems.prefix(5))")
      #expect(billingsMade.value == 1)
      #expect(try container.resolve(Clock.self).id == -1)
      #expect(try container.resolve(Billing.self).clock.id == -1)
      try await container.close()
    }
  }

  /// The same on threads started together, so that the first `Billing` is requested by many
  /// tests' scopes at once rather than by whichever task the pool runs first.
  @Test func testsStartedTogetherOnThreadsAgreeOnOneApplicationSingleton() async throws {
    for _ in 0..<10 {
      let billingsMade = Counter()
      let container = try Self.application(billingsMade: billingsMade)
      let problems = Locked<[String]>([])
      let finished = await runOnThreads(8, timeout: .seconds(60)) { number in
        let found: [String]
        do {
          found = try Self.runTest(number, in: container, rounds: 5)
        } catch {
          found = ["test \(number) threw \(error)"]
        }
        problems.withLock { $0 += found }
      }
      #expect(finished)
      #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { Array($0.prefix(5)) })")
      #expect(billingsMade.value == 1)
      try await container.close()
    }
  }

  /// A test's overrides are gone when its scope closes: nothing of it is kept by the container
  /// or by the application's singletons.
  @Test func aClosedTestScopeKeepsNothingAlive() throws {
    let billingsMade = Counter()
    let container = try Self.application(billingsMade: billingsMade)
    weak var overriddenClock: Clock?
    weak var testScope: Scope?
    do {
      let scope = try container.makeScope(Self.testTag, name: "leak-check") { registry in
        registry.register(Clock.self, lifetime: .singleton) { _ in Clock(id: 7) }
      }
      let checkout = try scope.resolve(Checkout.self)
      overriddenClock = checkout.clock
      testScope = scope
      #expect(checkout.clock.id == 7)
      try scope.close()
    }
    #expect(overriddenClock == nil)
    #expect(testScope == nil)
    #expect(try container.resolve(Checkout.self).clock.id == -1)
  }
}
