import Strata
import StrataModules
import Testing

private protocol Store: Sendable {}

private final class StoreImpl: Store, Sendable {
  let inner: (any Store)?
  init(inner: (any Store)?) { self.inner = inner }
}

private final class StoreUser: Sendable {
  let store: any Store
  init(store: any Store) { self.store = store }
}

private final class UnitOfWork: Sendable {}

/// Validation and export follow a forward to the registration it was made from, as a resolve
/// does, not to the latest registration of that registration's key: they reported a cycle a
/// decorator does not have, and missed a cycle and a captive dependency that resolve throws.
@Suite struct ForwardValidationTests {
  private func isCycle(_ problem: ValidationProblem) -> Bool { "\(problem)".contains("cycle") }

  /// A later registration of the key decorates what the forward gives: no cycle.
  @Test func aDecoratorOfTheForwardsTargetIsNoCycle() throws {
    let container = try Container { registry in
      registry.register(StoreImpl.self, lifetime: .singleton, dependsOn: []) { _ in StoreImpl(inner: nil) }
        .forwarding(to: (any Store).self)
      registry.register(StoreImpl.self, dependsOn: [.service((any Store).self)]) { resolver in
        StoreImpl(inner: try resolver.resolve((any Store).self))
      }
    }
    #expect(try container.resolve(StoreImpl.self).inner != nil)
    #expect(container.validationReport().problems.isEmpty)
    #expect(!container.exportGraph(as: .text).contains("missing"))
  }

  /// The forward's target needs the service that needs the forward: a cycle, whatever a later
  /// registration of the target's key does.
  @Test func aCycleThroughTheForwardsTargetIsReported() throws {
    let container = try Container { registry in
      registry.register(StoreImpl.self, dependsOn: [.service(StoreUser.self)]) { resolver in
        _ = try resolver.resolve(StoreUser.self)
        return StoreImpl(inner: nil)
      }
      .forwarding(to: (any Store).self)
      registry.register(StoreImpl.self, dependsOn: []) { _ in StoreImpl(inner: nil) }
      registry.register(StoreUser.self, dependsOn: [.service((any Store).self)]) { resolver in
        StoreUser(store: try resolver.resolve((any Store).self))
      }
    }
    #expect(throws: ResolutionError.self) { try container.resolve(StoreUser.self) }
    #expect(container.validationReport().problems.contains(where: isCycle))
  }

  @Test func aCaptiveDependencyThroughTheForwardsTargetIsReported() throws {
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped, dependsOn: []) { _ in UnitOfWork() }
      registry.register(StoreImpl.self, dependsOn: [.service(UnitOfWork.self)]) { resolver in
        _ = try resolver.resolve(UnitOfWork.self)
        return StoreImpl(inner: nil)
      }
      .forwarding(to: (any Store).self)
      registry.register(StoreImpl.self, dependsOn: []) { _ in StoreImpl(inner: nil) }
      registry.register(StoreUser.self, lifetime: .singleton, dependsOn: [.service((any Store).self)]) {
        resolver in StoreUser(store: try resolver.resolve((any Store).self))
      }
    }
    #expect { try container.resolve(StoreUser.self) } throws: {
      ($0 as? ResolutionError)?.code == .captiveDependency
    }
    #expect(
      container.validationReport(expecting: [.request]).problems.contains { "\($0)".contains("captive") })
  }
}
