import Strata
import StrataModules
import Testing

private final class MissingService: Sendable {}

/// A module whose hook resolves a service nobody registered.
private struct ResolvingHookModule: Module {
  func register(in registry: Registrar) { registry.register(Int.self, name: "hooked") { _ in 1 } }
  func loaded(in scope: Scope) throws { _ = try scope.resolve(MissingService.self) }
}

/// A failing hook's error reads as one message line and one hint, the hook's error's hint first.
@Suite struct HookErrorTextTests {
  @Test func aHookThatFailsToResolveGivesOneMessageLineAndOneHint() throws {
    let container = Container()
    let error = try #require(
      #expect(throws: ModuleError.self) { try container.install(ResolvingHookModule()) })
    #expect(error.code == .loadHookFailed)
    #expect(
      error.message
        == "the loaded(in:) hook of ResolvingHookModule threw: notRegistered: nothing is registered for "
        + "`MissingService`")
    #expect(
      error.description == """
        loadHookFailed: \(error.message)
          hint: register it, e.g. `registry.register(MissingService.self) { resolver in … }`, or check \
        that the module providing it is loaded in this scope or one above it; the modules' registrations \
        are published; fix the hook or what it resolves
        """)
  }
}
