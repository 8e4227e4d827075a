import Strata
import Testing

/// The scope a factory's resolver reports, recorded by the factory.
private final class ScopeSeen: Sendable {
  let scope: String
  init(_ resolver: borrowing Resolver) { scope = resolver.currentScope.description }
}

/// `Resolver.currentScope` is where the factory's own resolves run: the scope asked for a transient,
/// and for a shared instance the scope that keeps it (or registered it).
@Suite struct ResolverCurrentScopeTests {
  @Test func eachLifetimesFactoryRunsInTheScopeItsDocumentationNames() throws {
    let container = try Container { registry in
      registry.register(ScopeSeen.self) { ScopeSeen($0) }
      registry.register(ScopeSeen.self, name: Lifetime.singleton, lifetime: .singleton) { ScopeSeen($0) }
      registry.register(ScopeSeen.self, name: Lifetime.weak, lifetime: .weak) { ScopeSeen($0) }
      registry.register(ScopeSeen.self, name: Lifetime.scoped, lifetime: .scoped) { ScopeSeen($0) }
      registry.register(ScopeSeen.self, name: Lifetime.scoped(.session), lifetime: .scoped(.session)) {
        ScopeSeen($0)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)

    #expect(try request.resolve(ScopeSeen.self).scope == "request")
    #expect(try request.resolve(ScopeSeen.self, name: Lifetime.singleton).scope == "root")
    let weak = try request.resolve(ScopeSeen.self, name: Lifetime.weak)
    #expect(weak.scope == "root")
    #expect(try request.resolve(ScopeSeen.self, name: Lifetime.scoped).scope == "request")
    #expect(try request.resolve(ScopeSeen.self, name: Lifetime.scoped(.session)).scope == "session")
  }
}
