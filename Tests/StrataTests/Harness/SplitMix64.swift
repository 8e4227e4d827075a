/// A small deterministic pseudo-random generator (SplitMix64), so that a seed replays exactly.
struct SplitMix64 {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  /// The next 64 random bits.
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }

  /// A number in `0..<bound`; `bound` must be positive.
  mutating func below(_ bound: Int) -> Int {
    Int(next() % UInt64(bound))
  }

  /// A number in `range`.
  mutating func within(_ range: ClosedRange<Int>) -> Int {
    range.lowerBound + below(range.count)
  }

  /// `true` with probability `percent` / 100.
  mutating func percent(_ percent: Int) -> Bool {
    below(100) < percent
  }

  /// One of `elements`, which must not be empty.
  mutating func pick<Element>(_ elements: [Element]) -> Element {
    elements[below(elements.count)]
  }

  /// One of `choices`, each as likely as its weight.
  mutating func weighted<Element>(_ choices: [(Int, Element)]) -> Element {
    var roll = below(choices.reduce(0) { $0 + $1.0 })
    for (weight, element) in choices {
      if roll < weight { return element }
      roll -= weight
    }
    return choices[choices.count - 1].1
  }
}
