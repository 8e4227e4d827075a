import Strata
import Testing

/// The eight `resolve` overloads (four on a scope, four on a resolver) take one path: they find
/// the same registrations, fail with the same errors, and build implicit dependencies only where
/// a plain resolve does.
@Suite struct ResolveFunnelTests {
  /// One of the eight overloads, called from the top level or from inside a factory.
  enum Route: Int, CaseIterable, CustomStringConvertible {
    case scope, scopeNamed, scopeArguments, scopeNamedArguments
    case resolver, resolverNamed, resolverArguments, resolverNamedArguments

    var isNested: Bool { rawValue >= Route.resolver.rawValue }
    var description: String { "\(self.rawValue)" }

    /// The id of the `Widget` this route resolves from `scope`, looking for `Service`.
    func resolve<Service>(_ type: Service.Type, from scope: Scope, argument: Int = 7) throws -> Service {
      switch self {
      case .scope: return try scope.resolve(Service.self)
      case .scopeNamed: return try scope.resolve(Service.self, name: "special")
      case .scopeArguments: return try scope.resolve(Service.self, arguments: argument)
      case .scopeNamedArguments: return try scope.resolve(Service.self, name: "special", arguments: argument)
      case .resolver, .resolverNamed, .resolverArguments, .resolverNamedArguments:
        let box = try scope.resolve(NestedRoute<Service>.self, arguments: self.rawValue, argument)
        return try box.result.get()
      }
    }
  }

  /// What a nested route resolved, made by a factory that calls one of the resolver's overloads.
  struct NestedRoute<Service>: @unchecked Sendable {
    let result: Result<Service, any Error>
  }

  static func registerNestedRoutes<Service>(for type: Service.Type, in registry: Registrar) {
    registry.register(NestedRoute<Service>.self) { (resolver, route: Int, argument: Int) in
      NestedRoute(
        result: Result {
          switch Route(rawValue: route) {
          case .resolverNamed: return try resolver.resolve(Service.self, name: "special")
          case .resolverArguments: return try resolver.resolve(Service.self, arguments: argument)
          case .resolverNamedArguments:
            return try resolver.resolve(Service.self, name: "special", arguments: argument)
          default: return try resolver.resolve(Service.self)
          }
        })
    }
  }

  /// Four registrations of one service type that differ only in name and argument types.
  static func container() throws -> Container {
    try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: "special") { _ in Widget(id: 2) }
      registry.register(Widget.self) { (_, argument: Int) in Widget(id: 100 + argument) }
      registry.register(Widget.self, name: "special") { (_, argument: Int) in Widget(id: 200 + argument) }
      registerNestedRoutes(for: Widget.self, in: registry)
      registerNestedRoutes(for: Greeting.self, in: registry)
      registerNestedRoutes(for: Lazy<Widget>.self, in: registry)
    }
  }

  @Test(arguments: Route.allCases)
  func everyRouteFindsTheRegistrationItsKeyNames(route: Route) throws {
    let container = try Self.container()
    let request = try container.makeScope(.request)
    let expected = [1, 2, 107, 207][route.rawValue % 4]
    #expect(try route.resolve(Widget.self, from: container).id == expected)
    #expect(try route.resolve(Widget.self, from: request).id == expected, "found from a child scope too")
    #expect(
      try route.resolve(Widget.self, from: request, argument: 9).id == [1, 2, 109, 209][route.rawValue % 4])
  }

  @Test(arguments: Route.allCases)
  func everyRouteReportsTheMissingKeyWithItsNameAndArguments(route: Route) throws {
    let container = try Self.container()
    let error = resolutionError { _ = try route.resolve(Greeting.self, from: container) }
    #expect(error?.code == .notRegistered)
    let key = error.map { "\($0.subject)" } ?? ""
    #expect(key.contains("Greeting"))
    #expect(key.contains("special") == [1, 3].contains(route.rawValue % 4), "\(key)")
    #expect(key.contains("Int") == [2, 3].contains(route.rawValue % 4), "\(key)")
  }

  @Test(arguments: Route.allCases)
  func onlyAPlainResolveBuildsAnImplicitLazy(route: Route) throws {
    let container = try Self.container()
    if route.rawValue % 4 == 0 {
      let lazy = try route.resolve(Lazy<Widget>.self, from: container)
      #expect(try lazy.value.id == 1)
    } else {
      let error = resolutionError { _ = try route.resolve(Lazy<Widget>.self, from: container) }
      #expect(error?.code == .notRegistered, "a Lazy is built only for an unnamed key without arguments")
    }
  }

  @Test(arguments: Route.allCases.filter { !$0.isNested })
  func everyTopLevelRouteRefusesAClosedScope(route: Route) throws {
    let container = try Self.container()
    let request = try container.makeScope(.request)
    try request.close()
    let error = resolutionError { _ = try route.resolve(Widget.self, from: request) }
    #expect(error?.code == .scopeClosed)
  }

  @Test func aNamedSingletonIsTheSameInstanceOnEveryRoute() throws {
    let made = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, name: "special", lifetime: .singleton) { _ in
        Widget(id: made.increment())
      }
      Self.registerNestedRoutes(for: Widget.self, in: registry)
    }
    let request = try container.makeScope(.request)
    let top = try Route.scopeNamed.resolve(Widget.self, from: request)
    let nested = try Route.resolverNamed.resolve(Widget.self, from: request)
    #expect(top === nested)
    #expect(made.value == 1)
  }
}
