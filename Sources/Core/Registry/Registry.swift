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

/// An immutable snapshot of a scope's registrations: an open-addressing hash table keyed by
/// (service type, argument types, name type), plus every registration in order.
///
/// An unnamed key's slot holds its latest registration; a name type's slot holds a ``NameTable``
/// of the names registered with that type. Writers build a new snapshot and publish it with one
/// atomic store; readers load it with one atomic load and never lock. A scope keeps every
/// snapshot it published alive until it is freed, so a reader that loaded an old snapshot can
/// finish with it.
///
/// `@unchecked Sendable`: nothing is mutated after `init`; the slot memory is owned by the snapshot
/// and freed only in `deinit`, and the unmanaged references in it are kept alive by
/// `registrations` and `nameTables`.
@usableFromInline
final class Registry: @unchecked Sendable {
  @usableFromInline let slots: UnsafeMutablePointer<RegistrySlot>
  @usableFromInline let mask: Int
  @usableFromInline let shift: UInt
  /// Every registration in registration order; owns what the slots refer to.
  let registrations: [AnyRegistration]
  private let nameTables: [NameTable]

  /// Builds a snapshot holding `previous`'s registrations followed by `additions`, in time
  /// proportional to their total.
  ///
  /// An addition whose key is already present becomes the latest for that key and links the one
  /// it replaces (its `previous`); this is the only time that link is written, before publication.
  init(previous: Registry?, adding additions: [AnyRegistration]) {
    let all = (previous?.registrations ?? []) + additions
    registrations = all

    var latest: [ServiceKey: AnyRegistration] = [:]
    latest.reserveCapacity(all.count)
    for registration in previous?.registrations ?? [] { latest[registration.key] = registration }
    for registration in additions {
      if let replaced = latest.updateValue(registration, forKey: registration.key) {
        registration.previous = replaced
      }
    }

    struct Group {
      var first: RegistrySlot
      var entries: [(name: AnyServiceName, registration: AnyRegistration)] = []
    }
    var unnamed: [RegistrySlot] = []
    var groups: [GroupKey: Group] = [:]
    var groupOrder: [GroupKey] = []
    var seen = Set<ServiceKey>()
    for registration in all where seen.insert(registration.key).inserted {
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

  /// A Fibonacci hash of the three identities; the high bits pick the slot.
  @inlinable @inline(__always)
  static func hash(service: UInt, arguments: UInt, nameType: UInt) -> UInt {
    (service ^ (arguments &* 0xC2B2_AE3D_27D4_EB4F) ^ (nameType &* 0x1656_67B1_9E37_79F9))
      &* 0x9E37_79B9_7F4A_7C15
  }

  /// The slot for (service, arguments, name type), if present.
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
  func find(service: UInt, arguments: UInt) -> Unmanaged<AnyRegistration>? {
    slot(service: service, arguments: arguments, nameType: 0)?.pointee.registration
  }

  /// The latest registration for a service, argument types and name.
  @inlinable @inline(__always)
  func find<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name)
    -> Unmanaged<AnyRegistration>?
  {
    let nameType = UInt(bitPattern: ObjectIdentifier(Name.self))
    guard let table = slot(service: service, arguments: arguments, nameType: nameType)?.pointee.names
    else { return nil }
    return table._withUnsafeGuaranteedRef { $0.find(name) }
  }

  /// The latest registration for any key; the slow path used by errors, `resolveAll` and tools.
  func latest(for key: ServiceKey) -> AnyRegistration? {
    guard
      let slot = slot(
        service: key.service.bits, arguments: key.arguments.bits, nameType: key.name?.typeID ?? 0)
    else { return nil }
    guard let name = key.name else { return slot.pointee.registration?.takeUnretainedValue() }
    return slot.pointee.names?.takeUnretainedValue().find(name)
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
