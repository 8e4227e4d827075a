/// The hash tables of one registry level: keys to registrations, probed without hashing a
/// `ServiceKey` and without touching a reference count.
///
/// A ``KeyTable`` is an open-addressing table over (service type, argument types, name type),
/// compared as `ObjectIdentifier` bits. An unnamed key's slot holds its latest registration; a
/// name type's slot holds a ``NameTable`` of the names registered with that type.
///
/// **Invariant.** Immutable after `init`. The slot memory is owned by the table and freed in its
/// `deinit`; the registrations and name tables it refers to without a retain are owned by the
/// ``Registry`` level that owns the table (`ownRegistrations`, `nameTables`), so they live as
/// long as the table does. A name is compared with a looked-up name only when their types match
/// (the name type is part of the slot's key), which is what makes ``AnyServiceName/value(as:)``'s
/// downcast safe.
@usableFromInline
struct KeyTable: ~Copyable {
  /// One slot. Trivial, so a probe copies words and touches no reference count; 32 bytes, so no
  /// slot straddles two cache lines.
  @usableFromInline
  struct Slot {
    /// `ObjectIdentifier` bits of the service type; 0 marks an empty slot.
    @usableFromInline var service: UInt
    @usableFromInline var arguments: UInt
    /// `ObjectIdentifier` bits of the name type; 0 for the unnamed key.
    @usableFromInline var nameType: UInt
    /// The unnamed key's latest registration (earlier ones hang off its `previous` link), or the
    /// name type's table of names: which one is told by `nameType`, since a type's identifier is
    /// never 0. One word for both keeps the slot at 32 bytes.
    @usableFromInline var target: UnsafeMutableRawPointer?

    /// For the unnamed key: its latest registration.
    @inlinable var registration: Unmanaged<AnyRegistration>? {
      guard nameType == 0, let target else { return nil }
      return Unmanaged.fromOpaque(target)
    }

    /// For a name type: the table of names of that type.
    @inlinable var names: Unmanaged<NameTable>? {
      guard nameType != 0, let target else { return nil }
      return Unmanaged.fromOpaque(target)
    }
  }

  /// What one slot of a new table holds: an unnamed key's registration by its position in the
  /// level's run (see `init(_:registrations:)`).
  enum Entry {
    case unnamed(service: UInt, arguments: UInt, position: Int)
    case named(service: UInt, arguments: UInt, nameType: UInt, NameTable)
  }

  @usableFromInline let slots: UnsafeMutablePointer<Slot>
  @usableFromInline let mask: Int
  @usableFromInline let shift: UInt

  /// A table of `entries`, whose keys are distinct, over the level's run `registrations`; the
  /// caller keeps what they refer to alive. A registration is referred to, not read: its object is
  /// not touched.
  init(_ entries: [Entry], registrations: [AnyRegistration]) {
    self.init(count: entries.count, registrations: registrations) { add in entries.forEach(add) }
  }

  /// A table of the `count` distinct keys that `entries` passes to the function it is given, as a
  /// level reads them from its index: no array of entries is made and freed (at 10,000 keys,
  /// 400 KB).
  init(count: Int, registrations: [AnyRegistration], entries: ((Entry) -> Void) -> Void) {
    let capacity = KeyTable.capacity(for: count)
    let slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
    slots.initialize(repeating: Slot(service: 0, arguments: 0, nameType: 0, target: nil), count: capacity)
    let mask = capacity - 1
    let shift = UInt(64 - capacity.trailingZeroBitCount)
    var filled = 0
    entries { entry in
      let slot: Slot
      switch entry {
      case .unnamed(let service, let arguments, let position):
        slot = Slot(
          service: service, arguments: arguments, nameType: 0,
          target: Unmanaged.passUnretained(registrations[position]).toOpaque())
      case .named(let service, let arguments, let nameType, let table):
        slot = Slot(
          service: service, arguments: arguments, nameType: nameType,
          target: Unmanaged.passUnretained(table).toOpaque())
      }
      // More entries than counted could fill every slot, and the probe below would not end.
      guard filled < count else { return assertionFailure("more keys than the table was made for") }
      filled += 1
      var index = Int(
        truncatingIfNeeded: KeyTable.hash(
          service: slot.service, arguments: slot.arguments, nameType: slot.nameType)
          &>> shift)
      while slots[index].service != 0 { index = (index &+ 1) & mask }
      slots[index] = slot
    }
    self.slots = slots
    self.mask = mask
    self.shift = shift
  }

  /// The number of slots (a power of two) for `count` keys: at most half full up to 2,048 keys
  /// (4,096 slots, 128 KB, which stay in the processor's cache, where a shorter probe is what a
  /// lookup saves), and at most three quarters full beyond, as Swift's `Dictionary` is: there a
  /// lookup misses the cache whatever the probe length, and the memory a sparser table fills,
  /// touches and frees is what building and freeing a large container costs (at 10,000 keys,
  /// 512 KB where 40-byte slots at most half full took 1.28 MB).
  static func capacity(for count: Int) -> Int {
    var capacity = 8
    while capacity < count * 2, capacity < 4_096 || capacity * 3 < count * 4 { capacity *= 2 }
    return capacity
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
  func slot(service: UInt, arguments: UInt, nameType: UInt) -> Slot? {
    var index = Int(
      truncatingIfNeeded: KeyTable.hash(service: service, arguments: arguments, nameType: nameType) &>> shift)
    while true {
      let slot = slots[index]
      if slot.service == service && slot.arguments == arguments && slot.nameType == nameType {
        return slot
      }
      if slot.service == 0 { return nil }
      index = (index &+ 1) & mask
    }
  }

  /// The latest unnamed registration for a service and argument types.
  @inlinable @inline(__always)
  func lookup(service: UInt, arguments: UInt) -> RegistrationRef? {
    slot(service: service, arguments: arguments, nameType: 0)?.registration.map(
      RegistrationRef.init(unmanaged:))
  }

  /// The latest registration for a service, argument types and name.
  @inlinable @inline(__always)
  func lookup<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name) -> RegistrationRef? {
    let nameType = UInt(bitPattern: ObjectIdentifier(Name.self))
    guard let table = slot(service: service, arguments: arguments, nameType: nameType)?.names else {
      return nil
    }
    return table._withUnsafeGuaranteedRef { $0.lookup(name) }
  }

  /// The latest registration for any key; the slow path used by errors, `resolveAll` and tools.
  func latest(for key: ServiceKey) -> AnyRegistration? {
    guard
      let slot = slot(
        service: key.service.bits, arguments: key.argumentBits, nameType: key.name?.typeID ?? 0)
    else { return nil }
    guard let name = key.name else { return slot.registration?.takeUnretainedValue() }
    return slot.names?.takeUnretainedValue().latest(for: name)
  }
}

/// The names registered for one (service, argument types, name type) in one level: the second
/// level of a named lookup.
///
/// A few names are compared one by one with `==` (no hashing per lookup); past
/// ``NameTable/linearLimit`` names, lookups hash the name once and probe an open-addressing index,
/// so thousands of names of one type still resolve in constant time.
///
/// **Invariant.** Immutable after `init`; every name is of the table's name type; the
/// registrations are kept alive by the level that owns the table (see ``KeyTable``).
/// `@unchecked Sendable` for that reason.
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

  /// A table of names of one type, each distinct, with their latest registrations.
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
  func lookup<Name: Hashable & Sendable>(_ name: Name) -> RegistrationRef? {
    if buckets.isEmpty {
      for index in names.indices where names[index].value(as: Name.self) == name {
        return RegistrationRef(unmanaged: registrations[index])
      }
      return nil
    }
    let hash = name.hashValue
    var bucket = hash & mask
    while buckets[bucket] != 0 {
      let index = buckets[bucket] &- 1
      if hashes[index] == hash && names[index].value(as: Name.self) == name {
        return RegistrationRef(unmanaged: registrations[index])
      }
      bucket = (bucket &+ 1) & mask
    }
    return nil
  }

  /// The registration for a boxed name; the slow path for errors and tools.
  func latest(for name: AnyServiceName) -> AnyRegistration? {
    names.firstIndex { $0 == name }.map { registrations[$0].takeUnretainedValue() }
  }
}

extension AnyServiceName {
  /// The name's value, known to be of type `Value`: the caller has compared the name's type
  /// (``typeID``) with `Value`, as a slot of a ``KeyTable`` does by its key.
  @inlinable @inline(__always)
  func value<Value: Hashable & Sendable>(as type: Value.Type) -> Value {
    unsafeDowncast(self, to: ServiceName<Value>.self).value
  }
}

/// The class of a registration without runtime arguments, for code that may not know the service
/// type statically: the class itself where the type is concrete (specialised code, whose
/// metadata the compiler caches at the call site), and otherwise from ``RegistrationClasses``.
@inlinable @inline(__always)
func registrationClass<Service, each Argument>(
  _: Service.Type, arguments: repeat (each Argument).Type
) -> Registration<Service, repeat each Argument>.Type {
  if _isConcrete(Service.self) { return Registration<Service, repeat each Argument>.self }
  return RegistrationClasses.shared.registrationClass(Service.self, arguments: repeat each arguments)
}

/// The classes of registrations without runtime arguments, by service type: what generic code
/// that registers a type it does not know statically (types opened from existentials, a helper
/// that is not specialised) uses instead of asking the Swift runtime for `Registration<Service>`'s
/// metadata on every registration.
///
/// The runtime's search is a probe of about 600 instructions through several dependent loads; with
/// 10,000 service types those miss the processor's caches, and building a container of 10,000
/// registrations cost about 100 ns more per registration than one of 1,000 for it. This table is
/// probed with a multiply and, mostly, one load.
///
/// **Invariant.** An entry maps the `ObjectIdentifier` bits of a service type to the metadata the
/// runtime returned for `Registration<Service>` (no arguments) of that same type, and is read only
/// for a registration without arguments. Type metadata is never freed and no two types share an
/// identifier, so the metatype an entry yields is exactly the one asked for. The slots are read
/// and written only under `lock`; the table only grows.
@usableFromInline
final class RegistrationClasses: @unchecked Sendable {
  @usableFromInline static let shared = RegistrationClasses()

  private struct Slot {
    /// `ObjectIdentifier` bits of the service type; 0 marks an empty slot.
    var service: UInt
    var metadata: UnsafeRawPointer?
  }

  private let lock = SpinLock()
  private var slots: UnsafeMutablePointer<Slot>
  private var mask: Int
  private var count = 0

  private init() {
    mask = 63
    slots = .allocate(capacity: mask + 1)
    slots.initialize(repeating: Slot(service: 0, metadata: nil), count: mask + 1)
  }

  /// `Registration<Service, Argument…>`, from the table when there are no arguments.
  @usableFromInline
  func registrationClass<Service, each Argument>(
    _: Service.Type, arguments: repeat (each Argument).Type
  ) -> Registration<Service, repeat each Argument>.Type {
    guard !hasArguments(repeat (each Argument).self) else {
      return Registration<Service, repeat each Argument>.self
    }
    let service = UInt(bitPattern: ObjectIdentifier(Service.self))
    lock.lock()
    defer { lock.unlock() }
    if let metadata = find(service) {
      return unsafeBitCast(metadata, to: Registration<Service, repeat each Argument>.Type.self)
    }
    let type = Registration<Service, repeat each Argument>.self
    insert(service, metadata: unsafeBitCast(type, to: UnsafeRawPointer.self))
    return type
  }

  private static func start(of service: UInt, mask: Int) -> Int {
    Int(truncatingIfNeeded: (service &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
  }

  /// The metadata stored for `service`, if any. Under `lock`.
  private func find(_ service: UInt) -> UnsafeRawPointer? {
    var index = Self.start(of: service, mask: mask)
    while slots[index].service != 0 {
      if slots[index].service == service { return slots[index].metadata }
      index = (index + 1) & mask
    }
    return nil
  }

  /// Stores `metadata` for `service` (not stored yet), growing the table to keep it as full as a
  /// ``KeyTable`` of as many keys may be (at 10,000 service types, 256 KB rather than 512 KB
  /// probed at random while a container of them is built). Under `lock`.
  private func insert(_ service: UInt, metadata: UnsafeRawPointer) {
    if KeyTable.capacity(for: count + 1) > mask + 1 { grow() }
    var index = Self.start(of: service, mask: mask)
    while slots[index].service != 0 { index = (index + 1) & mask }
    slots[index] = Slot(service: service, metadata: metadata)
    count += 1
  }

  private func grow() {
    let old = slots
    let oldCapacity = mask + 1
    mask = oldCapacity * 2 - 1
    slots = .allocate(capacity: mask + 1)
    slots.initialize(repeating: Slot(service: 0, metadata: nil), count: mask + 1)
    count = 0
    for index in 0..<oldCapacity where old[index].service != 0 {
      if let metadata = old[index].metadata { insert(old[index].service, metadata: metadata) }
    }
    old.deinitialize(count: oldCapacity)
    old.deallocate()
  }
}
