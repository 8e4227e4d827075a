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
/// `@unchecked Sendable`: nothing is mutated after `init` (`version` is written once before
/// publication), and the level's ``KeyTable`` refers only to what `ownRegistrations` and
/// `nameTables` keep alive.
@usableFromInline
final class Registry: @unchecked Sendable {
  /// This level's keys; the only unsafe storage of a snapshot (see ``KeyTable``).
  @usableFromInline let table: KeyTable
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
  /// The thread that published this snapshot (`currentThreadID()`), written with `version`: a
  /// resolve running on that thread reads the scope from this snapshot even though it is newer
  /// than the resolve, so that a factory sees what it registered (see
  /// `Scope.publishedRegistry(asOf:)`).
  @exclusivity(unchecked) var publisher: UInt = 0
  /// This level's run of registrations, in registration order; owns what the slots refer to.
  let ownRegistrations: [AnyRegistration]
  private let nameTables: [NameTable]

  /// Builds a snapshot holding `previous`'s registrations followed by `additions`, in time
  /// proportional to the levels it merges.
  ///
  /// An addition whose key is already present becomes the latest for that key and links the one
  /// it replaces (its `previous`); this is the only time that link is written, before publication.
  ///
  /// Reads each addition's key from `additions.keys`, not from the registration, and touches a
  /// registration object only to link it to one it replaces.
  convenience init(previous: Registry?, adding additions: RegistrationRun) {
    assert(additions.isAligned, "a run's keys are not its registrations' keys")
    var latest = additions.indexed?.index ?? KeyIndex(over: additions.keys)
    for (position, key) in additions.keys.enumerated() {
      // With the review's index, every key is in already and `newest` starts at each key's first
      // position: a position that is not its key's newest so far repeats the key.
      let (entry, inserted) =
        if let indexed = additions.indexed {
          (indexed.entry(at: position), latest.newest[indexed.entry(at: position)] == position)
        } else {
          latest.insert(at: position)
        }
      if !inserted {
        let registration = additions.registrations[position]
        registration.previous = additions.registrations[latest.newest[entry]]
        latest.newest[entry] = position
      } else if let replaced = previous?.latest(for: key) {
        additions.registrations[position].previous = replaced
      }
    }
    var run = additions.registrations
    var older = previous
    var merged = false
    while let level = older, level.ownRegistrations.count <= run.count {
      run = level.ownRegistrations + run
      older = level.older
      merged = true
    }
    // A level of the batch alone (the first batch of a scope, or one larger than every level
    // before it) has exactly the keys just indexed: they are not read from the registrations
    // again, which a container of 10,000 no longer holds in the processor's cache.
    self.init(level: run, older: older, index: merged ? nil : latest)
  }

  /// A level over `run`, in front of `older`.
  /// `index`, if given, holds `run`'s keys with the position in `run` of each one's newest
  /// registration.
  private init(level run: [AnyRegistration], older: Registry?, index: KeyIndex?) {
    self.older = older
    ownRegistrations = run

    // Each key once, in the order it first appears, with its newest registration.
    let latest =
      index
      ?? {
        var latest = KeyIndex(over: run.map(\.key))
        for position in run.indices {
          let (entry, inserted) = latest.insert(at: position)
          if !inserted { latest.newest[entry] = position }
        }
        return latest
      }()

    // Named keys are grouped by name type first, each group a table of its names; unnamed keys
    // refer to their registration by position in `run` as the table is made, so that no
    // registration object is touched (retained, then released) here.
    var unnamedCount = 0
    var groups: [GroupKey: [(name: AnyServiceName, registration: AnyRegistration)]] = [:]
    var groupOrder: [GroupKey] = []
    for newest in latest.newest {
      let key = latest.keys[newest]
      guard let name = key.name else {
        unnamedCount += 1
        continue
      }
      let groupKey = GroupKey(service: key.service.bits, arguments: key.argumentBits, nameType: name.typeID)
      if groups[groupKey] == nil { groupOrder.append(groupKey) }
      groups[groupKey, default: []].append((name, run[newest]))
    }
    let tables = groupOrder.map { NameTable(groups[$0] ?? []) }
    nameTables = tables
    table = KeyTable(count: unnamedCount + tables.count, registrations: run) { add in
      for newest in latest.newest where latest.keys[newest].name == nil {
        let key = latest.keys[newest]
        add(.unnamed(service: key.service.bits, arguments: key.argumentBits, position: newest))
      }
      for (groupKey, names) in zip(groupOrder, tables) {
        add(
          .named(service: groupKey.service, arguments: groupKey.arguments, nameType: groupKey.nameType, names)
        )
      }
    }
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

  /// The latest unnamed registration for a service and argument types.
  @inlinable @inline(__always)
  func lookup(service: UInt, arguments: UInt) -> RegistrationRef? {
    if let found = table.lookup(service: service, arguments: arguments) { return found }
    guard let older else { return nil }
    return older.lookupInOlderLevels(service: service, arguments: arguments)
  }

  /// ``lookup(service:arguments:)`` from this level on; out of line, off the one-level fast path.
  @usableFromInline
  func lookupInOlderLevels(service: UInt, arguments: UInt) -> RegistrationRef? {
    var level: Registry? = self
    while let current = level {
      if let found = current.table.lookup(service: service, arguments: arguments) { return found }
      level = current.older
    }
    return nil
  }

  /// ``lookup(service:arguments:)`` with a name.
  @inlinable @inline(__always)
  func lookup<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name) -> RegistrationRef? {
    if let found = table.lookup(service: service, arguments: arguments, name: name) { return found }
    guard let older else { return nil }
    return older.lookupInOlderLevels(service: service, arguments: arguments, name: name)
  }

  /// ``lookup(service:arguments:name:)`` from this level on.
  @usableFromInline
  func lookupInOlderLevels<Name: Hashable & Sendable>(service: UInt, arguments: UInt, name: Name)
    -> RegistrationRef?
  {
    var level: Registry? = self
    while let current = level {
      if let found = current.table.lookup(service: service, arguments: arguments, name: name) { return found }
      level = current.older
    }
    return nil
  }

  /// The latest registration for any key; the slow path used by errors, `resolveAll` and tools.
  func latest(for key: ServiceKey) -> AnyRegistration? {
    var level: Registry? = self
    while let current = level {
      if let found = current.table.latest(for: key) { return found }
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

/// A run of registrations in order, with the key of each kept beside it: passes over a large
/// run (the duplicate check, the registry's index) then read a dense array of keys rather than
/// each registration object, which a container of 10,000 registrations no longer holds in the
/// processor's cache.
///
/// **Invariant.** `keys[i] == registrations[i].key` for every `i`: a level files each
/// registration under the key found here, and a lookup types the registration it finds by the key
/// it asked for (`RegistrationRef.withTyped`), so a key beside the wrong registration would hand
/// out an instance of another type. The registrar appends a registration and its key together and
/// never reorders them; every other run reads its keys from its registrations. Debug builds (the
/// test suite) check the invariant at each publication.
struct RegistrationRun {
  let registrations: [AnyRegistration]
  let keys: [ServiceKey]
  /// `keys` indexed, if a review of the batch did it already (see ``ReviewedBatch/indexedKeys``).
  private(set) var indexed: IndexedKeys?

  /// A run whose keys are read from the registrations.
  init(_ registrations: [AnyRegistration]) {
    self.registrations = registrations
    keys = registrations.map(\.key)
  }

  /// Whether every key is its registration's own: the same types and the same name box (not
  /// `==`, which a name that is not equal to itself, such as `Double.nan`, would fail).
  var isAligned: Bool {
    keys.count == registrations.count
      && zip(keys, registrations).allSatisfy { key, registration in
        key.service.bits == registration.key.service.bits && key.argumentBits == registration.key.argumentBits
          && key.name === registration.key.name
      }
  }

  /// A run of `registrations` with their `keys`, recorded as they were made (see
  /// `Registrar.stagedKeys`); read from the registrations if the counts disagree.
  init(_ registrations: [AnyRegistration], keys: [ServiceKey]) {
    self.registrations = registrations
    self.keys = keys.count == registrations.count ? keys : registrations.map(\.key)
  }

  /// This run with `indexed`, an index of exactly its keys, or as it is if `indexed` is `nil` or
  /// of other keys.
  func indexed(by indexed: IndexedKeys?) -> RegistrationRun {
    guard let indexed, indexed.index.keys.count == keys.count else { return self }
    var run = self
    run.indexed = indexed
    return run
  }
}

/// The first-level key of a named lookup.
private struct GroupKey: Hashable {
  let service: UInt
  let arguments: UInt
  let nameType: UInt
}
