import Strata
import StrataModules
import Testing

// What `validate()` says of `Lazy` and `Provider` held by a singleton must be what resolving
// them then does: they resolve under the singleton's rules.

final class RequestThing: Sendable {}
final class UntaggedScoped: Sendable {}

final class Middle: Sendable {
  let thing: RequestThing
  init(thing: RequestThing) { self.thing = thing }
}

final class HoldsProviderOfMiddle: Sendable {
  let middle: Provider<Middle>
  init(middle: Provider<Middle>) { self.middle = middle }
}

final class HoldsLazyUntagged: Sendable {
  let value: Lazy<UntaggedScoped>
  init(value: Lazy<UntaggedScoped>) { self.value = value }
}

final class HoldsLazyRequestThing: Sendable {
  let thing: Lazy<RequestThing>
  init(thing: Lazy<RequestThing>) { self.thing = thing }
}

@Suite struct DeferredValidationTests {
  /// The singleton's deferred value fails at run time with `code`; validation reports `code`
  /// for `captured` too, before anything is made.
  private func expectValidationAgrees<Holder>(
    _ holder: Holder.Type, captured: Any.Type, read: (Holder) throws -> Void,
    register: (Registrar) -> Void, sourceLocation: Testing.SourceLocation = #_sourceLocation
  ) throws {
    let runs = FactoryRuns()
    let container = try Container { registry in
      register(registry)
      registry.register(RequestThing.self, lifetime: .scoped(.request), dependsOn: []) { _ in
        runs.tick()
        return RequestThing()
      }
      registry.register(UntaggedScoped.self, lifetime: .scoped, dependsOn: []) { _ in
        runs.tick()
        return UntaggedScoped()
      }
    }
    let report = container.validationReport(expecting: [.session, .request])
    #expect(runs.value == 0, sourceLocation: sourceLocation)
    let request = try container.makeScope(.session).makeScope(.request)
    let error = #expect(throws: ResolutionError.self, sourceLocation: sourceLocation) {
      try read(try request.resolve(Holder.self))
    }
    let reported = report.problems.filter { $0.key.serviceType == captured }.map(\.code.rawValue)
    #expect(reported == [error?.code.rawValue].compactMap { $0 }, "\(report)", sourceLocation: sourceLocation)
  }

  @Test func aProviderOfATransientThatNeedsARequestService() throws {
    try expectValidationAgrees(
      HoldsProviderOfMiddle.self, captured: RequestThing.self, read: { _ = try $0.middle() },
      register: {
        $0.register(Middle.self, Middle.init)
        $0.register(HoldsProviderOfMiddle.self, lifetime: .singleton, HoldsProviderOfMiddle.init)
      })
  }

  @Test func aLazyOfAnUntaggedScopedService() throws {
    try expectValidationAgrees(
      HoldsLazyUntagged.self, captured: UntaggedScoped.self, read: { _ = try $0.value.value },
      register: {
        $0.register(HoldsLazyUntagged.self, lifetime: .singleton, HoldsLazyUntagged.init)
      })
  }

  @Test func aLazyOfARequestService() throws {
    try expectValidationAgrees(
      HoldsLazyRequestThing.self, captured: RequestThing.self, read: { _ = try $0.thing.value },
      register: {
        $0.register(HoldsLazyRequestThing.self, lifetime: .singleton, HoldsLazyRequestThing.init)
      })
  }

  /// A scoped holder's `Lazy` resolves from its own scope, where an untagged scoped service is
  /// allowed: nothing to report, and nothing fails.
  @Test func aScopedHoldersLazyOfAnUntaggedScopedServiceIsFine() throws {
    let container = try Container { registry in
      registry.register(UntaggedScoped.self, lifetime: .scoped, dependsOn: []) { _ in UntaggedScoped() }
      registry.register(HoldsLazyUntagged.self, lifetime: .scoped(.request), HoldsLazyUntagged.init)
    }
    #expect(container.validationReport(expecting: [.session, .request]).isValid)
    let request = try container.makeScope(.session).makeScope(.request)
    _ = try request.resolve(HoldsLazyUntagged.self).value.value
  }
}
