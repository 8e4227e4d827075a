import Synchronization

/// One shared instance (a singleton), written once under its registration's creation guard and
/// read by any thread without a lock.
///
/// **Invariant.** The value is written only by the thread that holds the registration's
/// ``CreationGuard`` (``provision(_:)``, ``publish(_:)``, ``clear(as:)``), and only while the
/// state is not `ready`, except ``clear(as:)``, which moves the state away from `ready` first. Any
/// thread reads it only after an acquiring load saw `ready` (``readyValue(as:)``); the creating
/// thread alone may read a `provisional` value (``provisionalValue(as:)``), which it stored itself.
/// So no read ever races with a write, and the storage, allocated once, lives as long as the cell.
///
/// The cell is not generic, so that freeing a registration does not look up the metadata of a
/// cell type per service type (a hash-map search in the runtime, about 500 instructions per
/// registration freed). Its methods take the value's type instead: the owner, a
/// `Registration<Service>`, always passes `Service`, the type it made the cell with, and drops the
/// value with ``drop(as:)`` in its own `deinit` (a cell freed without that leaks its value; it
/// never reads memory as the wrong type).
@usableFromInline
struct SharedInstanceCell: ~Copyable {
  @usableFromInline static var empty: UInt8 { 0 }
  @usableFromInline static var ready: UInt8 { 1 }
  @usableFromInline static var provisional: UInt8 { 2 }

  /// `empty`, `ready` (the instance is there for everyone), or `provisional` (the creating thread
  /// stored it and runs the activation hook).
  @usableFromInline let state = Atomic<UInt8>(SharedInstanceCell.empty)
  /// Room for one value of the owner's type, initialized exactly while the state is not `empty`;
  /// `nil` for a cell that never holds one (a registration whose lifetime keeps its instances
  /// elsewhere), which so costs no allocation.
  @usableFromInline let storage: UnsafeMutableRawPointer?

  /// An empty cell for values of type `Value`; with no storage at all when it will never hold
  /// one (`holdsInstances` false).
  @inline(__always)
  init<Value>(for _: Value.Type, holdsInstances: Bool) {
    storage = holdsInstances ? Self.allocate(Value.self) : nil
  }

  /// A cell holding `value`, ready.
  init<Value>(holding value: Value) {
    let storage = Self.allocate(Value.self)
    storage.initializeMemory(as: Value.self, to: value)
    self.storage = storage
    state.store(SharedInstanceCell.ready, ordering: .releasing)
  }

  @inline(__always)
  private static func allocate<Value>(_: Value.Type) -> UnsafeMutableRawPointer {
    .allocate(byteCount: MemoryLayout<Value>.stride, alignment: MemoryLayout<Value>.alignment)
  }

  deinit {
    storage?.deallocate()
  }

  /// Whether the cell has room for a value at all (see ``storage``).
  @inline(__always)
  var hasStorage: Bool { storage != nil }

  /// Deinitializes the value, if there is one: the owner's `deinit` calls this before the cell is
  /// freed.
  func drop<Value>(as _: Value.Type) {
    guard let storage,
      state.exchange(SharedInstanceCell.empty, ordering: .acquiring) != SharedInstanceCell.empty
    else { return }
    storage.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
  }

  /// Whether the instance is there for everyone.
  @inlinable @inline(__always)
  var isReady: Bool { state.load(ordering: .acquiring) == SharedInstanceCell.ready }

  /// The instance, if it is ready.
  @inlinable @inline(__always)
  func readyValue<Value>(as _: Value.Type) -> Value? {
    isReady ? storage?.assumingMemoryBound(to: Value.self).pointee : nil
  }

  /// The instance the calling thread stored and is activating; `nil` if there is none. Only the
  /// creating thread (the holder of the creation guard) may ask.
  @inlinable
  func provisionalValue<Value>(as _: Value.Type) -> Value? {
    guard state.load(ordering: .acquiring) == SharedInstanceCell.provisional else { return nil }
    return storage?.assumingMemoryBound(to: Value.self).pointee
  }

  /// Stores `value`, visible only to the creating thread, while its activation hook runs. A cell
  /// without storage keeps nothing.
  @inlinable
  func provision<Value>(_ value: Value) {
    guard let storage, state.load(ordering: .acquiring) == SharedInstanceCell.empty else { return }
    storage.initializeMemory(as: Value.self, to: value)
    state.store(SharedInstanceCell.provisional, ordering: .releasing)
  }

  /// Stores `value` (if not already provisioned with it) and makes it visible to every thread. A
  /// cell without storage stays empty.
  @inlinable
  func publish<Value>(_ value: Value) {
    guard let storage else { return }
    switch state.load(ordering: .acquiring) {
    case SharedInstanceCell.empty: storage.initializeMemory(as: Value.self, to: value)
    case SharedInstanceCell.provisional: break
    default: return  // already ready: the first instance stays
    }
    state.store(SharedInstanceCell.ready, ordering: .releasing)
  }

  /// Empties the cell and returns what it held, for the caller to drop outside any lock (its
  /// `deinit` is user code). State first: a `deinit` must not find a value that is going away.
  @inlinable
  func clear<Value>(as _: Value.Type) -> Value? {
    let previous = state.exchange(SharedInstanceCell.empty, ordering: .acquiringAndReleasing)
    guard let storage, previous != SharedInstanceCell.empty else { return nil }
    return storage.assumingMemoryBound(to: Value.self).move()
  }
}
