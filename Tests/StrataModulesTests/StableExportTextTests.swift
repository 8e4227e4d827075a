import Strata
import StrataModules
import Testing

/// A module whose parameter and whose service's name are a `Set` and a `Dictionary`.
private struct RegionsModule: Module {
  var moduleID: ModuleID {
    ModuleID(Self.self, Set(["eu-west", "us-east", "ap-south", "sa-east", "af-south"]))
  }
  func register(in registry: Registrar) {
    registry.register(Int.self, name: Set(["e", "c", "a", "d", "b"]), dependsOn: []) { _ in 1 }
    registry.register(Int.self, name: ["z": 1, "y": 2, "x": 3], dependsOn: []) { _ in 2 }
  }
}

/// Names and module parameters print the same in every process: sets and dictionaries sorted.
@Suite struct StableExportTextTests {
  @Test func setsAndDictionariesPrintSorted() throws {
    let container = try Container(modules: [RegionsModule()])
    let text = container.exportGraph(as: .text)
    #expect(text.contains(#"RegionsModule(["af-south", "ap-south", "eu-west", "sa-east", "us-east"])"#))
    #expect(text.contains(#"Int named ["a", "b", "c", "d", "e"]"#))
    #expect(text.contains(#"Int named ["x": 3, "y": 2, "z": 1]"#))
  }
}
