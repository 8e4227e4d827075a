import Testing

@testable import Strata

/// A name type whose every value hashes alike: the index must tell them apart by `==` alone.
private struct SameHashName: Hashable, Sendable {
  let value: Int

  func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

/// `KeyIndex`, the index of a run's distinct keys that a registry level and a module
/// installation's duplicate check are built from: it must find every earlier occurrence of a key,
/// and only that, however the keys hash.
@Suite struct KeyIndexTests {
  /// What the index should answer, worked out with a dictionary: for each position, the entry of
  /// its key (in first-appearance order) and whether this is the key's first occurrence.
  private static func expected(_ keys: [ServiceKey]) -> [(entry: Int, inserted: Bool)] {
    var entries: [ServiceKey: Int] = [:]
    return keys.map { key in
      if let entry = entries[key] { return (entry, false) }
      entries[key] = entries.count
      return (entries.count - 1, true)
    }
  }

  private static func check(_ keys: [ServiceKey]) {
    var index = KeyIndex(over: keys)
    let answers = keys.indices.map { index.insert(at: $0) }
    let expected = expected(keys)
    let wrong = zip(answers, expected).enumerated().filter { $1.0 != $1.1 }.map(\.offset)
    #expect(wrong.isEmpty, "wrong answers at positions \(wrong.prefix(10))")
    #expect(index.newest.count == Set(keys).count)
    // Each entry holds a position of its own key (the first, as nothing moved it).
    for (entry, position) in index.newest.enumerated() {
      #expect(expected[position] == (entry, true))
    }
  }

  @Test func repeatedKeysAreFoundAndNewOnesAdded() {
    let keys = [
      ServiceKey(Widget.self, name: nil), ServiceKey(Greeting.self, name: nil),
      ServiceKey(Widget.self, name: nil), ServiceKey(Widget.self, name: ServiceName(1)),
      ServiceKey(Widget.self, name: ServiceName("1")), ServiceKey(Widget.self, name: ServiceName(1)),
      ServiceKey(Greeting.self, name: nil), ServiceKey(Widget.self, name: ServiceName("1")),
    ]
    Self.check(keys)
  }

  @Test func namesThatHashAlikeAreToldApartByEquality() {
    let keys = (0..<300).map { ServiceKey(Widget.self, name: ServiceName(SameHashName(value: $0 % 100))) }
    Self.check(keys)
  }

  @Test func tensOfThousandsOfKeysWithRepeatsAcrossTheTableGrowth() {
    // 12,000 positions over 9,000 distinct names of two types: past the size at which a table
    // is allowed three quarters full.
    var generator = SplitMix64(seed: 7)
    let keys = (0..<12_000).map { _ -> ServiceKey in
      let number = generator.below(9_000)
      return number.isMultiple(of: 2)
        ? ServiceKey(Widget.self, name: ServiceName(number))
        : ServiceKey(Greeting.self, name: ServiceName(UInt16(number)))
    }
    Self.check(keys)
  }
}
