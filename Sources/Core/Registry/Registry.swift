/// One slot of a ``Registry`` table. Trivial, so a probe copies words and touches no reference count.
@usableFromInline
struct RegistrySlot {
  /// `ObjectIdentifier` bits of the service type; 0 marks an empty slot.
  @usableFromInline var service: UInt
  @usableFromInline var arguments: UInt
  /// `ObjectIdentifier` bits of the name type; 0 for the unnamed key.
  @usableFromInline var nameType: UInt
  /// For the unnamed key: the latest registration. Earlier ones hang off its `previous` link.
  @usableFromInline var registration: Unmanaged<AnyRegistration>?
  /// For a name type: the table of names of that type.
  @usableFromInline var names: Unmanaged<NameTable>?

  static var empty: RegistrySlot {
    RegistrySlot(service: 0, arguments: 0, nameType: 0, registration: nil, names: nil)
  }
}

/// An immutable snapshot of a scope's registrations: a short chain of hash tables ("levels"),
/// newest first, each an open-addressing table keyed by (service type, argument types, name type)
/// over one run of registrations.
///
/// An unnamed key's slot holds its latest registration within the level; a name type's slot holds
/// a ``NameTable`` of the names registered with that type there. A lookup probes the newest level
/// first and moves to older ones only on a miss, so the latest registration of a key wins. Writers
/// build a new snapshot and publish it with one atomic store; readers load it with one atomic load
/// and never lock. A scope keeps every snapshot it published alive until it is freed, so a reader
/// that loaded an old snapshot can finish with it.
///
/// Levels are shared between snapshots and never change. Publishing a batch makes a level of it,
/// merged with every newer level that is not larger than what is being merged (a binary counter):
/// levels at least double in size from newest to oldest, so a snapshot has at most log₂ N of them,
/// and a registration is copied into a new level at most log₂ N times. Registering N services one
/// batch at a time therefore costs O(N log N) time and memory in all, however the batches are
/// sized, while a container built in one batch has one level and looks up in one probe.
///
/// `@unchecked Sendable`: nothing is mutated after `init`; the slot memory is owned by the level
/// and freed only in `deinit`, and the unmanaged references in it are kept alive by
/// `ownRegistrations` and `nameTables`.
@usableFromInline
final class Registry: @unchecked Sendable {
  @usableFromInline let slots: UnsafeMutablePointer<RegistrySlot>
  @usableFromInline let mask: Int
  @usableFromInline let shift: UInt
  /// The next older level; `nil` for the oldest.
  @usableFromInline let older: Registry?
  /// The tree's registry version this snapshot was published at (see `Scope.publish`): a resolve
  /// that began at version `v` reads, in every scope, the newest snapshot whose version is at
  /// most `v`. A level merged into a newer snapshot keeps its own version; only the newest
  /// level's counts.
  ///
  /// Written once, under the publish lock, before the snapshot is published (a release store),
  /// and read only after it was loaded (an acquire): no access overlaps a write, so the dynamic
  /// exclusivity check (measured: 90 instructions per singleton resolve) is off.
  @usableFromInline @exclusivity(unchecked) var version: UInt = 0
  /// This level's run of registrations, in registration order; owns what the slots refer to.
  let ownRegistrations: [AnyRegistration]
  private let nameTables: [NameTable]

  /// Builds a snapshot holding `previous`'s registrations followed by `additions`, in time
  /// proportional to the levels it merges.
  ///
  /// An addition whose key is already present becomes the latest for that key and links the one
  /// it replaces (its `previous`); this is the only time that link is written, before publication.
  convenience init(previous: Registry?, adding additions: [AnyRegistration]) {
    var latest: [ServiceKey: AnyRegistration] = [:]
    for registration in additions {
      if let replaced = latest[registration.key] ?? previous?.latest(for: registration.key) {
        registration.previous = replaced
      }
      latest[registration.key] = registration
    }
    var run = additions
    var older = previous
    while let level = older, level.ownRegistrations.count <= run.count {
      run = level.ownRegistrations + run
      older = level.older
    }
    self.init(level: run, older: older)
  }

  /// A level over `run`, in front of `older`.
  private init(level run: [AnyRegistration], older: Registry?) {
    self.older = older
    ownRegistrations = run

    var latest: [ServiceKey: AnyRegistration] = [:]
    latest.reserveCapacity(run.count)
    for registration in run { latest[registration.key] = registration }

    struct Group {
      var first: RegistrySlot
      var entries: [(name: AnyServiceName, registration: AnyRegistration)] = []
    }
    var unnamed: [RegistrySlot] = []
    var groups: [GroupKey: Group] = [:]
    var groupOrder: [GroupKey] = []
    var seen = Set<ServiceKey>()
    for registration in run where seen.insert(registration.key).inserted {
      guard let newest = latest[registration.key] else { continue }
      let key = registration.key
      guard let name = key.name else {
        unnamed.append(
          RegistrySlot(
            service: key.service.bits, arguments: key.arguments.bits, nameType: 0,
            registration: Unmanaged.passUnretained(newest), names: nil))
        continue
      }
      let groupKey = GroupKey(service: key.service.bits, arguments: key.arguments.bits, nameType: name.typeID)
      if groups[groupKey] == nil {
        groupOrder.append(groupKey)
        groups[groupKey] = Group(
          first: RegistrySlot(
            service: groupKey.service, arguments: groupKey.arguments, nameType: groupKey.nameType,
            registration: nil, names: nil))
      }
      groups[groupKey]?.entries.append((name, newest))
    }

    var tables: [NameTable] = []
    var slotsToInsert = unnamed
    for groupKey in groupOrder {
      guard let group = groups[groupKey] else { continue }
      let table = NameTable(group.entries)
      tables.append(table)
      var slot = group.first
      slot.names = Unmanaged.passUnretained(table)
      slotsToInsert.append(slot)
    }
    nameTables = tables

    var capacity = 8
    while capacity < slotsToInsert.count * 2 { capacity *= 2 }
    slots = .allocate(capacity: capacity)
    slots.initialize(repeating: .empty, count: capacity)
    mask = capacity - 1
    shift = UInt(64 - capacity.trailingZeroBitCount)
    for slot in slotsToInsert {
      var index = Int(
        truncatingIfNeeded: Registry.hash(
          service: slot.service, arguments: slot.arguments, nameType: slot.nameType) &>> shift)
      while slots[index].service != 0 { index = (index &+ 1) & mask }
      slots[index] = slot
    }
  }

  deinit {
    slots.deallocate()
  }

  /// Every registration of the snapshot in registration order (oldest level first).
  var registrations: [AnyRegistration] {
    var levels: [Registry] = []
    var level: Registry? = self
    while let current = level {
      levels.append(current)
      level = current.older
    }
    return levels.reversed().flatMap(\.ownRegistrations)
  }

  /// A Fibonacci hash of the three identities; the high bits pick the slot.
  @inlinable @inline(__always)
  static func hash(service: UInt, arguments: UInt, nameType: UInt) -> UInt {
    (service ^ (arguments &* 0xC2B2_AE3D_27D4_EB4F) ^ (nameType &* 0x1656_67B1_9E37_79F9))
      &* 0x9E37_79B9_7F4A_7C15
  }

  /// The slot for (service, arguments, name type) in this level alone, if present.
  @inlinable @inline(__always)
  func slot(service: UInt, arguments: UInt, nameType: UInt) -> UnsafeMutablePointer<RegistrySlot>? {
    var index = Int(
      truncatingIfNeeded: Registry.hash(service: service, arguments: arguments, nameType: nameType)
        &>> shift)
    while true {
      let slot = slots + index
      if slot.pointee.service == service && slot.pointee.arguments == arguments
        && slot.pointee.nameType == nameType
      {
        return slot
      }
      if slot.pointee.service == 0 { return nil }
      index = (index &+ 1) & mask
    }
  }

  /// The latest unnamed registration for a service and argument types.
  @inlinable @inline(__always)
  func lookup(service: UInt, arguments: UInt) -> RegistrationRef? {
    find(service: service, arguments: arguments).map(RegistrationRef.init(unmanaged:))
  }

  /// ``lookup(service:arguments:)`` with a name.
  @inlinable @inline(__always)
  func lookup<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name) -> RegistrationRef? {
    find(service: service, arguments: arguments, name: name).map(RegistrationRef.init(unmanaged:))
  }

  /// The latest registration for a service and argument types, as stored in the slots.
  @inlinable @inline(__always)
  func find(service: UInt, arguments: UInt) -> Unmanaged<AnyRegistration>? {
    if let found = slot(service: service, arguments: arguments, nameType: 0)?.pointee.registration {
      return found
    }
    guard let older else { return nil }
    return older.findInOlderLevels(service: service, arguments: arguments)
  }

  /// ``find(service:arguments:)`` from this level on; out of line, off the one-level fast path.
  @usableFromInline
  func findInOlderLevels(service: UInt, arguments: UInt) -> Unmanaged<AnyRegistration>? {
    var level: Registry? = self
    while let current = level {
      if let found = current.slot(service: service, arguments: arguments, nameType: 0)?.pointee.registration {
        return found
      }
      level = current.older
    }
    return nil
  }

  /// The latest registration for a service, argument types and name.
  @inlinable @inline(__always)
  func find<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name)
    -> Unmanaged<AnyRegistration>?
  {
    let nameType = UInt(bitPattern: ObjectIdentifier(Name.self))
    if let table = slot(service: service, arguments: arguments, nameType: nameType)?.pointee.names,
      let found = table._withUnsafeGuaranteedRef({ $0.find(name) })
    {
      return found
    }
    guard let older else { return nil }
    return older.findInOlderLevels(service: service, arguments: arguments, name: name)
  }

  /// ``find(service:arguments:name:)`` from this level on.
  @usableFromInline
  func findInOlderLevels<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name)
    -> Unmanaged<AnyRegistration>?
  {
    let nameType = UInt(bitPattern: ObjectIdentifier(Name.self))
    var level: Registry? = self
    while let current = level {
      if let table = current.slot(service: service, arguments: arguments, nameType: nameType)?.pointee.names,
        let found = table._withUnsafeGuaranteedRef({ $0.find(name) })
      {
        return found
      }
      level = current.older
    }
    return nil
  }

  /// The latest registration for any key; the slow path used by errors, `resolveAll` and tools.
  func latest(for key: ServiceKey) -> AnyRegistration? {
    var level: Registry? = self
    while let current = level {
      if let slot = current.slot(
        service: key.service.bits, arguments: key.arguments.bits, nameType: key.name?.typeID ?? 0)
      {
        guard let name = key.name else { return slot.pointee.registration?.takeUnretainedValue() }
        if let found = slot.pointee.names?.takeUnretainedValue().find(name) { return found }
      }
      level = current.older
    }
    return nil
  }

  /// Every registration for `key`, oldest first.
  func all(for key: ServiceKey) -> [AnyRegistration] {
    var result: [AnyRegistration] = []
    var current = latest(for: key)
    while let registration = current {
      result.append(registration)
      current = registration.previous
    }
    return result.reversed()
  }
}

/// The first-level key of a named lookup.
private struct GroupKey: Hashable {
  let service: UInt
  let arguments: UInt
  let nameType: UInt
}
