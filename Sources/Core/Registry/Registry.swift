/// One slot of a ``Registry`` table. Trivial, so a probe copies words and touches no reference count.
@usableFromInline
struct RegistrySlot {
  /// `ObjectIdentifier` bits of the service type; 0 marks an empty slot.
  @usableFromInline var service: UInt
  @usableFromInline var arguments: UInt
  /// `ObjectIdentifier` bits of the name's type; 0 for an unnamed key.
  @usableFromInline var nameType: UInt
  @usableFromInline var name: Unmanaged<AnyServiceName>?
  /// The latest registration for the key. Earlier ones hang off its `previous` link.
  @usableFromInline var registration: Unmanaged<AnyRegistration>?

  static var empty: RegistrySlot { RegistrySlot(service: 0, arguments: 0, nameType: 0, name: nil, registration: nil) }
}

/// An immutable snapshot of a scope's registrations: an open-addressing hash table keyed by
/// (service type, argument types, name), plus every registration in order.
///
/// Writers build a new snapshot and publish it with one atomic store; readers load it with one
/// atomic load and never lock. A scope keeps every snapshot it published alive until it is freed,
/// so a reader that loaded an old snapshot can finish with it.
///
/// `@unchecked Sendable`: nothing is mutated after `init`; the slot memory is owned by the snapshot
/// and freed only in `deinit`, and the unmanaged references in it are kept alive by `registrations`.
@usableFromInline
final class Registry: @unchecked Sendable {
  @usableFromInline let slots: UnsafeMutablePointer<RegistrySlot>
  @usableFromInline let mask: Int
  @usableFromInline let shift: UInt
  /// Every registration in registration order; owns what the slots refer to.
  let registrations: [AnyRegistration]

  /// Builds a snapshot holding `previous`'s registrations followed by `additions`.
  ///
  /// An addition whose key is already present becomes the latest for that key and links the one
  /// it replaces (its `previous`); this is the only time that link is written, before publication.
  init(previous: Registry?, adding additions: [AnyRegistration]) {
    let all = (previous?.registrations ?? []) + additions
    var capacity = 8
    while capacity < all.count * 2 { capacity *= 2 }
    slots = .allocate(capacity: capacity)
    slots.initialize(repeating: .empty, count: capacity)
    mask = capacity - 1
    shift = UInt(64 - capacity.trailingZeroBitCount)
    registrations = all
    if let previous {
      for index in 0...previous.mask where previous.slots[index].service != 0 {
        insert(previous.slots[index])
      }
    }
    for registration in additions {
      let index = probe(registration.key)
      if let existing = slots[index].registration {
        registration.previous = existing.takeUnretainedValue()
      }
      slots[index] = RegistrySlot(
        service: registration.key.service.bits,
        arguments: registration.key.arguments.bits,
        nameType: registration.key.name?.typeID ?? 0,
        name: registration.key.name.map { Unmanaged.passUnretained($0) },
        registration: Unmanaged.passUnretained(registration))
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

  /// The latest unnamed registration for a service and argument types.
  @inlinable @inline(__always)
  func find(service: UInt, arguments: UInt) -> Unmanaged<AnyRegistration>? {
    var index = Int(
      truncatingIfNeeded: Registry.hash(service: service, arguments: arguments, nameType: 0) &>> shift)
    while true {
      let slot = slots + index
      if slot.pointee.service == service && slot.pointee.arguments == arguments
        && slot.pointee.nameType == 0
      {
        return slot.pointee.registration
      }
      if slot.pointee.service == 0 { return nil }
      index = (index &+ 1) & mask
    }
  }

  /// The latest registration for a service, argument types and name.
  @inlinable @inline(__always)
  func find<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name)
    -> Unmanaged<AnyRegistration>?
  {
    let nameType = UInt(bitPattern: ObjectIdentifier(Name.self))
    var index = Int(
      truncatingIfNeeded: Registry.hash(service: service, arguments: arguments, nameType: nameType)
        >> shift)
    while true {
      let slot = slots + index
      if slot.pointee.service == service && slot.pointee.arguments == arguments
        && slot.pointee.nameType == nameType,
        let stored = slot.pointee.name,
        stored._withUnsafeGuaranteedRef({ unsafeDowncast($0, to: ServiceName<Name>.self).value == name })
      {
        return slot.pointee.registration
      }
      if slot.pointee.service == 0 { return nil }
      index = (index &+ 1) & mask
    }
  }

  /// The latest registration for any key; the slow path used by errors, `resolveAll` and tools.
  func latest(for key: ServiceKey) -> AnyRegistration? {
    slots[probe(key)].registration?.takeUnretainedValue()
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

  /// The slot that holds `key`, or the empty slot where it would go.
  private func probe(_ key: ServiceKey) -> Int {
    let service = key.service.bits
    let arguments = key.arguments.bits
    let nameType = key.name?.typeID ?? 0
    var index = Int(
      truncatingIfNeeded: Registry.hash(service: service, arguments: arguments, nameType: nameType)
        >> shift)
    while true {
      let slot = slots[index]
      if slot.service == 0 { return index }
      if slot.service == service && slot.arguments == arguments && slot.nameType == nameType {
        let sameName =
          slot.name.map { stored in key.name.map { stored.takeUnretainedValue().isEqual(to: $0) } ?? false }
          ?? (key.name == nil)
        if sameName { return index }
      }
      index = (index + 1) & mask
    }
  }

  private func insert(_ slot: RegistrySlot) {
    var index = Int(
      truncatingIfNeeded: Registry.hash(
        service: slot.service, arguments: slot.arguments, nameType: slot.nameType) >> shift)
    while slots[index].service != 0 { index = (index + 1) & mask }
    slots[index] = slot
  }
}
