import Strata
import StrataModules
import Synchronization
import Testing

/// Counts how often any `CountedRegion` was described.
private let descriptions = Atomic<Int>(0)

/// A module parameter that counts its descriptions.
private struct CountedRegion: Hashable, Sendable, CustomStringConvertible {
  let code: String
  var description: String {
    descriptions.add(1, ordering: .sequentiallyConsistent)
    return "region \(code)"
  }
}

private struct RegionModule: Module {
  let region: CountedRegion
  var moduleID: ModuleID { ModuleID(Self.self, region) }
  func register(in registry: Registrar) {
    registry.register(Clock.self, name: region.code) { _ in Clock() }
  }
}

/// A module's name (its type, and its parameter described) is made when a message, a report or
/// an export first reads it, not when the module is installed: describing a parameter reflects on
/// it, which was an eighth of building a container of many small modules.
@Suite(.serialized) struct LazyModuleNameTests {
  @Test func installingModulesDescribesNoParameterAndReadingNamesDescribesEachOnce() throws {
    let before = descriptions.load(ordering: .sequentiallyConsistent)
    let container = try Container(
      modules: ["eu", "us", "ap"].map { RegionModule(region: CountedRegion(code: $0)) })
    #expect(descriptions.load(ordering: .sequentiallyConsistent) == before)

    let modules = container.registrations.compactMap(\.module).sorted()
    #expect(modules.count == 3)
    #expect(modules.allSatisfy { $0.hasPrefix("RegionModule(") && $0.contains("region ") }, "\(modules)")
    let afterFirstRead = descriptions.load(ordering: .sequentiallyConsistent)
    #expect(afterFirstRead > before)

    // Read again, and through an export: the names are kept, nothing is described again.
    #expect(container.registrations.compactMap(\.module).sorted() == modules)
    let export = container.exportGraph(as: .text)
    #expect(modules.allSatisfy { export.contains($0) }, "\(export)")
    #expect(descriptions.load(ordering: .sequentiallyConsistent) == afterFirstRead)
  }
}
