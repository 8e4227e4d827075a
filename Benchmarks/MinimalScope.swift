import Synchronization

/// The least a request scope with Strata's guarantees costs: the floor under `request-scope`,
/// measured beside it (its `minimal-scope` reference) so that the distance from the hand-written
/// baseline that no container can close is visible in every run.
///
/// What it keeps of Strata's request path, and nothing else, with no more atomic
/// read-modify-writes than Strata spends on each (`Benchmarks/callgrind-atomics.py` counts them):
/// - the scope holds its parent strongly, so a request keeps its container alive;
/// - a lifecycle word: a closed scope resolves nothing, and one close wins (one compare-and-swap);
/// - one instance slot claimed by compare-and-swap, so that racing resolves make one instance;
/// - the instance retained into the slot and published with a releasing store, then a
///   sequentially consistent fence and a second look at the lifecycle, so that a close racing the
///   creation cannot miss the instance (the creator then takes it back);
/// - a count of readers around each read of a published instance (not while the slot is still
///   empty), which a close waits for before it releases what the slot holds; the root's
///   singleton is read without one, as Strata reads the container's (released only when the
///   container is freed);
/// - a close that wins the lifecycle, waits for the readers and takes the instance with an
///   exchange; the scope's `deinit` then finds the slot empty with a plain load.
///
/// What it leaves out: registry lookups, the search for the owning scope, lifetime rules, cycle
/// detection, the ambient scope, the disposal check, the child list, errors that say anything.
/// One service type, one slot: it is a measurement, not a container.
final class MinimalRoot: Sendable {
  private let bar = Bar()

  /// The root's singleton.
  @inline(never)
  func sharedBar() -> Bar { bar }
}

/// A request scope of ``MinimalRoot`` (see there).
final class MinimalScope: @unchecked Sendable {
  struct Closed: Error {}

  /// The id of its measurement among `request-scope`'s references (see `Subjects.references`).
  static let referenceID = "minimal-scope"

  private static let creating: UInt = 1
  private static let ready: UInt = 2

  let parent: MinimalRoot
  private let lifecycle = Atomic<UInt>(0)
  private let slotState = Atomic<UInt>(0)
  private let slotInstance = Atomic<UInt>(0)
  private let readers = Atomic<UInt>(0)

  init(parent: MinimalRoot) {
    self.parent = parent
  }

  deinit {
    release(slotInstance.load(ordering: .acquiring))
  }

  /// The scope's one instance, made by `make` on first use.
  @inline(never)
  func resolve(_ make: () -> RequestState) throws -> RequestState {
    while true {
      guard lifecycle.load(ordering: .acquiring) == 0 else { throw Closed() }
      if let existing = readyInstance() { return existing }
      if slotState.compareExchange(expected: 0, desired: Self.creating, ordering: .acquiring).exchanged {
        return try create(make)
      }
      // Another thread is creating it: look again.
    }
  }

  /// Closes the scope once: waits for readers, then releases the instance.
  @inline(never)
  func close() {
    guard lifecycle.compareExchange(expected: 0, desired: 1, ordering: .sequentiallyConsistent).exchanged
    else { return }
    while readers.load(ordering: .sequentiallyConsistent) != 0 {}
    release(slotInstance.exchange(0, ordering: .acquiring))
  }

  private func readyInstance() -> RequestState? {
    guard slotState.load(ordering: .acquiring) == Self.ready else { return nil }
    readers.wrappingAdd(1, ordering: .sequentiallyConsistent)
    defer { readers.wrappingSubtract(1, ordering: .releasing) }
    guard lifecycle.load(ordering: .sequentiallyConsistent) == 0 else { return nil }
    let bits = slotInstance.load(ordering: .acquiring)
    guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
    return Unmanaged<RequestState>.fromOpaque(pointer).takeUnretainedValue()
  }

  private func create(_ make: () -> RequestState) throws -> RequestState {
    let instance = make()
    slotInstance.store(UInt(bitPattern: Unmanaged.passRetained(instance).toOpaque()), ordering: .releasing)
    slotState.store(Self.ready, ordering: .releasing)
    atomicMemoryFence(ordering: .sequentiallyConsistent)
    if lifecycle.load(ordering: .sequentiallyConsistent) != 0 {
      // A close began meanwhile and may have missed the instance: take it back.
      release(slotInstance.exchange(0, ordering: .acquiring))
    }
    return instance
  }

  private func release(_ bits: UInt) {
    guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return }
    Unmanaged<RequestState>.fromOpaque(pointer).release()
  }
}
