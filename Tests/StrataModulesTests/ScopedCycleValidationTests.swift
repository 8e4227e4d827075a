import Strata
import StrataModules
import Testing

private final class First: Sendable {}
private final class Second: Sendable {}
private final class Third: Sendable {}

/// Cycle detection looks up a registration's dependencies where it is resolved: a transient that
/// a root singleton needs resolves them in the root, where a key a child scope shadows is not
/// shadowed. Validating the child missed the cycle among the root's registrations that resolving
/// from the child throws.
@Suite struct ScopedCycleValidationTests {
  private func container() throws -> Container {
    try Container { registry in
      registry.register(First.self, lifetime: .singleton, dependsOn: [.service(Second.self)]) { resolver in
        _ = try resolver.resolve(Second.self)
        return First()
      }
      registry.register(Second.self, dependsOn: [.service(First.self)]) { resolver in
        _ = try resolver.resolve(First.self)
        return Second()
      }
      registry.register(Third.self, lifetime: .singleton, dependsOn: [.service(First.self)]) { resolver in
        _ = try resolver.resolve(First.self)
        return Third()
      }
    }
  }

  private func hasCycle(_ report: ValidationReport) -> Bool {
    report.problems.contains { "\($0)".contains("cycle") }
  }

  @Test func aCycleAmongRootSingletonsIsReportedFromAChildThatShadowsAKey() throws {
    let container = try container()
    let session = try container.makeScope(.session) { registry in
      registry.register(First.self, dependsOn: []) { _ in First() }
    }
    #expect(throws: ResolutionError.self) { try session.resolve(Third.self) }
    #expect(hasCycle(session.validationReport()))
    #expect(hasCycle(container.validationReport()))
  }

  /// The shadowing registration is what the child itself resolves: a transient resolved from the
  /// child finds it, and no cycle goes through it.
  @Test func theChildsOwnRegistrationBreaksTheCycleForWhatItResolves() throws {
    let container = try Container { registry in
      registry.register(Second.self, dependsOn: [.service(First.self)]) { resolver in
        _ = try resolver.resolve(First.self)
        return Second()
      }
      registry.register(First.self, dependsOn: [.service(Second.self)]) { resolver in
        _ = try resolver.resolve(Second.self)
        return First()
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(First.self, dependsOn: []) { _ in First() }
    }
    #expect(throws: Never.self) { try session.resolve(Second.self) }
    #expect(!hasCycle(session.validationReport()))
    #expect(hasCycle(container.validationReport()))
  }
}
