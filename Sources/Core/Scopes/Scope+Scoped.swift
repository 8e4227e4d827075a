import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One overflow `scoped` instance of a scope (past the inline slots), or one being created.
///
/// `@unchecked Sendable`: read and written only under the owning scope's `state` mutex.
struct ScopedSlot: @unchecked Sendable {
  /// The registration's `identity`.
  let registration: UInt
  /// The thread running the factory; 0 once the instance is there.
  var creator: UInt
  /// The instance (see `Registration.box`); `nil` while being created.
  var instance: AnyObject?
}

/// What a scope says about a scoped slot when asked for it.
@usableFromInline
enum ScopedSlotState {
  /// The instance exists (see `Registration.box`).
  case ready(AnyObject)
  /// The caller reserved the slot (inline index, or -1 for overflow) and must create the instance.
  case create(slot: Int)
  /// Another thread is creating it; wait with ``Scope/waitForScoped(_:holder:thread:)``.
  case wait(holder: UInt)
}

// The scope's side of the `scoped` lifetime. These functions are deliberately not generic: the
// generic half lives in `Registration` and is specialised in the caller's module, so neither half
// looks up generic metadata at run time.
extension Scope {
  /// The published instance of `registration` in an inline slot, as `unbox` makes it from the
  /// stored object: the lock-free fast path.
  ///
  /// Only a slot that holds the instance is read, inside ``readingCache(_:)``: a close releases
  /// inline instances once no reader is inside.
  @inlinable @inline(__always)
  final func readyInlineInstance<Service>(
    _ registration: AnyRegistration, _ unbox: (AnyObject) -> Service
  ) -> Service? {
    let ready = registration.identity | InlineSlot.ready
    for index in 0..<InlineSlots.count {
      let tag = inlineSlots.tag(index)
      if tag == ready { return readingCache { inlineSlots.withInstance(index, unbox) } }
      if tag == 0 { return nil }
    }
    return nil
  }

  /// Reserves the first free inline slot for `registration`, when this scope is open and no slot
  /// holds anything of it yet: how a scoped instance is first made, without a call. `nil` sends
  /// the caller to ``scopedSlot(for:thread:)``, which handles every case.
  @inlinable @inline(__always)
  final func reserveFreeInlineSlot(_ registration: AnyRegistration, thread: UInt) -> Int? {
    guard !Scope.isClosed(ScopeRef(self)) else { return nil }
    let id = registration.identity
    for index in 0..<InlineSlots.count {
      let tag = inlineSlots.tag(index)
      if tag == 0 { return inlineSlots.claim(index, from: 0, for: id, thread: thread).claimed ? index : nil }
      if tag & ~InlineSlot.stateMask == id { return nil }
    }
    return nil
  }

  /// Finds the slot of `registration`, or reserves one for the calling thread.
  ///
  /// - Throws: `scopeClosed`, or a `cycle` if the calling thread is the one creating it.
  @usableFromInline
  final func scopedSlot(for registration: AnyRegistration, thread: UInt) throws -> ScopedSlotState {
    guard !isClosed else { throw closedError(registration.key) }
    let id = registration.identity
    for index in 0..<InlineSlots.count {
      var tag = inlineSlots.tag(index)
      while true {
        if tag == 0 || tag == id | InlineSlot.vacant {
          // A vacant slot was given up by a creator whose factory threw, or whose instance this
          // scope refused because it began closing: looked at again (acquiring), the close is
          // seen here, and no factory runs for a scope that is closing.
          if tag != 0, isClosed { throw closedError(registration.key) }
          let claim = inlineSlots.claim(index, from: tag, for: id, thread: thread)
          if claim.claimed { return .create(slot: index) }
          tag = claim.found
          continue
        }
        guard tag & ~InlineSlot.stateMask == id else { break }  // another registration's slot
        if tag & InlineSlot.stateMask == InlineSlot.ready {
          let ready = readingCache { inlineSlots.withInstance(index) { $0 } }
          guard let ready else { throw closedError(registration.key) }
          return .ready(ready)
        }
        let holder = inlineSlots.creator(index)
        if holder == thread {
          // Re-entered by its own creator: from the activation hook, the instance is there.
          guard let instance = inlineSlots.withInstance(index, { $0 }) else {
            throw ResolutionError.cycle(at: registration.key)
          }
          return .ready(instance)
        }
        if holder == 0 {  // between reserving and naming itself, or finishing: look again
          sched_yield()
          tag = inlineSlots.tag(index)
          continue
        }
        return .wait(holder: holder)
      }
    }
    return try overflowSlot(for: registration, thread: thread)
  }

  private func overflowSlot(for registration: AnyRegistration, thread: UInt) throws -> ScopedSlotState {
    let id = registration.identity
    return try withState { state throws -> ScopedSlotState in
      guard !isClosed else { throw closedError(registration.key) }
      if let slot = state.scoped.first(where: { $0.registration == id }) {
        if slot.creator == 0 || slot.creator == thread, let instance = slot.instance {
          return .ready(instance)  // published, or provisional for its own creator
        }
        if slot.creator == thread { throw ResolutionError.cycle(at: registration.key) }
        return .wait(holder: slot.creator)
      }
      state.scoped.append(ScopedSlot(registration: id, creator: thread, instance: nil))
      return .create(slot: -1)
    }
  }

  /// Waits until `holder` stops creating the instance of `registration` (it published it or gave
  /// up).
  ///
  /// - Throws: A `cycle` if the creator waits, directly or through others, for the calling thread.
  @usableFromInline
  final func waitForScoped(_ registration: AnyRegistration, holder: UInt, thread: UInt) throws {
    let target = ScopedCreation(scope: self, registration: registration.identity)
    try WaitGraph.shared.beginWaiting(thread, for: target, key: registration.key)
    defer { WaitGraph.shared.endWaiting(thread) }
    // Blocked, not spinning: a factory that opens a connection may run for milliseconds, and a
    // spinning waiter kept a core busy all that time (see `WaitCondition`).
    Scope.scopedCreationCondition.wait(
      until: { creator(of: registration.identity) != holder }, countedIn: Scope.scopedCreationWaiters)
  }

  /// The thread creating the instance of the registration numbered `identity`; 0 if none is.
  func creator(of identity: UInt) -> UInt {
    for index in 0..<InlineSlots.count {
      let tag = inlineSlots.tag(index)
      if tag == identity | InlineSlot.creating { return inlineSlots.creator(index) }
      if tag == 0 { return 0 }
    }
    return withStateIfMade { state in
      state?.scoped.first { $0.registration == identity }?.creator ?? 0
    }
  }

  /// Puts a new scoped instance that needs disposal on the disposal stack, before it is published.
  ///
  /// - Returns: `nil` once filed; the disposal, given back, if the scope closed while the factory
  ///   ran: the slot is given up and the caller disposes the instance and reports `scopeClosed`.
  @usableFromInline
  final func fileScopedDisposal(_ registration: AnyRegistration, slot: Int, _ disposal: consuming Disposal)
    -> Disposal?
  {
    guard let refused = file(disposal) else { return nil }
    releaseScoped(registration, slot: slot)
    return refused
  }

  /// Publishes a new instance in its reserved slot: from now on every thread sees it.
  @inlinable @inline(__always)
  final func publishScoped(_ registration: AnyRegistration, slot: Int) {
    guard slot >= 0 else { return publishOverflow(registration) }
    inlineSlots.publish(slot, for: registration.identity)
  }

  /// After ``publishScoped(_:slot:)``: if this scope began closing meanwhile, takes the instance
  /// back out of inline slot `slot`, once the scope's readers are out (as its close does; the
  /// close skipped the slot, which was being created). An overflow slot needs nothing: the close
  /// takes the whole overflow table, so a late instance is never stored there.
  ///
  /// The fence orders the publication before the load of the flag; the close sets its flag with a
  /// sequentially consistent exchange and scans the tags with sequentially consistent loads: one
  /// of the two sees the other, and whichever takes the instance first takes it alone (an
  /// exchange).
  ///
  /// Then wakes the threads waiting for a creation to end, if any wait (see
  /// ``scopedCreationEnded()``): the same fence orders the publication before the load of their
  /// count.
  @inlinable @inline(__always)
  final func releaseIfClosing(slot: Int) {
    guard slot >= 0 else { return Scope.scopedCreationEnded() }
    atomicMemoryFence(ordering: .sequentiallyConsistent)
    if isClosing { releaseLateScoped(slot: slot) }
    if Scope.scopedCreationWaiters.load(ordering: .relaxed) != 0 { Scope.wakeScopedCreationWaiters() }
  }

  /// How many threads wait in ``waitForScoped(_:holder:thread:)`` for another thread's creation of
  /// a scoped instance to end (a count beside ``scopedCreationCondition``, read on every creation
  /// without touching it).
  @usableFromInline static let scopedCreationWaiters = Atomic<Int>(0)

  /// Where threads waiting for another thread's creation of a scoped instance block.
  static let scopedCreationCondition = WaitCondition()

  /// After a creation of a scoped instance ended some other way than publishing an inline slot
  /// (an overflow slot published, a slot given up): wakes the threads waiting for it, if any.
  @usableFromInline
  static func scopedCreationEnded() {
    atomicMemoryFence(ordering: .sequentiallyConsistent)
    if scopedCreationWaiters.load(ordering: .relaxed) != 0 { wakeScopedCreationWaiters() }
  }

  @usableFromInline
  static func wakeScopedCreationWaiters() { scopedCreationCondition.wakeAll() }

  @usableFromInline
  final func releaseLateScoped(slot: Int) {
    guard !links.isRoot else { return }  // the root keeps its cache until it is freed
    while cacheReaders.load(ordering: .sequentiallyConsistent) != 0 { sched_yield() }
    _ = inlineSlots.takeInstance(slot)
  }

  @usableFromInline
  final func publishOverflow(_ registration: AnyRegistration) {
    let id = registration.identity
    _ = withState { state in state.scoped.update(id) { slot in slot.creator = 0 } }
  }

  /// Stores a new instance in its reserved slot, visible only to the creating thread until
  /// ``publishScoped(_:slot:)`` publishes it.
  ///
  /// - Parameter instance: The instance as an object (see ``ObjectBox``).
  @inlinable @inline(__always)
  final func provisionScoped(_ registration: AnyRegistration, slot: Int, instance: AnyObject) {
    guard slot >= 0 else { return provisionOverflow(registration, instance: instance) }
    inlineSlots.provision(slot, instance)
  }

  @usableFromInline
  final func provisionOverflow(_ registration: AnyRegistration, instance: AnyObject) {
    let id = registration.identity
    _ = withState { state in state.scoped.update(id) { slot in slot.instance = instance } }
  }

  /// Gives up a reserved slot after its factory threw.
  @usableFromInline
  final func releaseScoped(_ registration: AnyRegistration, slot: Int) {
    let id = registration.identity
    guard slot >= 0 else {
      let isGivenUp = { (slot: ScopedSlot) in slot.registration == id && slot.creator != 0 }
      let dropped = withState { state -> [ScopedSlot] in
        defer { state.scoped.removeAll(where: isGivenUp) }
        return state.scoped.filter(isGivenUp)
      }
      _ = consume dropped  // freed here, after the lock: an instance's `deinit` may use this scope
      Scope.scopedCreationEnded()
      return
    }
    inlineSlots.vacate(slot, for: id)
    Scope.scopedCreationEnded()
  }

  /// Takes a new shared instance into this scope's disposal stack.
  ///
  /// - Throws: `scopeClosed` if the scope is closing; the caller discards the instance, which this
  ///   method has disposed.
  @usableFromInline
  func adopt(_ disposal: consuming Disposal?) throws {
    guard let disposal else { return }
    if let refused = file(disposal) { throw closedWhileCreating(refused.key, disposal: refused) }
  }

  /// Puts `disposal` on the disposal stack, under the lock that `close` takes, so that either the
  /// close disposes the instance or the caller does: never both, never neither.
  ///
  /// - Returns: `nil` once filed; `disposal` itself if this scope or an ancestor is closing and
  ///   nothing was filed (the caller disposes it). Moved either way, never copied.
  private func file(_ disposal: consuming Disposal) -> Disposal? {
    guard ensureLinked() else { return disposal }
    var pending = Optional(disposal)
    // Made through a `Lazy`, `Provider` or `@Injected` of an instance this scope disposes: a
    // dependency of that instance made after it, so disposed after it too.
    // (Only in the scope that resolve runs in: another scope it reaches may hold an instance of
    // the same registration, which this one is not a dependency of.)
    // What such a resolve finds instead, made after the holder by another resolve, is moved
    // below the holder once the resolve returns (`Scope+FoundDependencies.swift`).
    let deferred = ThreadContext.deferredHolder
    let holder = deferred.scope == UInt(bitPattern: ObjectIdentifier(self)) ? deferred.identity : 0
    withStateIfMade { _ in
      guard lifecycle.takeOwnership(), !isClosed, let filed = pending.take() else { return }
      if holder == 0 {
        guardedDisposals.push(filed)
      } else {
        guardedDisposals.push(filed, belowNewestOf: holder)
      }
    }
    return pending
  }

  /// The error for an instance made while its scope closed; disposes it first.
  @usableFromInline
  final func closedWhileCreating(_ key: ServiceKey, disposal: Disposal?) -> ResolutionError {
    ResolutionError(
      .closedWhileCreating(key, scope: chainDescription),
      disposalErrors: disposal.map { Scope.disposeNow($0) } ?? [])
  }

  /// The scope that owns instances of a `scoped` registration, seen from `start`: `start` itself
  /// or an ancestor, so it lives as long as `start` does.
  ///
  /// The lifetime rules (``LifetimeRules``) decide here whether the instance being built (the
  /// `captor`, or the shared instance whose factory made `start` current) may keep it.
  @inlinable @inline(__always)
  static func owningScope(
    from start: ScopeRef, for registration: AnyRegistration, captor: RegistrationRef?
  ) throws -> ScopeRef {
    let tagID = registration.scopeTagID
    guard tagID != 0 else {
      if let holder = captor ?? ThreadContext.ambientHolder(resolvingIn: start),
        holder.with({
          LifetimeRules.capture(of: .scoped, tagged: nil, by: $0.kind) == .captive
        })
      {
        throw captive(registration, heldBy: holder)
      }
      return start
    }
    var current = start
    while true {
      if current.with({ $0.tag.id == tagID }) { return current }
      guard let parent = current.parent else { break }
      current = parent
    }
    let holder = captor ?? ThreadContext.ambientHolder(resolvingIn: start)
    throw noOwningScope(from: start, for: registration, captor: holder)
  }

  /// The scope with tag `tagID` at or above `start` (`start` itself for 0), or `nil`.
  @inlinable @inline(__always)
  static func owningScopeIfPresent(from start: ScopeRef, tagID: Int) -> ScopeRef? {
    guard tagID != 0 else { return start }
    var current = start
    while true {
      if current.with({ $0.tag.id == tagID }) { return current }
      guard let parent = current.parent else { return nil }
      current = parent
    }
  }

  /// The error for an untagged `scoped` registration that a singleton or weak instance would keep.
  @usableFromInline
  static func captive(_ registration: AnyRegistration, heldBy holder: RegistrationRef)
    -> ResolutionError
  {
    ResolutionError(
      .captiveDependency(
        captive: registration.descriptor, captor: holder.registration.descriptor, tag: nil))
  }

  /// The error for a `scoped(tag)` registration resolved where no enclosing scope has the tag.
  @usableFromInline
  static func noOwningScope(
    from start: ScopeRef, for registration: AnyRegistration, captor: RegistrationRef?
  ) -> ResolutionError {
    let tag = registration.lifetime.scopeTag ?? .root
    if let captor = captor?.registration {
      return ResolutionError(
        .captiveDependency(captive: registration.descriptor, captor: captor.descriptor, tag: tag))
    }
    let scope = start.scope.chainDescription
    return ResolutionError(.noScopeWithTag(registration.descriptor, tag: tag, scope: scope))
  }
}

/// A scoped instance being created in a scope: what a thread waits for when another one is
/// creating it. Holds the scope only while the waiting thread, which holds it too, waits.
final class ScopedCreation: WaitTarget {
  let scope: Scope
  let registration: UInt

  init(scope: Scope, registration: UInt) {
    self.scope = scope
    self.registration = registration
  }

  var currentHolder: UInt { scope.creator(of: registration) }
}

extension [ScopedSlot] {
  /// Changes the slot of `id`; `false` if there is none.
  mutating func update(_ id: UInt, _ change: (inout ScopedSlot) -> Void) -> Bool {
    guard let index = firstIndex(where: { $0.registration == id }) else { return false }
    change(&self[index])
    return true
  }

}
