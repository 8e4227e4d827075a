import Strata
import Testing

/// A request's context, scoped to the request.
final class RequestContext: Sendable {
  let user: String

  init(user: String) {
    self.user = user
  }
}

/// A singleton that injects the request context through a property wrapper: the back door.
///
/// `@unchecked Sendable`: its only state is the `@Injected` wrapper, which is never reassigned
/// and resolves at most once under its own lock.
final class AuditTrail: @unchecked Sendable {
  @Injected var context: RequestContext

  init() {}
}

/// A singleton whose factory reads the ambient scope.
final class AmbientReader: Sendable {
  let user: String?

  init(user: String?) {
    self.user = user
  }
}

/// A longer-lived instance never observes a shorter-lived one, by any route: inside a shared
/// instance's factory the ambient scope is the owner, and `@Injected` resolves from the scope its
/// holder was created in.
@Suite struct AmbientCaptiveTests {
  static func container(users: Collector<String>) throws -> Container {
    try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in
        let user = "user-\(users.elements.count)"
        users.append(user)
        return RequestContext(user: user)
      }
      registry.register(AuditTrail.self, lifetime: .singleton) { _ in AuditTrail() }
      registry.register(AmbientReader.self, lifetime: .singleton) { _ in
        AmbientReader(user: try Scope.current?.resolve(RequestContext.self).user)
      }
    }
  }

  @Test func aSingletonsInjectedPropertyNeverSeesARequestContext() throws {
    let container = try Self.container(users: Collector())
    for _ in 0..<2 {
      try container.withScope(.request) { request in
        _ = try request.resolve(RequestContext.self)
        let trail = try request.resolve(AuditTrail.self)
        let error = try #require(throws: ResolutionError.self) { try trail.$context.resolve() }
        #expect([.noMatchingScope, .captiveDependency].contains(error.code))
      }
    }
  }

  @Test func aSingletonsFactoryReadingTheCurrentScopeSeesItsOwner() throws {
    let container = try Self.container(users: Collector())
    try container.withScope(.request) { request in
      _ = try request.resolve(RequestContext.self)
      let error = try #require(throws: ResolutionError.self) { try request.resolve(AmbientReader.self) }
      #expect([.noMatchingScope, .captiveDependency].contains(error.code))
    }
  }

  @Test func aScopedFactoryReadingTheCurrentScopeSeesItsOwningScope() throws {
    let seen = Collector<String>()
    let container = try Container { registry in
      registry.register(AmbientReader.self, lifetime: .scoped(.session)) { _ in
        seen.append(Scope.current?.tag.name ?? "none")
        return AmbientReader(user: nil)
      }
    }
    let session = try container.makeScope(.session)
    try session.withScope(.request) { request in
      _ = try request.resolve(AmbientReader.self)
      #expect(Scope.current === request, "the caller's current scope is back after the factory")
    }
    #expect(seen.elements == ["session"])
    try session.close()
  }

  @Test func aTransientsInjectedPropertyUsesTheRequestItWasMadeIn() throws {
    let users = Collector<String>()
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in
        let user = "user-\(users.elements.count)"
        users.append(user)
        return RequestContext(user: user)
      }
      registry.register(AuditTrail.self) { _ in AuditTrail() }
    }
    let trail = try container.withScope(.request) { request in
      let trail = try request.resolve(AuditTrail.self)
      #expect(try trail.$context.resolve().user == "user-0")
      return try request.resolve(AuditTrail.self)
    }
    try container.withScope(.request) { _ in
      let error = try #require(throws: ResolutionError.self) { try trail.$context.resolve() }
      #expect(error.code == .scopeClosed, "a holder made in a closed request must not see the next one")
    }
  }
}
