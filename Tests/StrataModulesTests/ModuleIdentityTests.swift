import Strata
import StrataModules
import Testing

// Module identities with parameters: equal only for equal values of one type, whatever casts
// between the types would allow.

@Suite struct ModuleIdentityTests {
  @Test func anOptionalParameterIsNotTheValueItWraps() {
    let plain = ModuleID(ParameterModule<Int>.self, 1)
    let wrapped = ModuleID(ParameterModule<Int>.self, Optional(1))
    #expect(plain != wrapped)
    #expect(wrapped != plain)
    #expect(Set([plain, wrapped, plain, wrapped]).count == 2)
    #expect(wrapped == ModuleID(ParameterModule<Int>.self, Optional(1)))
  }

  @Test func modulesWhoseParametersDifferOnlyByOptionalityAreTwoModules() {
    // Both register `Clock`: as two modules, a duplicate.
    let error = #expect(throws: ModuleError.self) {
      try Container(modules: [ParameterModule(parameter: 1), ParameterModule(parameter: Optional(1))])
    }
    #expect(error?.code == .duplicateRegistration)
    #expect(
      error?.modules.map(\.description) == ["ParameterModule<Int>(1)", "ParameterModule<Int>(Optional(1))"])
  }
}
