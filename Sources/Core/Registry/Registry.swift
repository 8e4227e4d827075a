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

    var entries: [KeyTable.Entry] = []
    var groups: [GroupKey: [(name: AnyServiceName, registration: AnyRegistration)]] = [:]
    var groupOrder: [GroupKey] = []
    var seen = Set<ServiceKey>()
    for registration in run where seen.insert(registration.key).inserted {
      guard let newest = latest[registration.key] else { continue }
      let key = registration.key
      guard let name = key.name else {
        entries.append(.unnamed(service: key.service.bits, arguments: key.arguments.bits, newest))
        continue
      }
      let groupKey = GroupKey(service: key.service.bits, arguments: key.arguments.bits, nameType: name.typeID)
      if groups[groupKey] == nil { groupOrder.append(groupKey) }
      groups[groupKey, default: []].append((name, newest))
    }

    var tables: [NameTable] = []
    for groupKey in groupOrder {
      guard let group = groups[groupKey] else { continue }
      let names = NameTable(group)
      tables.append(names)
      entries.append(
        .named(service: groupKey.service, arguments: groupKey.arguments, nameType: groupKey.nameType, names))
    }
    nameTables = tables
    table = KeyTable(entries)
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

/// The first-level key of a named lookup.
private struct GroupKey: Hashable {
  let service: UInt
  let arguments: UInt
  let nameType: UInt
}
