/// The distinct keys of a run of keys, in the order they first appear, each with the position of
/// one of its occurrences in the run (`newest`, which the caller keeps up to date): an
/// open-addressing index hashed from the key's bits with a multiply, rather than a `Set` or a
/// `Dictionary` of keys, whose SipHash was a third of the cost of building a container, and which
/// would copy every key.
///
/// The index refers to the run's own array of keys (shared, not copied) and keeps 4 bytes per
/// slot and 8 per distinct key: at 10,000 keys, 144 KB where a `Set<ServiceKey>` took 386 KB.
/// Sized like a ``KeyTable`` of as many keys.
package struct KeyIndex {
  /// The run's keys, by position.
  package let keys: [ServiceKey]
  /// One position in the run per distinct key, in first-appearance order; every position an entry
  /// holds has an equal key.
  package var newest: [Int] = []
  /// Entries of `newest`, or -1 for an empty slot.
  private var slots: [Int32]
  private let shift: UInt

  /// An empty index over `keys`; ``insert(at:)`` adds them.
  package init(over keys: [ServiceKey]) {
    let size = KeyTable.capacity(for: keys.count)
    self.keys = keys
    slots = Array(repeating: -1, count: size)
    shift = UInt(UInt.bitWidth - size.trailingZeroBitCount)
    newest.reserveCapacity(keys.count)
  }

  /// Finds the key at `position`, or adds it with that position: its entry in `newest`, and
  /// whether it was added.
  package mutating func insert(at position: Int) -> (entry: Int, inserted: Bool) {
    let key = keys[position]
    let mask = slots.count - 1
    var slot = hash(key)
    while true {
      let entry = Int(slots[slot])
      if entry < 0 {
        slots[slot] = Int32(truncatingIfNeeded: newest.count)
        newest.append(position)
        return (newest.count - 1, true)
      }
      if keys[newest[entry]] == key { return (entry, false) }
      slot = (slot + 1) & mask
    }
  }

  private func hash(_ key: ServiceKey) -> Int {
    var bits = key.service.bits &* 0x9E37_79B9_7F4A_7C15
    bits ^= (key.arguments.bits &* 0xC2B2_AE3D_27D4_EB4F) >> 7
    if let name = key.name {
      bits ^= (name.typeID ^ UInt(bitPattern: name.valueHash)) &* 0x1656_67B1_9E37_79F9
    }
    return Int(truncatingIfNeeded: bits >> shift)
  }
}

/// A run's keys indexed once for every pass that needs to know which positions repeat a key: a
/// module installation's duplicate check, then the registry level the batch becomes, which so
/// does not hash and probe every key a second time.
///
/// Holds the complete ``KeyIndex`` (every position inserted, `newest` still the first position of
/// each key) and the entry of each position.
package struct IndexedKeys {
  package let index: KeyIndex
  private let entries: [Int32]

  /// Indexes every position of `keys`.
  package init(_ keys: [ServiceKey]) {
    var index = KeyIndex(over: keys)
    entries = keys.indices.map { Int32(truncatingIfNeeded: index.insert(at: $0).entry) }
    self.index = index
  }

  /// The entry in `index.newest` of the key at `position`.
  package func entry(at position: Int) -> Int { Int(entries[position]) }

  /// Whether `position` holds the first occurrence of its key.
  package func isFirstOccurrence(_ position: Int) -> Bool {
    index.newest[entry(at: position)] == position
  }
}

/// Where a ``ReviewedBatch`` keeps the ``IndexedKeys`` a review made, for the registry level
/// published after it. Used on the thread publishing the batch only.
final class IndexCache {
  var indexed: IndexedKeys?
}
