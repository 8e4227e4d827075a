import Strata
import Testing

/// A name that prints as a registered one of the same type, yet is not found: the hint says why
/// (the values are not `==`, or `==` and `hash(into:)` disagree), not that the types differ.
@Suite struct LookalikeNameTests {
  /// Compared by identity: only the same object is an equal name.
  final class SessionToken: Hashable, Sendable, CustomStringConvertible {
    static func == (lhs: SessionToken, rhs: SessionToken) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    var description: String { "token" }
  }

  /// A faulty conformance: `==` compares `text`, the hash also combines `revision`.
  struct FaultyName: Hashable, Sendable, CustomStringConvertible {
    let text: String
    let revision: Int
    static func == (lhs: FaultyName, rhs: FaultyName) -> Bool { lhs.text == rhs.text }
    func hash(into hasher: inout Hasher) {
      hasher.combine(text)
      hasher.combine(revision)
    }
    var description: String { "\(text)#\(revision)" }
  }

  @Test func aNaNNameIsNotEqualToItself() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: 1.5) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: Double.nan) { _ in Widget(id: 2) }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: Double.nan)
    }
    #expect(error.code == .notRegistered)
    #expect(
      error.hint
        == "`Widget` is registered under a name of type `Double` that prints as `nan` but is not "
        + "equal (`==`) to the `nan` resolved with: a name is found only by a value `==` to it "
        + "(`Double.nan` equals nothing; an object compared by identity, only itself)")
  }

  @Test func anObjectNameComparedByIdentityMatchesOnlyItself() throws {
    let registered = SessionToken()
    let container = try Container { registry in
      registry.register(Widget.self, name: registered) { _ in Widget(id: 1) }
    }
    #expect(try container.resolve(Widget.self, name: registered).id == 1)
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: SessionToken())
    }
    #expect(error.code == .notRegistered)
    #expect(
      error.hint?.hasPrefix("`Widget` is registered under a name of type `SessionToken` that prints") == true)
    #expect(error.hint?.contains("a name's type is part of the key") == false)
  }

  @Test func anEqualNameWithAnotherHashIsBlamedOnItsConformance() throws {
    // More names than a linear scan covers, so the lookup hashes the name.
    let container = try Container { registry in
      for index in 0..<12 {
        registry.register(Widget.self, name: FaultyName(text: "n\(index)", revision: 1)) { _ in
          Widget(id: index)
        }
      }
    }
    #expect(try container.resolve(Widget.self, name: FaultyName(text: "n7", revision: 1)).id == 7)
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: FaultyName(text: "n7", revision: 2))
    }
    #expect(error.code == .notRegistered)
    #expect(
      error.hint
        == "`Widget` is registered under a name equal (`==`) to `n7#2` but with another hash value: "
        + "`FaultyName`'s `hash(into:)` must combine exactly what its `==` compares")
  }
}
