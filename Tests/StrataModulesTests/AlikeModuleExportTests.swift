import Strata
import StrataModules
import Testing

// Two modules whose names read alike (two nested types named `Feature`) draw the same graph
// whatever order they are installed in.

private enum Payments {
  struct Feature: Module {
    func register(in registry: Registrar) {
      registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
    }
  }
}

private enum Billing {
  struct Feature: Module {
    func register(in registry: Registrar) {
      registry.register(Mailer.self, dependsOn: [.service(Clock.self)]) { _ in Mailer() }
    }
  }
}

@Suite struct AlikeModuleExportTests {
  @Test(arguments: [GraphFormat.text, .dot, .mermaid])
  func modulesThatReadAlikeAreDrawnInTheSameOrderWhateverTheirInstallationOrder(format: GraphFormat) throws {
    let one = try Container(modules: [Payments.Feature(), Billing.Feature()])
    let two = try Container(modules: [Billing.Feature(), Payments.Feature()])
    let three = Container()
    try three.install(Billing.Feature())
    try three.install(Payments.Feature())
    #expect(one.exportGraph(as: format) == two.exportGraph(as: format))
    #expect(one.exportGraph(as: format) == three.exportGraph(as: format))
  }

  @Test func theTextTreeListsThemByWhatTheyRegister() throws {
    let container = try Container(modules: [Billing.Feature(), Payments.Feature()])
    #expect(
      container.exportGraph(as: .text) == """
        scope root
          module Feature
            Clock [singleton, unchecked]
          module Feature
            Mailer [transient]
              → Clock
        """)
  }
}
