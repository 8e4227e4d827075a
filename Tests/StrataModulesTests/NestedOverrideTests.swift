import Strata
import StrataModules
import Testing

private final class LayeredClock: Sendable {
  let label: String
  init(_ label: String) { self.label = label }
}

private final class LayeredMailer: Sendable {
  let label: String
  init(_ label: String) { self.label = label }
}

private struct LayeredBase: Module {
  func register(in registry: Registrar) {
    registry.register(LayeredClock.self, lifetime: .singleton) { _ in LayeredClock("base") }
    registry.register(LayeredMailer.self, lifetime: .singleton) { _ in LayeredMailer("base") }
  }
}

private struct LayeredFirst: Module {
  func register(in registry: Registrar) {
    registry.register(LayeredClock.self, lifetime: .singleton) { _ in LayeredClock("first") }
    registry.register(LayeredMailer.self, lifetime: .singleton) { _ in LayeredMailer("first") }
  }
}

private struct LayeredSecond: Module {
  func register(in registry: Registrar) {
    registry.register(LayeredClock.self, lifetime: .singleton) { _ in LayeredClock("second") }
  }
}

private struct LayeredOther: Module {
  func register(in registry: Registrar) {
    registry.register(LayeredClock.self, lifetime: .singleton) { _ in LayeredClock("other") }
  }
}

/// Compositions layer: `base.overridden(by: a).overridden(by: b)` is `b` replacing what `a`
/// replaced `base` with. Both layers overriding one key was a `duplicateOverride`.
@Suite struct NestedOverrideTests {
  @Test func anOuterReplacementWinsOverAnInnerOne() throws {
    let container = try Container(modules: [
      LayeredBase().overridden(by: LayeredFirst()).overridden(by: LayeredSecond())
    ])
    #expect(try container.resolve(LayeredClock.self).label == "second")
    #expect(try container.resolveAll(LayeredClock.self).map(\.label) == ["second"])
    // What only the inner layer replaced stays replaced.
    #expect(try container.resolve(LayeredMailer.self).label == "first")
    #expect(try container.resolveAll(LayeredMailer.self).map(\.label) == ["first"])
  }

  @Test func aCompositionAsAReplacementKeepsItsOwnLayers() throws {
    let container = try Container(modules: [
      LayeredBase().overridden(by: LayeredFirst().overridden(by: LayeredSecond()))
    ])
    #expect(try container.resolve(LayeredClock.self).label == "second")
    #expect(try container.resolve(LayeredMailer.self).label == "first")
  }

  /// The inner composition listed beside the outer one loads first; the outer replacements still
  /// rank above it.
  @Test func anOuterLayerOverridesAnInnerCompositionListedBesideIt() throws {
    let inner = LayeredBase().overridden(by: LayeredFirst())
    let container = try Container(modules: [inner, inner.overridden(by: LayeredSecond())])
    #expect(try container.resolve(LayeredClock.self).label == "second")
    #expect(try container.resolve(LayeredMailer.self).label == "first")
  }

  @Test func twoReplacementsOfOneLayerForOneKeyAreStillADuplicate() throws {
    #expect {
      _ = try Container(modules: [LayeredBase().overridden(by: LayeredSecond(), LayeredOther())])
    } throws: { ($0 as? ModuleError)?.code == .duplicateOverride }
  }
}
