import Strata
import StrataModules
import Testing

/// What a test double gives away: the test that made it.
private final class TestClock: Sendable {
  let test: Int
  init(test: Int) { self.test = test }
}

/// What a hook saw, per container: the clock each `loaded(in:)` resolved.
private final class HookSightings: Sendable {
  private let seen = EventLog()
  func record(_ clock: TestClock, by module: String) { seen.record("\(module):\(clock.test)") }
  var all: [String] { seen.all }
}

/// The application: a clock, and a checkout built from it; its hook reads the clock.
private struct ShopModule: Module {
  let sightings: HookSightings
  func register(in registry: Registrar) {
    registry.register(TestClock.self, lifetime: .singleton) { _ in TestClock(test: -1) }
    registry.register(Checkout.self, lifetime: .singleton, dependsOn: [.service(TestClock.self)]) {
      Checkout(clock: try $0.resolve(TestClock.self))
    }
  }
  func loaded(in scope: Scope) throws {
    sightings.record(try scope.resolve(TestClock.self), by: "shop")
  }
}

private final class Checkout: Sendable {
  let clock: TestClock
  init(clock: TestClock) { self.clock = clock }
}

/// A test's double: the clock of test `test`.
private struct FixedClockModule: Module {
  let test: Int
  var moduleID: ModuleID { ModuleID(Self.self, test) }
  func register(in registry: Registrar) {
    registry.register(TestClock.self, lifetime: .singleton) { [test] _ in TestClock(test: test) }
  }
}

/// A feature a session loads, which requires the shop and reads the clock in its hook.
private struct CartFeature: Module {
  let sightings: HookSightings
  var requires: [any Module] { [ShopModule(sightings: sightings)] }
  func register(in registry: Registrar) {
    registry.register(Cart.self, lifetime: .scoped(.session), dependsOn: [.service(TestClock.self)]) {
      Cart(clock: try $0.resolve(TestClock.self))
    }
  }
  func loaded(in scope: Scope) throws {
    sightings.record(try scope.resolve(TestClock.self), by: "cart")
  }
}

private final class Cart: Sendable {
  let clock: TestClock
  init(clock: TestClock) { self.clock = clock }
}

/// A test suite whose tests each build a container from the application's modules overridden by
/// their own doubles, all at once: each container sees its own doubles only, in its registrations,
/// its hooks and its sessions' feature modules, and validates clean.
@Suite struct ParallelTestContainerTests {
  /// One test: its container, a session with the feature, and what it saw.
  private static func runTest(_ test: Int) async throws -> [String] {
    var problems: [String] = []
    let sightings = HookSightings()
    let container = try Container(modules: [
      ShopModule(sightings: sightings).overridden(by: FixedClockModule(test: test))
    ])
    let report = try container.validate()
    if !report.problems.isEmpty { problems.append("test \(test): validate() found \(report.problems)") }
    if try container.resolve(Checkout.self).clock.test != test {
      problems.append("test \(test): Checkout has another test's clock")
    }
    for round in 0..<3 {
      let session = try container.makeScope(
        .session, name: "s\(round)", modules: [CartFeature(sightings: sightings)])
      if try session.resolve(Cart.self).clock.test != test {
        problems.append("test \(test): a session's Cart has another test's clock")
      }
      try await session.close()
    }
    // The shop's hook ran once, in the container; the feature's once per session.
    let expected = ["shop:\(test)", "cart:\(test)", "cart:\(test)", "cart:\(test)"]
    if sightings.all != expected { problems.append("test \(test): hooks saw \(sightings.all)") }
    try await container.close()
    return problems
  }

  @Test func testsBuildingContainersFromOverriddenModulesAtOnceSeeOnlyTheirOwnDoubles() async throws {
    for _ in 0..<3 {
      let problems = try await withThrowingTaskGroup(of: [String].self) { group in
        for test in 0..<60 { group.addTask { try await Self.runTest(test) } }
        var all: [String] = []
        for try await found in group { all += found }
        return all
      }
      #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
  }
}
