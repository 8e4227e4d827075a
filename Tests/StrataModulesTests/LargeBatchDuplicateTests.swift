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

/// The registry level of a module installation is built from the index the duplicate check made
/// (the batch's keys are hashed once): a key a module registers more than once, among thousands,
/// must still end with its last registration and list every one in order, exactly as the same
/// registrations made without modules do.
@Suite struct ReusedIndexTests {
  /// Registers `Int` under the names 0..<count, and `String` three times (unnamed and under the
  /// name `-1`) at the start, the middle and the end.
  fileprivate struct RepeatingModule: Module {
    let count: Int

    func register(in registry: Registrar) {
      Self.registrations(count: count, in: registry)
    }

    static func registrations(count: Int, in registry: Registrar) {
      for copy in 0..<3 {
        registry.register(String.self) { _ in "unnamed \(copy)" }
        registry.register(String.self, name: -1) { _ in "named \(copy)" }
        for number in copy * count / 3..<(copy + 1) * count / 3 {
          registry.register(Int.self, name: number) { _ in number }
        }
      }
    }
  }

  @Test(arguments: [30, 6_000])
  func aKeyRegisteredThriceByOneModuleEndsWithItsLastAndListsAll(count: Int) throws {
    let withModules = try Container(modules: [RepeatingModule(count: count)])
    let without = try Container { RepeatingModule.registrations(count: count, in: $0) }
    for container in [withModules, without] {
      #expect(try container.resolve(String.self) == "unnamed 2")
      #expect(try container.resolve(String.self, name: -1) == "named 2")
      #expect(try container.resolveAll(String.self) == ["unnamed 0", "unnamed 1", "unnamed 2"])
      #expect(try container.resolveAll(String.self, name: -1) == ["named 0", "named 1", "named 2"])
      #expect(try container.resolve(Int.self, name: count - 1) == count - 1)
      #expect(container.registrations.count == count + 6)
    }
  }
}
