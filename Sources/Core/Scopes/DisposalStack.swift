/// What a scope disposes when it closes, in creation order: the first disposal kept inline, the
/// others in an array made only for a scope that owns more than one.
///
/// A request scope typically owns one disposable service (a transaction, a connection): filing it
/// then allocates nothing, and closing the scope frees no array.
///
/// A scope reaches its stack only under its state lock, and a close takes it out whole
/// (``Scope/guardedDisposals``); the stack itself is a plain value of `Sendable` parts.
struct DisposalStack: Sendable {
  /// The oldest disposal, or `nil` while the stack is empty.
  private var first: Disposal?
  /// The disposals filed after the first, oldest first; `nil` (no array, not even the empty one,
  /// to release when the scope is freed) until the second.
  private var later: [Disposal]?

  /// Whether an ``AsyncDisposable`` instance's disposal was filed (kept as a flag: reading it
  /// from the disposals themselves copied them).
  private(set) var awaitsAnything = false

  /// How many disposals the stack holds (kept as a count: testing `first` for `nil` copied the
  /// disposal, a retain and a release of the instance and of its disposer).
  private(set) var count = 0

  /// Whether nothing was filed.
  var isEmpty: Bool { count == 0 }

  /// Files `disposal` as the newest.
  mutating func push(_ disposal: consuming Disposal) {
    if disposal.isAsync { awaitsAnything = true }
    count += 1
    if count == 1 {
      first = disposal
    } else if later == nil {
      later = [disposal]
    } else {
      later?.append(disposal)
    }
  }

  /// Files `disposal` just below the newest disposal of an instance of registration `holder` (an
  /// ``AnyRegistration/identity``), so that it is disposed right after that one (and after what
  /// was filed below it the same way before); as the newest if `holder` has no instance here.
  ///
  /// For an instance that a `Lazy`, `Provider` or `@Injected` made for an instance filed earlier:
  /// its holder may use it until the holder's own disposer has run.
  /// (What one finds, filed after the holder by the resolve that made it, is moved below the holder
  /// with ``move(_:to:)``.)
  mutating func push(_ disposal: consuming Disposal, belowNewestOf holder: UInt) {
    guard count > 0, let position = newestPosition(of: holder) else { return push(disposal) }
    if disposal.isAsync { awaitsAnything = true }
    count += 1
    if position == 0 {
      // Below the oldest: the new disposal becomes the oldest.
      let oldest = first.take()
      first = disposal
      if let oldest { later = [oldest] + (later ?? []) }
    } else {
      later?.insert(disposal, at: position - 1)
    }
  }

  /// Where the newest disposal of an instance of registration `identity` is, counting from the
  /// oldest (0: `first`).
  private func newestPosition(of identity: UInt) -> Int? {
    if let later, let index = later.lastIndex(where: { $0.registration == identity }) { return index + 1 }
    return first?.registration == identity ? 0 : nil
  }

  /// Whether a disposal was filed after the newest one of registration `holder`: only then can
  /// a deferred resolve for `holder` have found an instance that must move below it.
  func hasNewer(than holder: UInt) -> Bool {
    guard count > 1, let position = newestPosition(of: holder) else { return false }
    return position < count - 1
  }

  /// Whether a disposal of one of the registrations `needed` was filed after the newest one of
  /// registration `holder`: what a reorder checks before it copies out the entries.
  func hasNewer(than holder: UInt, amongst needed: Set<UInt>) -> Bool {
    guard count > 1, let position = newestPosition(of: holder), let later else { return false }
    return later[position...].contains { needed.contains($0.registration) }
  }

  /// What a reorder plans from, oldest first: each disposal's registration, key and object.
  var entries: [DisposalEntry] {
    var entries: [DisposalEntry] = []
    entries.reserveCapacity(count)
    for disposal in [first].compactMap({ $0 }) + (later ?? []) {
      entries.append(
        DisposalEntry(
          registration: disposal.registration, key: disposal.key, object: ObjectIdentifier(disposal.object)))
    }
    return entries
  }

  /// Moves the disposals at `moved` (positions counted from the oldest, ascending, each above
  /// `position`) to `position`, in their order: the disposal that was there, and everything
  /// after it that does not move, is then disposed before them. Moves, never drops or copies
  /// one, so nothing is freed (the caller holds the scope's lock).
  mutating func move(_ moved: [Int], to position: Int) {
    guard let lowest = moved.first, position < lowest, let oldest = first.take() else { return }
    var all = [oldest] + (later.take() ?? [])
    var block: [Disposal] = []
    for index in moved.reversed() { block.append(all.remove(at: index)) }
    all.insert(contentsOf: block.reversed(), at: position)
    first = all.removeFirst()
    later = all
  }

  /// Takes the newest disposal out; `nil` once the stack is empty. Moves it: no copy is made, so
  /// running a disposer costs no retain of the instance.
  mutating func popNewest() -> Disposal? {
    guard count > 0 else { return nil }
    count -= 1
    if let newest = later?.popLast() { return newest }
    return first.take()
  }

  /// The disposals, newest first.
  consuming func newestFirst() -> [Disposal] {
    var disposals: [Disposal] = []
    while let newest = popNewest() { disposals.append(newest) }
    return disposals
  }
}

/// One filed disposal as a reorder sees it (see ``DisposalStack/entries``).
struct DisposalEntry {
  /// The ``AnyRegistration/identity`` of the registration that made the instance.
  let registration: UInt
  /// The key it was filed under: where its registration is looked for.
  let key: ServiceKey
  /// The instance (one object filed under two keys appears twice).
  let object: ObjectIdentifier
}

extension Disposal {
  /// Whether the instance is an ``AsyncDisposable``.
  var isAsync: Bool {
    if case .async = action { true } else { false }
  }

  /// The instance (a class instance itself; a value in a box of its own).
  var object: AnyObject {
    switch action {
    case .sync(let disposer): disposer.object
    case .async(let disposer): disposer.object
    }
  }
}

/// The objects a close has disposed so far: one object filed under two keys (a concrete
/// registration and a protocol registration resolving it) is disposed once, at its newest
/// position. Values are boxed each time they are filed, so they are never taken for each other.
/// No address is reused while a close runs: every object not yet disposed is held by its
/// disposal, so an object freed after its disposal cannot share an address with one still to come.
struct DisposedObjects {
  private var seen: Set<ObjectIdentifier>?

  /// Skips the bookkeeping when there is only one disposal (a request with one disposable).
  init(count: Int) {
    seen = count > 1 ? [] : nil
  }

  /// Whether `disposal`'s object is met for the first time (and should be disposed).
  mutating func isFirst(_ disposal: Disposal) -> Bool {
    seen?.insert(ObjectIdentifier(disposal.object)).inserted ?? true
  }
}
