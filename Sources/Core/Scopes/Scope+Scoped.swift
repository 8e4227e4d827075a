#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One `scoped` instance of a scope, or one being created.
///
/// `@unchecked Sendable`: read and written only under the owning scope's `state` mutex.
struct ScopedSlot: @unchecked Sendable {
  let registration: ObjectIdentifier
  /// The thread running the factory; 0 once the instance is there.
  var creator: UInt
  /// A ``ScopedBox`` of the registration's service type; `nil` while being created.
  var instance: AnyObject?
}

/// A scoped instance, boxed so that slots of any service type fit one array.
@usableFromInline
final class ScopedBox<Value> {
  @usableFromInline let value: Value
  @inlinable init(_ value: Value) { self.value = value }
}

/// What a scope says about a scoped slot when asked for it.
@usableFromInline
enum ScopedSlotState {
  /// The instance exists: a ``ScopedBox``.
  case ready(AnyObject)
  /// The caller reserved the slot and must create the instance.
  case create
  /// Another thread is creating it; wait with ``Scope/waitForScoped(_:holder:key:)``.
  case wait(holder: UInt)
}

// The scope's side of the `scoped` lifetime. These functions are deliberately not generic: the
// generic half lives in `Registration` and is specialised in the caller's module, so neither half
// looks up generic metadata at run time.
extension Scope {
  /// Finds the slot of `registration`, or reserves it for the calling thread.
  ///
  /// - Throws: `scopeClosed`, or a `cycle` if the calling thread is the one creating it.
  @usableFromInline
  final func scopedSlot(for registration: AnyRegistration, thread: UInt) throws -> ScopedSlotState {
    let id = ObjectIdentifier(registration)
    return try state.withLock { state throws -> ScopedSlotState in
      guard !isClosed else { throw closedError(registration.key) }
      if let slot = state.scoped.slot(id) {
        if let instance = slot.instance { return .ready(instance) }
        if slot.creator == thread { throw ResolutionError.cycle(at: registration.key) }
        return .wait(holder: slot.creator)
      }
      state.scoped.append(ScopedSlot(registration: id, creator: thread, instance: nil))
      return .create
    }
  }

  /// Waits until `holder` stops creating the slot of `registration` (it filled or released it).
  ///
  /// - Throws: A `cycle` if `holder` waits, directly or through others, for the calling thread.
  @usableFromInline
  final func waitForScoped(_ registration: AnyRegistration, holder: UInt, thread: UInt) throws {
    let id = ObjectIdentifier(registration)
    try WaitGraph.shared.beginWaiting(thread, for: holder, key: registration.key)
    defer { WaitGraph.shared.endWaiting(thread) }
    while state.withLock({ $0.scoped.slot(id)?.creator == holder }) {
      sched_yield()
    }
  }

  /// Files a new instance in its reserved slot and, if it needs disposal, on the disposal stack.
  ///
  /// - Returns: `false` if the scope closed while the factory ran; the caller disposes the
  ///   instance and reports `scopeClosed`.
  @usableFromInline
  final func fillScoped(_ registration: AnyRegistration, instance: AnyObject, disposal: Disposal?) -> Bool {
    let id = ObjectIdentifier(registration)
    return state.withLock { state in
      guard !isClosed else { return false }
      let filled = state.scoped.update(id) { slot in
        slot.instance = instance
        slot.creator = 0
      }
      if filled, let disposal { state.disposals.append(disposal) }
      return filled
    }
  }

  /// Gives up a reserved slot after its factory threw.
  @usableFromInline
  final func releaseScoped(_ registration: AnyRegistration) {
    let id = ObjectIdentifier(registration)
    state.withLock { state in state.scoped.removeReserved(id) }
  }

  /// Takes a new shared instance into this scope's disposal stack.
  ///
  /// - Throws: `scopeClosed` if the scope is closing; the caller discards the instance, which this
  ///   method has disposed.
  func adopt(_ disposal: Disposal?) throws {
    guard let disposal else { return }
    let adopted = state.withLock { state in
      guard !isClosed else { return false }
      state.disposals.append(disposal)
      return true
    }
    if !adopted { throw closedWhileCreating(disposal.key, disposal: disposal) }
  }

  /// The error for an instance made while its scope closed; disposes it first.
  @usableFromInline
  final func closedWhileCreating(_ key: ServiceKey, disposal: Disposal?) -> ResolutionError {
    ResolutionError(
      code: .scopeClosed, key: key, registeredAt: nil,
      disposalErrors: disposal.map { Scope.runSync([$0]) } ?? [],
      hintSource: .text("\(chainDescription) closed while `\(key)` was being created; it was disposed"))
  }

  /// The scope that owns instances of a `scoped` registration, seen from `start`: `start` itself
  /// or an ancestor, so it lives as long as `start` does.
  @usableFromInline
  static func owningScope(
    from start: Unmanaged<Scope>, for registration: AnyRegistration, captor: Unmanaged<AnyRegistration>?
  ) throws -> Unmanaged<Scope> {
    guard let tag = registration.lifetime.scopeTag else { return start }
    var current = start
    while true {
      if current._withUnsafeGuaranteedRef({ $0.tag == tag }) { return current }
      guard let parent = current._withUnsafeGuaranteedRef({ $0.parentReference }) else { break }
      current = parent
    }
    let chainDescription = start.takeUnretainedValue().chainDescription
    if let captor = captor?.takeUnretainedValue() {
      throw ResolutionError(
        code: .captiveDependency, key: registration.key, registeredAt: captor.location,
        hintSource: .text(
          "`\(captor.key)` (\(captor.lifetime), registered at \(captor.location)) depends on "
            + "`\(registration.key)` (\(registration.lifetime), registered at "
            + "\(registration.location)); it would outlive every \(tag) scope and keep one of "
            + "their instances. Make `\(captor.key.service.name)` \(registration.lifetime) as well, "
            + "or pass the \(tag) value to it as an argument"))
    }
    throw ResolutionError(
      code: .noMatchingScope, key: registration.key, registeredAt: registration.location,
      hintSource: .text(
        "no `\(tag)` scope above \(chainDescription); resolve it from inside a \(tag) scope "
          + "(`container.makeScope(\(tag))`)"))
  }
}

/// A scope's scoped slots: the first inline, so that a scope with one scoped instance allocates
/// no array.
struct ScopedSlots {
  private var first: ScopedSlot?
  private var rest: [ScopedSlot] = []

  func slot(_ id: ObjectIdentifier) -> ScopedSlot? {
    if let first, first.registration == id { return first }
    return rest.first { $0.registration == id }
  }

  mutating func append(_ slot: ScopedSlot) {
    if first == nil { first = slot } else { rest.append(slot) }
  }

  /// Changes the slot of `id`; `false` if there is none.
  mutating func update(_ id: ObjectIdentifier, _ change: (inout ScopedSlot) -> Void) -> Bool {
    if first?.registration == id, var slot = first {
      change(&slot)
      first = slot
      return true
    }
    guard let index = rest.firstIndex(where: { $0.registration == id }) else { return false }
    change(&rest[index])
    return true
  }

  /// Removes the slot of `id` if it is still only reserved.
  mutating func removeReserved(_ id: ObjectIdentifier) {
    if let slot = first, slot.registration == id, slot.instance == nil {
      first = nil
    } else {
      rest.removeAll { $0.registration == id && $0.instance == nil }
    }
  }
}
