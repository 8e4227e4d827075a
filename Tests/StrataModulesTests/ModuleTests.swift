import Strata
import StrataModules
import Testing

private protocol Greeter: Sendable {
  func greet(_ name: String) -> String
}

private struct FriendlyGreeter: Greeter {
  func greet(_ name: String) -> String { "Hello, \(name)!" }
}

private final class Counter: Sendable {}

private struct GreetingModule: Module {
  func register(in registry: Registrar) {
    registry.register((any Greeter).self) { _ in FriendlyGreeter() }
  }
}

private struct CounterModule: Module {
  func register(in registry: Registrar) {
    registry.register(Counter.self, lifetime: .singleton) { _ in Counter() }
  }
}

private struct BrokenModule: Module {
  func register(in registry: Registrar) {
    registry.register(Counter.self, lifetime: .singleton) { (_, seed: Int) in Counter() }
  }
}

@Suite struct ModuleTests {
  @Test func installedModulesRegisterTheirServices() throws {
    let container = Container()
    try container.install(GreetingModule(), CounterModule())

    #expect(try container.resolve((any Greeter).self).greet("Ada") == "Hello, Ada!")
    #expect(try container.resolve(Counter.self) === container.resolve(Counter.self))
  }

  @Test func aModuleInstalledInAChildScopeIsInvisibleToTheParent() throws {
    let container = Container()
    let feature = try container.makeScope(ScopeTag("feature"))
    try feature.install(GreetingModule())

    #expect(try feature.resolve((any Greeter).self).greet("Bo") == "Hello, Bo!")
    #expect(throws: ResolutionError.self) { try container.resolve((any Greeter).self) }
  }

  @Test func anInvalidRegistrationInAModuleFailsTheWholeInstall() throws {
    let container = Container()
    let error = try #require(throws: ResolutionError.self) {
      try container.install(GreetingModule(), BrokenModule())
    }
    #expect(error.code == .invalidRegistration)
    #expect(try container.resolveIfRegistered((any Greeter).self) == nil)
  }
}
