import Testing

@testable import Strata

/// A name type whose every value hashes alike: a name table must tell them apart by `==` alone.
private struct CollidingName: Hashable, Sendable {
  let value: Int

  func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

/// A `KeyTable` with everything it refers to without a retain (its registrations, its name
/// tables and their registrations), freed together, as a `Registry` level keeps them.
private final class Level {
  private let owned: [AnyObject]
  private let table: KeyTable

  /// An entry as a test writes it: an unnamed key with its registration itself.
  enum Entry {
    case unnamed(service: UInt, arguments: UInt, AnyRegistration)
    case named(service: UInt, arguments: UInt, nameType: UInt, NameTable)
  }

  init(_ entries: [Entry], alsoOwning others: [AnyObject] = []) {
    owned =
      entries.map { entry -> AnyObject in
        switch entry {
        case .unnamed(_, _, let registration): registration
        case .named(_, _, _, let names): names
        }
      } + others
    // The table refers to an unnamed key's registration by its position in a run.
    var run: [AnyRegistration] = []
    let tableEntries = entries.map { entry -> KeyTable.Entry in
      switch entry {
      case .unnamed(let service, let arguments, let registration):
        run.append(registration)
        return .unnamed(service: service, arguments: arguments, position: run.count - 1)
      case .named(let service, let arguments, let nameType, let names):
        return .named(service: service, arguments: arguments, nameType: nameType, names)
      }
    }
    table = KeyTable(tableEntries, registrations: run)
  }

  var mask: Int { table.mask }

  func lookup(service: UInt, arguments: UInt) -> RegistrationRef? {
    table.lookup(service: service, arguments: arguments)
  }

  func lookup<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name) -> RegistrationRef? {
    table.lookup(service: service, arguments: arguments, name: name)
  }

  func latest(for key: ServiceKey) -> AnyRegistration? { table.latest(for: key) }
}

/// A `NameTable` with the registrations it refers to without a retain.
private final class Names {
  let registrations: [AnyRegistration]
  let table: NameTable

  init<Name: Hashable & Sendable>(_ entries: [(Name, AnyRegistration)]) {
    registrations = entries.map(\.1)
    table = NameTable(entries.map { (ServiceName($0.0), $0.1) })
  }

  func lookup<Name: Hashable & Sendable>(_ name: Name) -> AnyRegistration? {
    table.lookup(name)?.registration
  }
}

extension LowLevel {
  /// `KeyTable` and `NameTable`, the hash tables of one registry level, on their own: every key finds
  /// its own registration, a missing key finds nothing, however the keys collide, and a name is only
  /// ever compared with names of its own type.
  @Suite struct KeyTableTests {
    /// No runtime arguments, as registry slots and lookups spell it (`argumentListBits`).
    private static let void: UInt = 0

    /// A registration of `service` under `name`, made for a table (its factory never runs).
    private static func registration(
      of service: Any.Type = Widget.self, name: AnyServiceName? = nil
    ) -> AnyRegistration {
      AnyRegistration(
        key: ServiceKey(service: TypeIdentity(service), arguments: .void, name: name),
        lifetime: .transient, location: SourceLocation(fileID: "Strata/KeyTableTests.swift", line: 1),
        dependencies: { nil })
    }

    private static func bits(_ type: Any.Type) -> UInt { UInt(bitPattern: ObjectIdentifier(type)) }

    /// The slot a key of a table of `capacity` slots is hashed to.
    private static func home(service: UInt, capacity: Int) -> Int {
      let shift = UInt(64 - capacity.trailingZeroBitCount)
      return Int(truncatingIfNeeded: KeyTable.hash(service: service, arguments: void, nameType: 0) &>> shift)
    }

    @Test func anUnnamedKeyFindsItsRegistrationAndAnotherKeyFindsNothing() {
      let widget = Self.registration(of: Widget.self)
      let greeting = Self.registration(of: Greeting.self)
      let table = Level([
        .unnamed(service: Self.bits(Widget.self), arguments: Self.void, widget),
        .unnamed(service: Self.bits(Greeting.self), arguments: Self.void, greeting),
      ])

      let foundWidget = table.lookup(service: Self.bits(Widget.self), arguments: Self.void)
      let foundGreeting = table.lookup(service: Self.bits(Greeting.self), arguments: Self.void)
      let unregistered = table.lookup(service: Self.bits(LabeledService.self), arguments: Self.void)
      let otherArguments = table.lookup(service: Self.bits(Widget.self), arguments: Self.bits(Int.self))
      let asNamed = table.lookup(service: Self.bits(Widget.self), arguments: Self.void, name: 1)

      #expect(foundWidget?.registration === widget)
      #expect(foundGreeting?.registration === greeting)
      #expect(unregistered == nil)
      #expect(otherArguments == nil, "the argument types are part of the key")
      #expect(asNamed == nil, "an unnamed registration is not found by a name")
    }

    @Test func aNamedKeyFindsItsRegistrationAndOtherNamesFindNothing() {
      let first = Self.registration(name: ServiceName(Ordinal.first))
      let second = Self.registration(name: ServiceName(Ordinal.second))
      let names = NameTable([(ServiceName(Ordinal.first), first), (ServiceName(Ordinal.second), second)])
      let table = Level(
        [
          .named(
            service: Self.bits(Widget.self), arguments: Self.void, nameType: Self.bits(Ordinal.self), names)
        ], alsoOwning: [first, second])

      let foundFirst = table.lookup(
        service: Self.bits(Widget.self), arguments: Self.void, name: Ordinal.first)
      let foundSecond = table.lookup(
        service: Self.bits(Widget.self), arguments: Self.void, name: Ordinal.second)
      let unregistered = table.lookup(
        service: Self.bits(Widget.self), arguments: Self.void, name: Ordinal.third)
      let unnamed = table.lookup(service: Self.bits(Widget.self), arguments: Self.void)
      let otherService = table.lookup(
        service: Self.bits(Greeting.self), arguments: Self.void, name: Ordinal.first)

      #expect(foundFirst?.registration === first)
      #expect(foundSecond?.registration === second)
      #expect(unregistered == nil)
      #expect(unnamed == nil, "a named registration is not the unnamed one")
      #expect(otherService == nil)
    }

    @Test func keysHashedToTheLastSlotWrapAroundToTheFirst() throws {
      // Four keys make a table of 8 slots; pick keys whose home is the last slot, so that probing
      // for the second and third one wraps around to slot 0 and 1.
      let wrapping = (1...UInt(1 << 20)).lazy.map { $0 << 4 }.filter {
        Self.home(service: $0, capacity: 8) == 7
      }
      let keys = Array(wrapping.prefix(4))
      try #require(keys.count == 4)
      let registrations = keys.map { _ in Self.registration() }
      let table = Level(
        zip(keys.prefix(3), registrations).map { .unnamed(service: $0, arguments: Self.void, $1) })

      #expect(table.mask == 7)
      for (key, registration) in zip(keys.prefix(3), registrations) {
        let found = table.lookup(service: key, arguments: Self.void)
        #expect(found?.registration === registration)
      }
      let missing = table.lookup(service: keys[3], arguments: Self.void)
      #expect(missing == nil, "a miss that wraps around stops at the first empty slot")
    }

    @Test func thousandsOfKeysEachFindTheirOwnRegistration() {
      let count = 5_000
      // Service bits as `ObjectIdentifier`s have them: aligned, close together.
      let keys = (1...count).map { UInt($0) << 4 }
      let registrations = keys.map { _ in Self.registration() }
      let table = Level(zip(keys, registrations).map { .unnamed(service: $0, arguments: Self.void, $1) })

      #expect(table.mask + 1 == KeyTable.capacity(for: count))
      #expect(table.mask + 1 >= count * 4 / 3, "the table grew to keep a quarter of its slots empty")
      var mismatches = 0
      for (key, registration) in zip(keys, registrations) {
        let found = table.lookup(service: key, arguments: Self.void)
        if found?.registration !== registration { mismatches += 1 }
      }
      var falseHits = 0
      for key in (count + 1...2 * count).map({ UInt($0) << 4 }) {
        let found = table.lookup(service: key, arguments: Self.void)
        if found != nil { falseHits += 1 }
      }
      #expect(mismatches == 0)
      #expect(falseHits == 0)
    }

    @Test func smallTablesAreAtMostHalfFullAndLargeOnesAtMostThreeQuarters() {
      var sizes: [Int: Int] = [:]
      for count in 0...20_000 {
        let capacity = KeyTable.capacity(for: count)
        #expect(capacity.nonzeroBitCount == 1, "\(count) keys: \(capacity) slots is not a power of two")
        #expect(capacity * 3 >= count * 4, "\(count) keys: \(capacity) slots is more than 3/4 full")
        if count <= 2_048 {
          #expect(capacity >= count * 2, "\(count) keys: \(capacity) slots is more than half full")
        }
        #expect(capacity == 8 || capacity / 2 < count * 2, "\(count) keys: half as many slots would do")
        sizes[count] = capacity
      }
      #expect(sizes[0] == 8)
      #expect(sizes[5] == 16)
      #expect(sizes[2_048] == 4_096)
      #expect(sizes[3_072] == 4_096)
      #expect(sizes[3_073] == 8_192)
      #expect(sizes[10_000] == 16_384)
    }

    @Test func aFewNamesAreComparedOneByOneAndMoreAreHashed() {
      let few = Names((0..<NameTable.linearLimit).map { ($0, Self.registration(name: ServiceName($0))) })
      let many = Names((0...NameTable.linearLimit).map { ($0, Self.registration(name: ServiceName($0))) })

      #expect(NameTable.linearLimit == 8)
      #expect(few.table.buckets.isEmpty, "up to linearLimit names, no index")
      #expect(many.table.buckets.count >= 16, "past linearLimit names, an index")
      for names in [few, many] {
        for (name, registration) in zip(0..., names.registrations) {
          #expect(names.lookup(name) === registration)
        }
        #expect(names.lookup(NameTable.linearLimit + 1) == nil)
        #expect(names.lookup(-1) == nil)
      }
    }

    @Test func thousandsOfNamesOfOneTypeEachFindTheirOwnRegistration() {
      let count = 3_000
      let entries = (0..<count).map { ("name \($0)", Self.registration(name: ServiceName("name \($0)"))) }
      let names = Names(entries)

      var mismatches = 0
      for (name, registration) in entries where names.lookup(name) !== registration {
        mismatches += 1
      }
      var falseHits = 0
      for index in count..<2 * count where names.lookup("name \(index)") != nil {
        falseHits += 1
      }
      #expect(mismatches == 0)
      #expect(falseHits == 0)
    }

    @Test func hashedNamesThatCollideAreToldApartByEquality() {
      let entries = (0..<40).map { (CollidingName(value: $0), Self.registration()) }
      let names = Names(entries)

      #expect(!names.table.buckets.isEmpty)
      for (name, registration) in entries {
        #expect(names.lookup(name) === registration)
      }
      #expect(names.lookup(CollidingName(value: 40)) == nil)
    }

    @Test func hashedNamesInTheLastBucketWrapAroundToTheFirst() throws {
      // Ten names make an index of 32 buckets; pick names whose hash picks the last bucket, so that
      // all but the first one wrap around. (Hashes are seeded per process: chosen at run time.)
      let wrapping = (0..<1_000_000).lazy.filter { $0.hashValue & 31 == 31 }
      let chosen = Array(wrapping.prefix(11))
      try #require(chosen.count == 11)
      let entries = chosen.prefix(10).map { ($0, Self.registration(name: ServiceName($0))) }
      let names = Names(Array(entries))

      #expect(names.table.mask == 31)
      for (name, registration) in entries {
        #expect(names.lookup(name) === registration)
      }
      #expect(names.lookup(chosen[10]) == nil, "a miss that wraps around stops at the first empty bucket")
    }

    @Test func namesOfDifferentTypesWithEqualHashesAreNeverComparedAsEachOther() {
      // `1` and `"1"` print alike; `DatabaseRole.primary` and `CacheRole.primary` hash alike and
      // print alike. Each type has its own slot, so a lookup never reads a name of another type.
      let byInt = Self.registration(name: ServiceName(1))
      let byString = Self.registration(name: ServiceName("1"))
      let byDatabaseRole = Self.registration(name: ServiceName(DatabaseRole.primary))
      let byCacheRole = Self.registration(name: ServiceName(CacheRole.primary))
      let service = Self.bits(Widget.self)
      func named<Name: Hashable & Sendable>(_ name: Name, _ registration: AnyRegistration) -> Level.Entry {
        .named(
          service: service, arguments: Self.void, nameType: Self.bits(Name.self),
          NameTable([(ServiceName(name), registration)]))
      }
      let table = Level(
        [
          named(1, byInt), named("1", byString), named(DatabaseRole.primary, byDatabaseRole),
          named(CacheRole.primary, byCacheRole),
        ], alsoOwning: [byInt, byString, byDatabaseRole, byCacheRole])

      #expect(DatabaseRole.primary.hashValue == CacheRole.primary.hashValue)
      let foundInt = table.lookup(service: service, arguments: Self.void, name: 1)
      let foundString = table.lookup(service: service, arguments: Self.void, name: "1")
      let foundDatabaseRole = table.lookup(service: service, arguments: Self.void, name: DatabaseRole.primary)
      let foundCacheRole = table.lookup(service: service, arguments: Self.void, name: CacheRole.primary)
      let otherInt = table.lookup(service: service, arguments: Self.void, name: 2)
      let otherType = table.lookup(service: service, arguments: Self.void, name: Ordinal.first)
      let otherCase = table.lookup(service: service, arguments: Self.void, name: CacheRole.replica)
      #expect(foundInt?.registration === byInt)
      #expect(foundString?.registration === byString)
      #expect(foundDatabaseRole?.registration === byDatabaseRole)
      #expect(foundCacheRole?.registration === byCacheRole)
      #expect(otherInt == nil)
      #expect(otherType == nil)
      #expect(otherCase == nil)
    }

    @Test func theSlowPathFindsWhatTheTypedLookupsFind() {
      let widget = Self.registration(of: Widget.self)
      let greeting = Self.registration(of: Greeting.self)
      let numbered = (0..<20).map { Self.registration(of: Widget.self, name: ServiceName($0)) }
      let roles = [DatabaseRole.primary, .replica].map {
        Self.registration(of: Widget.self, name: ServiceName($0))
      }
      let table = Level(
        [
          .unnamed(service: Self.bits(Widget.self), arguments: Self.void, widget),
          .unnamed(service: Self.bits(Greeting.self), arguments: Self.void, greeting),
          .named(
            service: Self.bits(Widget.self), arguments: Self.void, nameType: Self.bits(Int.self),
            NameTable(numbered.map { ($0.key.name ?? ServiceName(-1), $0) })),
          .named(
            service: Self.bits(Widget.self), arguments: Self.void, nameType: Self.bits(DatabaseRole.self),
            NameTable(roles.map { ($0.key.name ?? ServiceName(-1), $0) })),
        ], alsoOwning: numbered + roles)

      for registration in [widget, greeting] + numbered + roles {
        #expect(table.latest(for: registration.key) === registration)
      }
      let typedWidget = table.lookup(service: Self.bits(Widget.self), arguments: Self.void)
      let typedSeven = table.lookup(service: Self.bits(Widget.self), arguments: Self.void, name: 7)
      let typedReplica = table.lookup(
        service: Self.bits(Widget.self), arguments: Self.void, name: DatabaseRole.replica)
      #expect(typedWidget?.registration === table.latest(for: ServiceKey(Widget.self, name: nil)))
      #expect(typedSeven?.registration === table.latest(for: ServiceKey(Widget.self, name: ServiceName(7))))
      #expect(
        typedReplica?.registration
          === table.latest(for: ServiceKey(Widget.self, name: ServiceName(DatabaseRole.replica))))

      let misses = [
        ServiceKey(LabeledService.self, name: nil), ServiceKey(Widget.self, name: ServiceName(20)),
        ServiceKey(Widget.self, name: ServiceName("7")),
        ServiceKey(Widget.self, name: ServiceName(CacheRole.replica)),
        ServiceKey(Greeting.self, name: ServiceName(7)),
        ServiceKey(Widget.self, arguments: Int.self, name: nil),
      ]
      for key in misses {
        #expect(table.latest(for: key) == nil, "\(key)")
      }
    }

    // MARK: - Through a container

    @Test func thousandsOfNamedRegistrationsOfOneTypeEachResolveToTheirOwnInstance() throws {
      let count = 3_000
      let container = try Container { registry in
        for index in 0..<count {
          registry.register(Widget.self, name: index, lifetime: .singleton) { _ in Widget(id: index) }
        }
      }

      var wrong: [Int] = []
      for index in 0..<count {
        let first = try container.resolve(Widget.self, name: index)
        let again = try container.resolve(Widget.self, name: index)
        if first.id != index || first !== again { wrong.append(index) }
      }
      #expect(wrong.isEmpty)
      #expect(throws: ResolutionError.self) { try container.resolve(Widget.self, name: count) }
      #expect(throws: ResolutionError.self) { try container.resolve(Widget.self, name: "0") }
    }

    @Test func aKeyRegisteredAgainInALaterBatchResolvesToTheLatestRegistration() throws {
      // Batch b registers the names divisible by b + 1, of sizes 64, 32, 22, 16, …: the registry
      // merges its levels as they come, and every key must still find its latest registration.
      let names = 0..<64
      let batches = 0..<8
      let container = Container()
      for batch in batches {
        try container.register { registry in
          registry.register(Widget.self) { _ in Widget(id: batch) }
          for name in names where name % (batch + 1) == 0 {
            registry.register(Widget.self, name: name) { _ in Widget(id: batch * 1_000 + name) }
          }
        }

        #expect(try container.resolve(Widget.self).id == batch)
        var wrong: [Int] = []
        var wrongHistory: [Int] = []
        for name in names {
          let registeredIn = (0...batch).filter { name % ($0 + 1) == 0 }
          let latest = try container.resolve(Widget.self, name: name)
          if latest.id != (registeredIn.last ?? -1) * 1_000 + name { wrong.append(name) }
          let all = try container.resolveAll(Widget.self, name: name).map(\.id)
          if all != registeredIn.map({ $0 * 1_000 + name }) { wrongHistory.append(name) }
        }
        #expect(wrong.isEmpty, "after batch \(batch)")
        #expect(wrongHistory.isEmpty, "after batch \(batch): every registration of a key, oldest first")
      }
    }
  }
}
