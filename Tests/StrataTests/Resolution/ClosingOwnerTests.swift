import Strata
import Testing

/// A factory's resolve through a registration whose scope has begun closing fails with
/// `scopeClosed`, naming the dependency, on every nested route: the error path that carries each
/// service type's `SpecializationMarks`.
@Suite struct ClosingOwnerTests {
  /// Thrown by the factory if its scope has no parent (it always has one here).
  struct NoSession: Error {}

  /// What a factory's nested resolve gave after the factory closed the session.
  struct Attempt: @unchecked Sendable {
    let result: Result<Widget, any Error>
  }

  /// A session holding four `Widget` registrations (unnamed, named, with an `Int` argument, named
  /// with one), and a request below it. The container's `Attempt` factory closes the session, then
  /// resolves `Widget` by the route numbered `route`: 0 plain, 1 named, 2 with an argument, 3 named
  /// with an argument.
  static func request() throws -> (session: Scope, request: Scope) {
    let container = try Container { registry in
      registry.register(Attempt.self) { (resolver, route: Int) in
        let result = Result<Widget, any Error> {
          guard let session = resolver.currentScope.parent else { throw NoSession() }
          try session.close()
          switch route {
          case 1: return try resolver.resolve(Widget.self, name: "special")
          case 2: return try resolver.resolve(Widget.self, arguments: 7)
          case 3: return try resolver.resolve(Widget.self, name: "special", arguments: 7)
          default: return try resolver.resolve(Widget.self)
          }
        }
        return Attempt(result: result)
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: "special") { _ in Widget(id: 2) }
      registry.register(Widget.self) { (_, argument: Int) in Widget(id: 100 + argument) }
      registry.register(Widget.self, name: "special") { (_, argument: Int) in Widget(id: 200 + argument) }
    }
    return (session, try session.makeScope(.request))
  }

  @Test(arguments: 0..<4)
  func aNestedResolveThroughAClosingScopeIsScopeClosed(route: Int) throws {
    let (session, request) = try Self.request()

    let attempt = try request.resolve(Attempt.self, arguments: route)

    #expect(session.isClosed)
    let error = resolutionError { _ = try attempt.result.get() }
    #expect(error?.code == .scopeClosed)
    #expect(error?.key.description.contains("Widget") == true, "the error names the dependency")
  }

  @Test func theSameResolvesSucceedWhileTheSessionIsOpen() throws {
    let (session, request) = try Self.request()
    #expect(try request.resolve(Widget.self).id == 1)
    #expect(try request.resolve(Widget.self, name: "special").id == 2)
    #expect(try request.resolve(Widget.self, arguments: 7).id == 107)
    #expect(try request.resolve(Widget.self, name: "special", arguments: 7).id == 207)
    try session.close()
  }
}
