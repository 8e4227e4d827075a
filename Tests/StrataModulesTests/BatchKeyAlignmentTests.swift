import Strata
import StrataModules
import Testing

/// A batch's keys are recorded beside its registrations as they are staged, and read from there
/// by the duplicate check and the registry's index. Wherever the batch changes between staging
/// and publication (forwards appended, replaced registrations left out), the keys must follow:
/// a key filed under another registration's slot would hand out an instance of the wrong type.
@Suite struct BatchKeyAlignmentTests {
  fileprivate protocol Labelled: Sendable {
    var label: String { get }
  }
  fileprivate struct Alpha: Labelled { let label: String }
  fileprivate struct Beta: Labelled { let label: String }
  fileprivate struct Gamma: Labelled { let label: String }

  /// Registers 10 named `Gamma`s, `Alpha`, `Beta` (forwarded to `any Labelled` when asked), and 10
  /// more `Gamma`s: what an override leaves out sits between registrations that stay.
  fileprivate struct Base: Module {
    let forward: Bool
    func register(in registry: Registrar) {
      for number in 0..<10 {
        registry.register(Gamma.self, name: number) { _ in Gamma(label: "gamma \(number)") }
      }
      registry.register(Alpha.self) { _ in Alpha(label: "base alpha") }
      let beta = registry.register(Beta.self) { _ in Beta(label: "base beta") }
      if forward { beta.forwarding(to: (any Labelled).self) }
      for number in 10..<20 {
        registry.register(Gamma.self, name: number) { _ in Gamma(label: "gamma \(number)") }
      }
    }
  }

  /// Replaces `Alpha` and `Beta` (an override leaves the replaced ones out of the batch).
  fileprivate struct Replacement: Module {
    func register(in registry: Registrar) {
      registry.register(Alpha.self) { _ in Alpha(label: "replaced alpha") }
      registry.register(Beta.self) { _ in Beta(label: "replaced beta") }
    }
  }

  /// Registers `any Labelled` itself, which `Base`'s forward also registers.
  fileprivate struct Clashing: Module {
    func register(in registry: Registrar) {
      registry.register((any Labelled).self) { _ in Gamma(label: "clashing") }
    }
  }

  @Test(arguments: [false, true])
  func afterOverridesLeaveRegistrationsOutEveryKeyFindsItsOwn(forward: Bool) throws {
    let container = try Container(modules: [Base(forward: forward).overridden(by: Replacement())])
    #expect(try container.resolve(Alpha.self).label == "replaced alpha")
    #expect(try container.resolve(Beta.self).label == "replaced beta")
    #expect(try container.resolveAll(Alpha.self).map(\.label) == ["replaced alpha"])
    for number in 0..<20 {
      #expect(try container.resolve(Gamma.self, name: number).label == "gamma \(number)")
    }
    if forward {
      // The forward follows the replacement.
      #expect(try container.resolve((any Labelled).self).label == "replaced beta")
    }
    #expect(container.registrations.count == 22 + (forward ? 1 : 0))
  }

  @Test func aForwardsKeyIsCheckedForDuplicatesLikeAnyOther() throws {
    let error = #expect(throws: ModuleError.self) {
      try Container(modules: [Base(forward: true), Clashing()])
    }
    #expect(error?.code == .duplicateRegistration)
    #expect(error?.modules.count == 2)
    #expect(error.map { "\($0)" }?.contains("Labelled") == true)
  }

  @Test func withForwardsInTheBatchEveryKeyFindsItsOwn() throws {
    let container = try Container(modules: [Base(forward: true)])
    #expect(try container.resolve((any Labelled).self).label == "base beta")
    #expect(try container.resolve(Alpha.self).label == "base alpha")
    for number in 0..<20 {
      #expect(try container.resolve(Gamma.self, name: number).label == "gamma \(number)")
    }
  }
}
