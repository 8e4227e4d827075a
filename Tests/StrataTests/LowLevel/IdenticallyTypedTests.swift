import Strata
import Testing

/// An object whose lifetime the tests watch through a weak reference.
private final class Tracked: Sendable {
  init() {}
}

extension LowLevel {
  /// `identicallyTyped(_:as:)`, which hands a value known only through an opened existential to
  /// code that names its type: the same type passes through with its references intact, any other
  /// type is refused.
  @Suite struct IdenticallyTypedTests {
    @Test func aValueOfTheSameTypePassesThroughAndIsFreedOnce() throws {
      weak var released: Tracked?
      do {
        let object = Tracked()
        released = object
        let same = try identicallyTyped(object, as: Tracked.self)
        #expect(same === object)
        let text = String(repeating: "x", count: 40)
        #expect(try identicallyTyped(text, as: String.self) == text)
        let pair: (Tracked, Int) = (object, 7)
        let copied = try identicallyTyped(pair, as: (Tracked, Int).self)
        #expect(copied.0 === object && copied.1 == 7)
      }
      #expect(released == nil, "every copy was given back")
    }

    @Test func anotherTypeIsRefused() {
      #expect(throws: TypeMismatch.self) { try identicallyTyped(1, as: Int8.self) }
      #expect(throws: TypeMismatch.self) { try identicallyTyped(Tracked(), as: AnyObject.self) }
      #expect(throws: TypeMismatch.self) { try identicallyTyped("a", as: Substring.self) }
    }

    @Test func anOpenedExistentialReachesItsNamedType() throws {
      func open<Value>(_ value: Value) throws -> Int { try identicallyTyped(value, as: Int.self) }
      let values: [Any] = [1, 2, 3]
      #expect(try values.map { try open($0) } == [1, 2, 3])
      #expect(throws: TypeMismatch.self) { try open("1" as Any) }
    }
  }
}
