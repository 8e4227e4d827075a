import Strata
import StrataModules
import Testing

private final class RequestContext: Sendable {}
private final class Formatter: Sendable {
  let context: RequestContext
  init(context: RequestContext) { self.context = context }
}
private final class SessionCache: Sendable {
  let formatter: Formatter
  init(formatter: Formatter) { self.formatter = formatter }
}
private final class LazyCart: Sendable {
  let formatter: Lazy<Formatter>
  init(formatter: Lazy<Formatter>) { self.formatter = formatter }
}
private final class ProviderCart: Sendable {
  let formatters: Provider<Formatter>
  init(formatters: Provider<Formatter>) { self.formatters = formatters }
}

/// What a `scoped(tag)` service makes where it lives: an untagged scoped dependency, and what its
/// `Lazy` and `Provider` resolve later. Validation checks their dependencies there, as the
/// resolve does, rather than only at the deepest scope.
@Suite struct NestedResolveValidationTests {
  private struct UntaggedInsideTagged: Module {
    func register(in registry: Registrar) {
      registry.register(RequestContext.self, lifetime: .scoped(.request), RequestContext.init)
      registry.register(Formatter.self, lifetime: .scoped, Formatter.init)
      registry.register(SessionCache.self, lifetime: .scoped(.session), SessionCache.init)
    }
  }

  private struct DeferredInsideTagged: Module {
    func register(in registry: Registrar) {
      registry.register(RequestContext.self, lifetime: .scoped(.request), RequestContext.init)
      registry.register(Formatter.self, Formatter.init)
      registry.register(LazyCart.self, lifetime: .scoped(.session), LazyCart.init)
      registry.register(ProviderCart.self, lifetime: .scoped(.session), ProviderCart.init)
    }
  }

  @Test func anUntaggedScopedServiceIsCheckedWhereATaggedOneMakesIt() throws {
    let container = try Container(modules: [UntaggedInsideTagged()])
    let report = container.validationReport(expecting: [.session, .request])
    let request = try container.makeScope(.session).makeScope(.request)
    let runtime = #expect(throws: ResolutionError.self) { _ = try request.resolve(SessionCache.self) }
    #expect(runtime?.code == .captiveDependency)
    let problem = try #require(report.problems.first)
    #expect(report.problems.count == 1)
    #expect(problem.code == .captiveDependency)
    #expect(problem.path.map(\.description) == ["SessionCache", "Formatter", "RequestContext"])
  }

  @Test func whatALazyOrProviderOfATaggedServiceResolvesIsCheckedWhereItLives() throws {
    let container = try Container(modules: [DeferredInsideTagged()])
    let report = container.validationReport(expecting: [.session, .request])
    let request = try container.makeScope(.session).makeScope(.request)
    let lazy = try request.resolve(LazyCart.self)
    let runtime = #expect(throws: ResolutionError.self) { _ = try lazy.formatter.value }
    #expect(runtime?.code == .noMatchingScope)
    #expect(throws: ResolutionError.self) { _ = try request.resolve(ProviderCart.self).formatters.get() }
    #expect(report.problems.map(\.code) == [.noMatchingScope, .noMatchingScope])
    #expect(
      report.problems.map { $0.path.map(\.description) } == [
        ["LazyCart", "Formatter", "RequestContext"], ["ProviderCart", "Formatter", "RequestContext"],
      ])
  }

  @Test func aValidGraphOfTheSameShapeStaysValid() throws {
    struct Valid: Module {
      func register(in registry: Registrar) {
        registry.register(RequestContext.self, lifetime: .scoped(.session), RequestContext.init)
        registry.register(Formatter.self, Formatter.init)
        registry.register(LazyCart.self, lifetime: .scoped(.session), LazyCart.init)
        registry.register(SessionCache.self, lifetime: .scoped(.session), SessionCache.init)
      }
    }
    let container = try Container(modules: [Valid()])
    let report = container.validationReport(expecting: [.session, .request])
    #expect(report.isValid, "\(report)")
  }
}
