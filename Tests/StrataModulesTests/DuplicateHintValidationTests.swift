import Strata
import StrataModules
import Testing

/// Registers the clock, as a session's feature would.
private struct SessionClockModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton, dependsOn: []) { _ in Clock() }
  }
}

/// Registers the clock too, installed in the container after the session's feature.
private struct ContainerClockModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton, dependsOn: []) { _ in Clock() }
  }
}

/// Validation finds a key two modules register in a scope and its ancestor (installed in an order
/// the install-time check cannot see), and its hint offers both ways to declare an override, as
/// the install-time error does.
@Suite struct DuplicateHintValidationTests {
  @Test func aDuplicateFoundByValidationOffersBothWaysToOverride() throws {
    let container = Container()
    let session = try container.makeScope(.session)
    try session.install(SessionClockModule())
    try container.install(ContainerClockModule())

    let error = try #require(throws: ValidationError.self) { try session.validate() }

    let duplicate = try #require(error.problems.first { $0.code == .duplicateRegistration })
    #expect(
      duplicate.hint
        == "keep one of them, or declare the later one an override: `.overriding()` on its registration, "
        + "or install `base.overridden(by: replacement)`")
  }
}
