import Strata
import StrataModules
import Testing

// A dependency that a child scope registers is missing where an ancestor's singleton resolves it,
// also through transient services: the report must show the way there, as the resolve's error does.

private final class Cache: Sendable {
  let loader: Loader
  init(loader: Loader) { self.loader = loader }
}
private struct Loader: Sendable { let source: Source }
private final class Source: Sendable {}

@Suite struct MissingPathValidationTests {
  @Test func aDependencyMissingOnlyWhereASingletonResolvesItNamesThePathFromTheSingleton() throws {
    let container = try Container { registry in
      registry.register(Cache.self, lifetime: .singleton, Cache.init)
      registry.register(Loader.self, Loader.init)
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Source.self, lifetime: .scoped, dependsOn: []) { _ in Source() }
    }

    let problems = session.validationReport().problems
    let resolved = #expect(throws: ResolutionError.self) { try session.resolve(Cache.self) }
    #expect(resolved?.code == .notRegistered)
    #expect(problems.map(\.code) == [.missingDependency])
    #expect(problems.first?.key == resolved?.key)
    #expect(problems.first?.path.map(\.description) == ["Cache", "Loader", "Source"])
    #expect(problems.first?.path == resolved?.path)
    // Resolved on its own from the session, the transient finds the service: it is no problem.
    #expect(try session.resolve(Loader.self).source === session.resolve(Source.self))
  }

  @Test func aDependencyNobodyRegistersIsReportedOnceWithTheShortPath() throws {
    let container = try Container { registry in
      registry.register(Cache.self, lifetime: .singleton, Cache.init)
      registry.register(Loader.self, Loader.init)
    }

    let problems = container.validationReport().problems
    #expect(problems.map(\.code) == [.missingDependency])
    #expect(problems.first?.path.map(\.description) == ["Loader", "Source"])
  }
}
