/// The names registered for one (service, argument types, name type): the second level of a named
/// lookup.
///
/// A few names are compared one by one with `==` (no hashing per lookup); past
/// ``NameTable/linearLimit`` names, lookups hash the name once and probe an open-addressing index,
/// so thousands of names of one type still resolve in constant time.
///
/// `@unchecked Sendable`: immutable after `init`; `buckets` is owned and freed in `deinit`.
@usableFromInline
final class NameTable: @unchecked Sendable {
  /// The latest registration for each name, in first-registration order.
  @usableFromInline let names: [AnyServiceName]
  @usableFromInline let registrations: [Unmanaged<AnyRegistration>]
  /// `hashValue` of each name, for the hashed lookup.
  @usableFromInline let hashes: [Int]
  /// Open-addressing index into `names` (entry + 1; 0 is empty); empty in linear mode.
  @usableFromInline let buckets: [Int]
  @usableFromInline let mask: Int

  @usableFromInline static var linearLimit: Int { 8 }

  init(_ entries: [(name: AnyServiceName, registration: AnyRegistration)]) {
    names = entries.map(\.name)
    registrations = entries.map { Unmanaged.passUnretained($0.registration) }
    hashes = entries.map(\.name.valueHash)
    guard entries.count > NameTable.linearLimit else {
      buckets = []
      mask = 0
      return
    }
    var capacity = 16
    while capacity < entries.count * 2 { capacity *= 2 }
    var buckets = [Int](repeating: 0, count: capacity)
    for (index, hash) in hashes.enumerated() {
      var bucket = hash & (capacity - 1)
      while buckets[bucket] != 0 { bucket = (bucket + 1) & (capacity - 1) }
      buckets[bucket] = index + 1
    }
    self.buckets = buckets
    mask = capacity - 1
  }

  /// The registration for `name`, whose type is this table's name type.
  @inlinable
  func find<Name: Hashable & Sendable>(_ name: Name) -> Unmanaged<AnyRegistration>? {
    if buckets.isEmpty {
      for index in names.indices
      where unsafeDowncast(names[index], to: ServiceName<Name>.self).value == name {
        return registrations[index]
      }
      return nil
    }
    let hash = name.hashValue
    var bucket = hash & mask
    while buckets[bucket] != 0 {
      let index = buckets[bucket] &- 1
      if hashes[index] == hash && unsafeDowncast(names[index], to: ServiceName<Name>.self).value == name {
        return registrations[index]
      }
      bucket = (bucket &+ 1) & mask
    }
    return nil
  }

  /// The registration for a boxed name; the slow path for errors and tools.
  func find(_ name: AnyServiceName) -> AnyRegistration? {
    names.firstIndex { $0 == name }.map { registrations[$0].takeUnretainedValue() }
  }
}
