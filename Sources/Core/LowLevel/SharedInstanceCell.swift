import Synchronization

/// One shared instance (a singleton), written once under its registration's creation guard and
/// read by any thread without a lock.
///
/// **Invariant.** The value is written only by the thread that holds the registration's
/// ``CreationGuard`` (``provision(_:)``, ``publish(_:)``, ``clear()``), and only while the state
/// is not `ready`, except ``clear()``, which moves the state away from `ready` first. Any thread
/// reads it only after an acquiring load saw `ready` (``readyValue``); the creating thread alone
/// may read a `provisional` value (``provisionalValue``), which it stored itself. So no read ever
/// races with a write, and the storage, allocated once, lives as long as the cell.
@usableFromInline
struct SharedInstanceCell<Value>: ~Copyable {
  @usableFromInline static var empty: UInt8 { 0 }
  @usableFromInline static var ready: UInt8 { 1 }
  @usableFromInline static var provisional: UInt8 { 2 }

  /// `empty`, `ready` (the instance is there for everyone), or `provisional` (the creating thread
  /// stored it and runs the activation hook).
  @usableFromInline let state = Atomic<UInt8>(SharedInstanceCell.empty)
  /// Room for the instance, initialized exactly while the state is not `empty`; `nil` for a
  /// cell that never holds one (a registration whose lifetime keeps its instances elsewhere),
  /// which so costs no allocation.
  @usableFromInline let storage: UnsafeMutablePointer<Value>?

  /// A cell holding `initial` (ready), or nothing; with no storage at all when it will never hold
  /// an instance (`holdsInstances` false and no `initial`). Inlined into `Registration.init`, so
  /// that making a registration does not look up this type's metadata.
  @inline(__always)
  init(_ initial: Value?, holdsInstances: Bool = true) {
    if let initial {
      let storage = UnsafeMutablePointer<Value>.allocate(capacity: 1)
      storage.initialize(to: initial)
      self.storage = storage
      state.store(SharedInstanceCell.ready, ordering: .releasing)
    } else {
      storage = holdsInstances ? .allocate(capacity: 1) : nil
    }
  }

  deinit {
    guard let storage else { return }
    if state.load(ordering: .acquiring) != SharedInstanceCell.empty { storage.deinitialize(count: 1) }
    storage.deallocate()
  }

  /// Whether the instance is there for everyone.
  @inlinable @inline(__always)
  var isReady: Bool { state.load(ordering: .acquiring) == SharedInstanceCell.ready }

  /// The instance, if it is ready.
  @inlinable @inline(__always)
  var readyValue: Value? { isReady ? storage?.pointee : nil }

  /// The instance the calling thread stored and is activating; `nil` if there is none. Only the
  /// creating thread (the holder of the creation guard) may ask.
  var provisionalValue: Value? {
    state.load(ordering: .acquiring) == SharedInstanceCell.provisional ? storage?.pointee : nil
  }

  /// Stores `value`, visible only to the creating thread, while its activation hook runs. A cell
  /// without storage keeps nothing.
  func provision(_ value: Value) {
    guard let storage, state.load(ordering: .acquiring) == SharedInstanceCell.empty else { return }
    storage.initialize(to: value)
    state.store(SharedInstanceCell.provisional, ordering: .releasing)
  }

  /// Stores `value` (if not already provisioned with it) and makes it visible to every thread. A
  /// cell without storage stays empty.
  func publish(_ value: Value) {
    guard let storage else { return }
    switch state.load(ordering: .acquiring) {
    case SharedInstanceCell.empty: storage.initialize(to: value)
    case SharedInstanceCell.provisional: break
    default: return  // already ready: the first instance stays
    }
    state.store(SharedInstanceCell.ready, ordering: .releasing)
  }

  /// Empties the cell and returns what it held, for the caller to drop outside any lock (its
  /// `deinit` is user code). State first: a `deinit` must not find a value that is going away.
  func clear() -> Value? {
    let previous = state.exchange(SharedInstanceCell.empty, ordering: .acquiringAndReleasing)
    guard let storage, previous != SharedInstanceCell.empty else { return nil }
    return storage.move()
  }
}
