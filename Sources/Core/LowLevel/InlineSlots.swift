import Synchronization

/// The first four scoped instances of a scope, reached without a lock: per slot a tag (the
/// registration's identity | a ``InlineSlot`` state), the thread creating the instance, and the
/// instance itself.
///
/// **Invariant.** A slot's instance word holds either 0 or one retain of an object (see
/// ``ObjectBox``), put there by ``provision(_:_:)`` and given back by ``takeInstance(_:)``,
/// ``vacate(_:for:)`` or ``releaseAll()``: each retain is given back exactly once. A slot, once
/// tagged with a registration, keeps it; slots are tagged in index order, so the first untagged
/// slot ends every search. Only the thread that claimed a slot (``claim(_:from:for:thread:)``)
/// writes its instance word until it publishes or vacates it. Whoever reads an instance
/// (``withInstance(_:_:)``) must make sure nobody takes it meanwhile: the owning scope does so
/// with its reader count (`Scope.readingCache`).
///
/// Plain stored atomics, not an `InlineArray`: that one's noncopyable elements are handled by
/// unspecialised generic code, which made creating and freeing a scope three times slower.
@usableFromInline
package struct InlineSlots: ~Copyable, Sendable {
  @usableFromInline let tag0 = Atomic<UInt>(0)
  @usableFromInline let tag1 = Atomic<UInt>(0)
  @usableFromInline let tag2 = Atomic<UInt>(0)
  @usableFromInline let tag3 = Atomic<UInt>(0)
  @usableFromInline let creator0 = Atomic<UInt>(0)
  @usableFromInline let creator1 = Atomic<UInt>(0)
  @usableFromInline let creator2 = Atomic<UInt>(0)
  @usableFromInline let creator3 = Atomic<UInt>(0)
  @usableFromInline let instance0 = Atomic<UInt>(0)
  @usableFromInline let instance1 = Atomic<UInt>(0)
  @usableFromInline let instance2 = Atomic<UInt>(0)
  @usableFromInline let instance3 = Atomic<UInt>(0)

  /// How many slots there are.
  @inlinable package static var count: Int { 4 }

  @inlinable @inline(__always)
  package init() {}

  // MARK: Tags and creators

  /// The tag of slot `index` (0 ..< ``count``): 0 while untagged.
  @inlinable @inline(__always)
  package func tag(_ index: Int) -> UInt { tagWord(index) { $0.load(ordering: .acquiring) } }

  /// ``tag(_:)``, read in the total order of sequentially consistent operations: for a close's
  /// scan, which must see a tag published before a creator's fence (see
  /// `Scope.releaseCachedInstances()`).
  @inlinable @inline(__always)
  package func tagInOrder(_ index: Int) -> UInt {
    tagWord(index) { $0.load(ordering: .sequentiallyConsistent) }
  }

  /// The thread creating slot `index`'s instance; 0 if none is (yet, or any more).
  @inlinable @inline(__always)
  package func creator(_ index: Int) -> UInt { creatorWord(index) { $0.load(ordering: .acquiring) } }

  /// Moves slot `index` from tag `expected` to "being created by `thread`" for the registration
  /// `id`.
  ///
  /// - Returns: Whether this thread got it, and the tag found if not.
  @inlinable @inline(__always)
  package func claim(_ index: Int, from expected: UInt, for id: UInt, thread: UInt) -> (
    claimed: Bool, found: UInt
  ) {
    let (exchanged, original) = tagWord(index) {
      $0.compareExchange(
        expected: expected, desired: id | InlineSlot.creating, ordering: .acquiringAndReleasing)
    }
    if exchanged { creatorWord(index) { $0.store(thread, ordering: .releasing) } }
    return (exchanged, original)
  }

  /// Publishes slot `index`'s instance: from now on every thread sees it as ready.
  @inlinable @inline(__always)
  package func publish(_ index: Int, for id: UInt) {
    creatorWord(index) { $0.store(0, ordering: .releasing) }
    tagWord(index) { $0.store(id | InlineSlot.ready, ordering: .releasing) }
  }

  /// Gives up slot `index` after its factory threw: it stays the registration's, vacant, and
  /// releases the instance it was provisioned with, if any.
  package func vacate(_ index: Int, for id: UInt) {
    let bits = instanceWord(index) { $0.exchange(0, ordering: .acquiringAndReleasing) }
    creatorWord(index) { $0.store(0, ordering: .releasing) }
    tagWord(index) { $0.store(id | InlineSlot.vacant, ordering: .releasing) }
    if let instance = UnsafeRawPointer(bitPattern: bits) {
      Unmanaged<AnyObject>.fromOpaque(instance).release()
    }
  }

  // MARK: Instances

  /// Stores `instance` in slot `index`, which the calling thread claimed, taking one retain of it.
  @inlinable @inline(__always)
  package func provision(_ index: Int, _ instance: AnyObject) {
    let bits = UInt(bitPattern: Unmanaged.passRetained(instance).toOpaque())
    instanceWord(index) { $0.store(bits, ordering: .releasing) }
  }

  /// Runs `body` on slot `index`'s instance without retaining it; `nil` if the slot holds none.
  /// The caller keeps the instance from being taken meanwhile (see the invariant).
  @inlinable @inline(__always)
  package func withInstance<Result>(_ index: Int, _ body: (AnyObject) -> Result) -> Result? {
    let bits = instanceWord(index) { $0.load(ordering: .acquiring) }
    guard let instance = UnsafeRawPointer(bitPattern: bits) else { return nil }
    return Unmanaged<AnyObject>.fromOpaque(instance)._withUnsafeGuaranteedRef(body)
  }

  /// Takes slot `index`'s instance out, with the slot's retain: the caller frees it by dropping it.
  package func takeInstance(_ index: Int) -> AnyObject? {
    let bits = instanceWord(index) { $0.exchange(0, ordering: .acquiringAndReleasing) }
    return UnsafeRawPointer(bitPattern: bits).map { Unmanaged<AnyObject>.fromOpaque($0).takeRetainedValue() }
  }

  /// Releases every ready instance: for the owner's `deinit`, when nobody else can reach the slots.
  @inline(__always)
  package func releaseAll() {
    for index in 0..<InlineSlots.count {
      let tag = tag(index)
      if tag == 0 { break }  // slots are tagged in order
      guard tag & InlineSlot.stateMask == InlineSlot.ready else { continue }
      // Most often a close took the instance already: a load, not an atomic exchange, finds that
      // (nobody else can reach the slot now).
      guard instanceWord(index, { $0.load(ordering: .acquiring) }) != 0 else { continue }
      _ = takeInstance(index)
    }
  }

  // MARK: The words

  @inlinable @inline(__always)
  func tagWord<Result>(_ index: Int, _ body: (borrowing Atomic<UInt>) -> Result) -> Result {
    switch index {
    case 0: body(tag0)
    case 1: body(tag1)
    case 2: body(tag2)
    default: body(tag3)
    }
  }

  @inlinable @inline(__always)
  func creatorWord<Result>(_ index: Int, _ body: (borrowing Atomic<UInt>) -> Result) -> Result {
    switch index {
    case 0: body(creator0)
    case 1: body(creator1)
    case 2: body(creator2)
    default: body(creator3)
    }
  }

  @inlinable @inline(__always)
  func instanceWord<Result>(_ index: Int, _ body: (borrowing Atomic<UInt>) -> Result) -> Result {
    switch index {
    case 0: body(instance0)
    case 1: body(instance1)
    case 2: body(instance2)
    default: body(instance3)
    }
  }
}

/// The states of an inline scoped slot, in the low bits of its tag (a registration's `identity`
/// leaves them clear).
@usableFromInline
package enum InlineSlot {
  /// A thread is running the factory.
  @usableFromInline package static var creating: UInt { 1 }
  /// The instance is published.
  @usableFromInline package static var ready: UInt { 2 }
  /// Reserved for the registration, but nobody is creating it (a factory threw).
  @usableFromInline package static var vacant: UInt { 3 }
  @usableFromInline package static var stateMask: UInt { 3 }
}

/// Any value as an object, so that every scoped slot holds one: a class instance as itself, any
/// other value in a ``ValueBox``.
///
/// **Invariant.** ``unbox(_:as:)`` is given only what ``box(_:)`` made from a value of the same
/// `Service` type: a slot is tagged with its registration's identity, and a registration's
/// service type never changes. After specialisation the class test is a constant, so a
/// class-typed scoped service costs no box and no cast.
@usableFromInline
package enum ObjectBox {
  @inlinable @inline(__always)
  package static func box<Service>(_ instance: Service) -> AnyObject {
    if Service.self is AnyObject.Type { return unsafeBitCast(instance, to: AnyObject.self) }
    return ValueBox(instance)
  }

  @inlinable @inline(__always)
  package static func unbox<Service>(_ stored: AnyObject, as _: Service.Type) -> Service {
    if Service.self is AnyObject.Type { return unsafeBitCast(stored, to: Service.self) }
    return unsafeDowncast(stored, to: ValueBox<Service>.self).value
  }
}

/// A value boxed in an object: a scoped instance of a non-class type (so that every slot holds an
/// object), or an entry of a resolve's graph cache.
@usableFromInline
package final class ValueBox<Value> {
  @usableFromInline let value: Value
  @inlinable init(_ value: Value) { self.value = value }
}

/// `value` as `Target`, which must be its own type: how a value whose type is known only as an
/// opened existential reaches a caller that names the type through a generic parameter.
///
/// Checked, not assumed: the types' identities are compared first, and a mismatch throws. (A
/// conditional cast would do, but unspecialised its `Target?` looks up `Optional<Target>`'s
/// metadata in the runtime each time, about 450 instructions.)
@usableFromInline
package func identicallyTyped<Source, Target>(_ value: Source, as _: Target.Type) throws -> Target {
  guard Source.self == Target.self else { throw TypeMismatch(source: Source.self, target: Target.self) }
  return unsafeBitCast(value, to: Target.self)
}

/// Thrown by ``identicallyTyped(_:as:)`` for two different types.
package struct TypeMismatch: Error, CustomStringConvertible {
  let source: Any.Type
  let target: Any.Type
  package var description: String { "\(source) is not \(target)" }
}
