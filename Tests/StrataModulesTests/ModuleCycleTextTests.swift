import Strata
import StrataModules
import Testing

// A cycle among modules reads the same whichever of its modules the application lists or
// requires first.

/// A module named `name` that requires the modules `edges` lists for it.
private struct Node: Module {
  let name: String
  let edges: [String: [String]]
  var moduleID: ModuleID { ModuleID(Self.self, name) }
  var requires: [any Module] { (edges[name] ?? []).map { Node(name: $0, edges: edges) } }
  func register(in registry: Registrar) {}
}

@Suite struct ModuleCycleTextTests {
  private let cycleText = """
    moduleCycle: module cycle: Node("alpha") → Node("beta") → Node("gamma") → Node("alpha")
      hint: a module cannot require itself, directly or through others; move what they share into \
    a module both require
    """

  @Test(arguments: [["alpha"], ["beta"], ["gamma"], ["root"], ["gamma", "alpha"], ["beta", "root"]])
  func aCycleReadsTheSameWhicheverModuleItIsEnteredBy(roots: [String]) throws {
    let edges = ["alpha": ["beta"], "beta": ["gamma"], "gamma": ["alpha"], "root": ["gamma"]]
    let container = Container()
    let error = try #require(throws: ModuleError.self) {
      try container.install(roots.map { Node(name: $0, edges: edges) })
    }
    #expect(error.description == cycleText)
    #expect(container.installedModules.isEmpty)
  }

  @Test func aModuleRequiringItselfIsACycleOfOne() throws {
    let error = try #require(throws: ModuleError.self) {
      try Container(modules: [Node(name: "self", edges: ["self": ["self"]])])
    }
    #expect(error.message == #"module cycle: Node("self") → Node("self")"#)
  }
}
