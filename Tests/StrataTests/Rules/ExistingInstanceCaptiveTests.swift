import Strata
import Testing

private final class Unit: Sendable {}

private final class AmbientHolder: Sendable {
  let unit: Unit
  init(unit: Unit) { self.unit = unit }
}

private final class LazyHolder: Sendable {
  let unit: Lazy<Unit>
  init(unit: Lazy<Unit>) { self.unit = unit }
}

/// Whether a singleton reaching an untagged scoped service is a captive dependency does not
/// depend on whether that scoped instance exists already: the top-level shortcut for an existing
/// instance used to hand it to the singleton (through `Scope.current` or a `Lazy`) without
/// consulting the lifetime rules, so the error came or went with what was resolved before.
@Suite struct ExistingInstanceCaptiveTests {
  private func container() throws -> Container {
    try Container { registry in
      registry.register(Unit.self, lifetime: .scoped) { _ in Unit() }
      registry.register(AmbientHolder.self, lifetime: .singleton) { _ in
        AmbientHolder(unit: try Scope.current?.resolve(Unit.self) ?? Unit())
      }
      registry.register(LazyHolder.self, lifetime: .singleton, LazyHolder.init)
    }
  }

  private func isCaptive(_ error: any Error) -> Bool {
    (error as? ResolutionError)?.code == .captiveDependency
  }

  @Test(arguments: [false, true])
  func throughTheCurrentScope(unitExists: Bool) throws {
    let container = try container()
    if unitExists { _ = try container.resolve(Unit.self) }
    #expect(performing: { try container.resolve(AmbientHolder.self) }, throws: isCaptive)
  }

  @Test(arguments: [false, true])
  func throughALazy(unitExists: Bool) throws {
    let container = try container()
    let holder = try container.resolve(LazyHolder.self)
    if unitExists { _ = try container.resolve(Unit.self) }
    #expect(performing: { try holder.unit.value }, throws: isCaptive)
  }

  /// Outside any factory the shortcut still answers: the same instance, twice.
  @Test func aTopLevelResolveStillGetsTheExistingInstance() throws {
    let container = try container()
    let request = try container.makeScope(.request)
    #expect(try request.resolve(Unit.self) === request.resolve(Unit.self))
  }
}
