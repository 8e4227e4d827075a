import Strata
import Testing

/// A factory's resolve fails with `scopeClosed` whenever its resolver's scope is closed, whichever
/// scope began the close: the one holding the dependency, an ancestor of it (which closes the
/// holder without telling it, if the holder owns nothing to dispose), or the factory's own scope
/// below it. Every nested route, `resolveAll` included, and whether or not the holder owns
/// something to dispose (which decides whether an ancestor's close reaches it).
@Suite struct ClosedAncestorTests {
  /// Which scope the factory closes before it resolves `Widget`.
  enum Closing: CaseIterable, Sendable {
    /// The container: an ancestor of the session holding `Widget`.
    case root
    /// The session holding `Widget`.
    case session
    /// The request the factory was resolved from, below the session.
    case request
  }

  /// How the factory resolves `Widget`: 0 plain, 1 named, 2 with an argument, 3 named with an
  /// argument, 4 `resolveAll`.
  static let routes = 0..<5

  /// What the factory's resolve gave.
  struct Attempt: @unchecked Sendable {
    let result: Result<[Widget], any Error>
  }

  /// Thrown by the factory if the scopes are not where the test put them.
  struct MissingScope: Error {}

  /// A container whose `Attempt` factory closes `closing` and then resolves `Widget` by `route`,
  /// a session registering four `Widget`s (and, if `ownsDisposable`, having made a disposable
  /// singleton of its own, which links it to the container's close), and a request below it.
  static func attempt(closing: Closing, route: Int, ownsDisposable: Bool = false) throws -> (
    attempt: Attempt, request: Scope
  ) {
    let container = try Container { registry in
      registry.register(Attempt.self) { (resolver, route: Int) in
        let result = Result<[Widget], any Error> {
          let request = resolver.currentScope
          guard let session = request.parent, let root = session.parent else { throw MissingScope() }
          switch closing {
          case .root: try root.close()
          case .session: try session.close()
          case .request: try request.close()
          }
          switch route {
          case 1: return [try resolver.resolve(Widget.self, name: "special")]
          case 2: return [try resolver.resolve(Widget.self, arguments: 7)]
          case 3: return [try resolver.resolve(Widget.self, name: "special", arguments: 7)]
          case 4: return try resolver.resolveAll(Widget.self)
          default: return [try resolver.resolve(Widget.self)]
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
      registry.register(TrackedResource.self, lifetime: .singleton) { _ in TrackedResource("session") }
    }
    if ownsDisposable { _ = try session.resolve(TrackedResource.self) }
    let request = try session.makeScope(.request)
    return (try request.resolve(Attempt.self, arguments: route), request)
  }

  @Test(arguments: Closing.allCases, routes)
  func aFactorysResolveAfterItsScopeClosedIsScopeClosed(closing: Closing, route: Int) throws {
    let (attempt, request) = try Self.attempt(closing: closing, route: route)

    #expect(request.isClosed)
    let error = resolutionError { _ = try attempt.result.get() }
    #expect(error?.code == .scopeClosed, "closing \(closing), route \(route)")
    #expect(error?.key.description.contains("Widget") == true, "the error names the dependency")
  }

  @Test(arguments: routes)
  func closingTheRootRefusesWhetherOrNotTheHolderOwnsADisposable(route: Int) throws {
    let linked = try Self.attempt(closing: .root, route: route, ownsDisposable: true).attempt
    let unlinked = try Self.attempt(closing: .root, route: route, ownsDisposable: false).attempt

    #expect(resolutionError { _ = try linked.result.get() }?.code == .scopeClosed)
    #expect(resolutionError { _ = try unlinked.result.get() }?.code == .scopeClosed)
  }

  @Test func theSameRoutesResolveWhileEveryScopeIsOpen() throws {
    let container = Container()
    let session = try container.makeScope(.session) { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self) { _ in Widget(id: 3) }
    }
    let request = try session.makeScope(.request) { registry in
      registry.register(Attempt.self) { resolver in
        Attempt(result: Result { try resolver.resolveAll(Widget.self) })
      }
    }

    let widgets = try request.resolve(Attempt.self).result.get()

    #expect(widgets.map(\.id) == [1, 3])
    try container.close()
  }
}
