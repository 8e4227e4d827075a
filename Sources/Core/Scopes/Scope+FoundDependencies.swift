// The disposal order after a deferred resolve finds an instance: a `Lazy`, `Provider` or
// `@Injected` property held by instance H hands H an instance X that another resolve made after
// H, so X (and what X is built from) was filed after H and would be disposed first, while H's
// disposer may still use X. What such a resolve *makes* is filed below H already (`Scope.file`);
// this moves what it *finds*, when the declared graph shows the move keeps every instance
// disposed before what it uses.

extension Scope {
  /// After a `Lazy`, `Provider` or `@Injected` held by the instance of registration `holder`
  /// resolved `key` from this scope: moves the disposals filed after the holder's newest one that
  /// the value may use (its registration and everything reachable from it through declared
  /// dependencies, deferred ones included), in their order, to just below the holder, or below
  /// the lowest disposal that was built from one of them, if that is lower (an instance the same
  /// resolve made and filed below the holder).
  ///
  /// Nothing moves when the graph cannot tell (a closure factory on the way declared no
  /// `dependsOn:`), when the value may use the holder (a cycle: no order is right), or when a
  /// disposal to move is built from one it would have to go below. Nothing moves either once
  /// this scope's close took its disposals: the close owns them and disposes them as filed.
  ///
  /// Costs one pass under the lock when nothing the value may use was filed after the holder,
  /// and a walk of the graph only when something was filed after it; the caller skips the call
  /// for a scope that never filed a disposal (one flag load).
  final func keepFoundDependencies(below holder: UInt, resolved key: ServiceKey) {
    guard withStateIfMade({ _ in guardedDisposals.hasNewer(than: holder) }) else { return }
    // What the value may use is read before taking the lock again; the plan reads a little more
    // of the graph under it. Either walk reads immutable snapshots, runs no user code and takes
    // no scope's lock (only the process-wide cache of type facts, a leaf lock).
    var graph = DeclaredDependencies(from: self)
    guard let needed = graph.reach(ofKey: key), !needed.contains(holder) else { return }
    withStateIfMade { _ in
      guard guardedDisposals.hasNewer(than: holder, amongst: needed) else { return }
      let plan = FoundDependencyMove(holder: holder, needed: needed, entries: guardedDisposals.entries)
      guard let move = plan.make(with: &graph) else { return }
      guardedDisposals.move(move.moved, to: move.position)
    }
  }
}

/// Plans ``Scope/keepFoundDependencies(below:resolved:)``'s move over the disposals' entries: a
/// pure computation, run under the scope's lock.
struct FoundDependencyMove {
  /// The holder's registration (``AnyRegistration/identity``).
  let holder: UInt
  /// The registrations the value may use (see ``DeclaredDependencies/reach(ofKey:)``).
  let needed: Set<UInt>
  /// The scope's disposals, oldest first.
  let entries: [DisposalEntry]

  /// The positions to move (ascending) and where to; `nil` if nothing should move.
  func make(with graph: inout DeclaredDependencies) -> (moved: [Int], position: Int)? {
    guard let newest = entries.lastIndex(where: { $0.registration == holder }) else { return nil }
    // The holder's object may be filed again under another key later: it is disposed there.
    let holderObject = entries[newest].object
    let top = entries.lastIndex { $0.object == holderObject } ?? newest
    let above = entries.indices.dropFirst(top + 1)
    var moved = above.filter { needed.contains(entries[$0].registration) }
    guard !moved.isEmpty else { return nil }
    // One object filed under two keys is disposed at its newest position: all its copies move.
    let objects = Set(moved.map { entries[$0].object })
    moved = above.filter { needed.contains(entries[$0].registration) || objects.contains(entries[$0].object) }
    // What the moved instances may use, and the registrations they are.
    var uses: Set<UInt> = []
    var movedRegistrations: Set<UInt> = []
    for index in moved {
      let entry = entries[index]
      movedRegistrations.insert(entry.registration)
      // Unknown for a copy filed by a registration that declared nothing (a closure factory
      // returning the object another registration made): the object is one the value may use,
      // so what the value may use stands for what it uses.
      uses.formUnion(
        graph.reach(of: entry.registration, key: entry.key, followingDeferred: true) ?? needed)
    }
    // Below everything under the holder that was built from a moved instance (a deferred edge
    // does not count: a `Lazy` read later files what it finds below its own holder then)...
    var position = top
    var highestUsed = -1
    for index in 0..<top {
      let entry = entries[index]
      if uses.contains(entry.registration) {
        if entry.object == holderObject { return nil }  // they may use the holder: a cycle
        highestUsed = index
      }
      if position == top, entry.object != holderObject,
        let built = graph.reach(of: entry.registration, key: entry.key, followingDeferred: false),
        !built.isDisjoint(with: movedRegistrations)
      {
        position = index
      }
    }
    // ... and above everything they may use: if both cannot be, leave the order as it is.
    guard highestUsed < position, !uses.contains(holder) else { return nil }
    return (moved, position)
  }
}
