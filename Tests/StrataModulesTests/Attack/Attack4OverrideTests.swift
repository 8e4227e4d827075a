import Strata
import StrataModules
import Testing

/// The app's plugin, one of those `resolveAll` lists.
private struct AppPluginsModule: Module {
  func register(in registry: Registrar) {
    registry.register(String.self, name: "plugin") { _ in "app" }
  }
}

/// Test doubles that register three fake plugins in a loop: one source line, three registrations.
private struct LoopedFakesModule: Module {
  func register(in registry: Registrar) {
    for label in ["fake 1", "fake 2", "fake 3"] {
      registry.register(String.self, name: "plugin") { _ in label }
    }
  }
}

/// The same three fakes, as overrides, in a loop.
private struct LoopedOverridesModule: Module {
  func register(in registry: Registrar) {
    for label in ["fake 1", "fake 2", "fake 3"] {
      registry.register(String.self, name: "plugin") { _ in label }.overriding()
    }
  }
}

/// The same three fakes, one line each.
private struct LinedFakesModule: Module {
  func register(in registry: Registrar) {
    registry.register(String.self, name: "plugin") { _ in "fake 1" }
    registry.register(String.self, name: "plugin") { _ in "fake 2" }
    registry.register(String.self, name: "plugin") { _ in "fake 3" }
  }
}

/// Overrides against the Modules article: "One module may still register a key several times
/// (for `resolveAll`)", and an override replaces "the registrations of its key made by the other
/// modules of the same installation" — never the override module's own.
@Suite struct Attack4OverrideTests {
  /// Three fakes registered on three lines replace the app's plugin and are all listed; a plain
  /// module registering them in a loop lists all three too.
  @Test func severalReplacementsOfAKeyOnSeveralLinesAreAllListed() throws {
    let lined = try Container(modules: [AppPluginsModule().overridden(by: LinedFakesModule())])
    #expect(try lined.resolveAll(String.self, name: "plugin") == ["fake 1", "fake 2", "fake 3"])
    let plain = try Container(modules: [LoopedFakesModule()])
    #expect(try plain.resolveAll(String.self, name: "plugin") == ["fake 1", "fake 2", "fake 3"])
  }

  /// The same fakes registered in a loop (one source line) by a replacement, or as `.overriding()`
  /// registrations: the override check took registrations of one module from one line for one
  /// replacement registered twice (a replacement shared by two compositions) and dropped all but
  /// the last, so `resolveAll` listed only "fake 3". It now tells the runs of a module apart.
  @Test
  func severalReplacementsOfAKeyMadeInALoopAreAllListed() throws {
    let composed = try Container(modules: [AppPluginsModule().overridden(by: LoopedFakesModule())])
    let composedAll = try composed.resolveAll(String.self, name: "plugin")
    #expect(composedAll == ["fake 1", "fake 2", "fake 3"], "\(composedAll)")
    let overriding = try Container(modules: [AppPluginsModule(), LoopedOverridesModule()])
    let overridingAll = try overriding.resolveAll(String.self, name: "plugin")
    #expect(overridingAll == ["fake 1", "fake 2", "fake 3"], "\(overridingAll)")
  }

  /// The same loop in a child scope's installation, where the app's plugin stays listed first
  /// ("Registrations of an ancestor scope … `resolveAll` lists them first and the override last").
  @Test
  func severalReplacementsMadeInALoopInASessionAreAllListedAfterTheAncestors() throws {
    let container = try Container(modules: [AppPluginsModule()])
    let session = try container.makeScope(.session, modules: [LoopedOverridesModule()])
    defer { try? session.close() }
    let all = try session.resolveAll(String.self, name: "plugin")
    #expect(all == ["app", "fake 1", "fake 2", "fake 3"], "\(all)")
  }
}
