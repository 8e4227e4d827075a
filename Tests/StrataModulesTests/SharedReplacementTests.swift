import Strata
import StrataModules
import Testing

private final class SharedClock: Sendable {
  let source: String
  init(_ source: String) { self.source = source }
}
private final class AdminMailer: Sendable {}

private struct ClockApp: Module {
  func register(in registry: Registrar) {
    registry.register(SharedClock.self, lifetime: .singleton, dependsOn: []) { _ in SharedClock("app") }
  }
}
private struct AdminApp: Module {
  func register(in registry: Registrar) {
    registry.register(AdminMailer.self, dependsOn: []) { _ in AdminMailer() }
  }
}
private struct FixedClock: Module {
  func register(in registry: Registrar) {
    registry.register(SharedClock.self, lifetime: .singleton, dependsOn: []) { _ in SharedClock("fixed") }
  }
}

/// One replacement module in two compositions of one installation (a fake applied to two app
/// modules) stands once: one registration, one singleton.
@Suite struct SharedReplacementTests {
  @Test func aReplacementSharedByTwoCompositionsRegistersOnce() throws {
    for modules: [any Module] in [
      [ClockApp().overridden(by: FixedClock()), AdminApp().overridden(by: FixedClock())],
      [AdminApp().overridden(by: FixedClock()), ClockApp().overridden(by: FixedClock())],
    ] {
      let container = try Container(modules: modules)
      let all = try container.resolveAll(SharedClock.self)
      #expect(all.map(\.source) == ["fixed"])
      #expect(try container.resolve(SharedClock.self) === container.resolve(SharedClock.self))
      #expect(container.registrations.filter { $0.key.serviceType == SharedClock.self }.count == 1)
    }
  }
}
