import Strata
import StrataModules
import Testing

/// The duplicate check over installations of thousands of registrations, where its index of
/// keys is past the size at which it may be three quarters full: a key registered by two modules
/// is found wherever it sits, and thousands of distinct names are not mistaken for duplicates.
@Suite struct LargeBatchDuplicateTests {
  /// Registers `Int` services under the names `range`, and `String` under `shared` if given.
  fileprivate struct NumberedModule: Module {
    let id: Int
    let range: Range<Int>
    var shared: Int? = nil

    var moduleID: ModuleID { ModuleID(Self.self, id) }

    func register(in registry: Registrar) {
      for number in range {
        registry.register(Int.self, name: number) { _ in number }
      }
      if let shared {
        registry.register(String.self, name: shared) { _ in "module \(id)" }
      }
    }
  }

  @Test func thousandsOfDistinctNamesInTwoModulesAreNoDuplicate() throws {
    let container = try Container(modules: [
      NumberedModule(id: 1, range: 0..<3_000), NumberedModule(id: 2, range: 3_000..<6_000),
    ])
    #expect(container.registrations.count == 6_000)
    for number in stride(from: 0, to: 6_000, by: 599) {
      #expect(try container.resolve(Int.self, name: number) == number)
    }
  }

  @Test(arguments: [0, 2_999, 5_999])
  func aNameRegisteredByTwoOfThousandsIsADuplicateNamingBoth(at number: Int) throws {
    let error = try #require(throws: ModuleError.self) {
      try Container(modules: [
        NumberedModule(id: 1, range: 0..<3_000, shared: number),
        NumberedModule(id: 2, range: 3_000..<6_000, shared: number),
      ])
    }
    #expect(error.code == .duplicateRegistration)
    #expect(error.modules == [ModuleID(NumberedModule.self, 1), ModuleID(NumberedModule.self, 2)])
  }
}
