import Strata
import Testing

/// A registration's location is recorded from the `#fileID` literal and read as text only when
/// someone asks; both ways of making a location must agree.
@Suite struct SourceLocationTests {
  @Test func aRegistrationRecordsTheFileAndLineOfItsCall() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
    }

    let location = try #require(container.registrations.first).registeredAt

    #expect(location.fileID == "StrataTests/SourceLocationTests.swift")
    #expect(location.line == line)
    #expect(location.description == "StrataTests/SourceLocationTests.swift:\(line)")
  }

  @Test func aRecordedLocationEqualsOneMadeFromText() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
    }
    let recorded = try #require(container.registrations.first).registeredAt
    let typed = SourceLocation(fileID: "StrataTests/SourceLocationTests.swift", line: line)

    #expect(recorded == typed)
    #expect(Set([recorded, typed]).count == 1)
    #expect(recorded != SourceLocation(fileID: "StrataTests/SourceLocationTests.swift", line: line + 1))
    #expect(recorded != SourceLocation(fileID: "StrataTests/Other.swift", line: line))
  }
}
