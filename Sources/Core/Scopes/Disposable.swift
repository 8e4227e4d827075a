/// A service that releases resources when the scope owning it closes.
///
/// ```swift
/// final class Connection: Disposable, Sendable {
///   static func open() throws -> Connection { … }
///   func dispose() throws { try socket.close() }
/// }
/// registry.register(Connection.self, lifetime: .scoped(.request)) { _ in try Connection.open() }
/// ```
///
/// A scope disposes the instances it owns — the singletons it registered and the scoped instances
/// it holds — in reverse creation order, each exactly once, when it closes. Transient, graph and
/// weak instances belong to whoever resolved them; no scope keeps or disposes them, so resolving
/// transients from a long-lived container never piles them up.
public protocol Disposable {
  /// Releases the instance's resources. A thrown error is collected; the remaining disposers
  /// still run.
  ///
  /// - Throws: Any error; the closing scope reports it in a ``ResolutionError`` with code
  ///   ``ResolutionError/Code/disposalFailed``.
  func dispose() throws
}

/// A service whose clean-up is asynchronous, such as draining a connection pool.
///
/// ```swift
/// final class Pool: AsyncDisposable {
///   func dispose() async throws { try await drain() }
/// }
///
/// func shutDown(_ scope: Scope) async throws {
///   try await scope.close()   // awaits Pool.dispose()
/// }
/// ```
///
/// Close a scope that may own such instances with `try await scope.close()`; see
/// ``Scope/close()-70h7``.
public protocol AsyncDisposable {
  /// Releases the instance's resources.
  ///
  /// - Throws: Any error; it is collected, and the remaining disposers still run.
  func dispose() async throws
}

/// One entry of a scope's disposal stack.
///
/// The instance is held as an object (itself, or boxed: see ``ObjectBox``) with the metatype of
/// its conformance, so that filing, moving and running a disposal copies no opaque existential,
/// and making one needs no cast at run time when the instance's static type conforms (the
/// compiler resolves `as? any Disposable` from a concrete type; a cast to the class-bound
/// `any Disposable & AnyObject` is a look-up in the runtime's conformance cache, about 300
/// instructions per instance).
///
/// `@unchecked Sendable`: the instance is only touched by the closing scope, once, after every
/// reference the scope handed out was made; concurrent use by the service's other holders is
/// the service's own business, as it is for any shared instance.
@usableFromInline
struct Disposal: @unchecked Sendable {
  @usableFromInline
  enum Action {
    case sync(SyncDisposer)
    case async(AsyncDisposer)
  }

  @usableFromInline let key: ServiceKey
  /// The ``AnyRegistration/identity`` of the registration that made the instance.
  @usableFromInline let registration: UInt
  @usableFromInline let action: Action

  @usableFromInline
  init(key: ServiceKey, registration: UInt, action: Action) {
    self.key = key
    self.registration = registration
    self.action = action
  }

  /// The disposal an instance needs, if any. Called once per shared instance, when it is created.
  ///
  /// Inlined into code specialised for the instance's static type: the kind comes from
  /// ``DisposalKind`` (remembered per dynamic type), so no cast that fails is made, and the one
  /// that succeeds starts from the static type, which the compiler resolves when that type
  /// conforms (an instance behind a protocol type is cast at run time).
  @inlinable
  static func of<Instance>(_ instance: Instance, key: ServiceKey, registration: UInt) -> Disposal? {
    of(instance, kind: kind(of: instance), key: key, registration: registration)
  }

  /// What `instance` needs: `none`, `sync` or `async` (never `perInstance`: a wrapper's or an
  /// existential's answer is worked out for the value inside).
  @inlinable
  static func kind<Instance>(of instance: Instance) -> DisposalKind {
    let kind = DisposalKind.of(Swift.type(of: instance)) {
      if DisposalKind.variesPerInstance(instance) { return .perInstance }
      if instance is any AsyncDisposable { return .async }
      if instance is any Disposable { return .sync }
      return DisposalKind.none
    }
    guard kind == .perInstance else { return kind }
    return instance is any AsyncDisposable ? .async : instance is any Disposable ? .sync : .none
  }

  /// The disposal of an instance whose kind is known to be `kind` (see ``kind(of:)``).
  @inlinable
  static func of<Instance>(
    _ instance: Instance, kind: DisposalKind, key: ServiceKey, registration: UInt
  ) -> Disposal? {
    switch kind {
    case .perInstance:
      return nil
    case .none:
      return nil
    case .async:
      // The static type's conformance, when it has one: the compiler resolves this cast.
      if let type = Instance.self as? any AsyncDisposable.Type {
        return Disposal(
          key: key, registration: registration,
          action: .async(AsyncDisposer(ObjectBox.box(instance), as: type)))
      }
      guard let disposable = instance as? any AsyncDisposable else { return nil }
      return Disposal(key: key, registration: registration, action: .async(AsyncDisposer(disposable)))
    case .sync:
      if let type = Instance.self as? any Disposable.Type {
        return Disposal(
          key: key, registration: registration, action: .sync(SyncDisposer(ObjectBox.box(instance), as: type))
        )
      }
      guard let disposable = instance as? any Disposable else { return nil }
      return Disposal(key: key, registration: registration, action: .sync(SyncDisposer(disposable)))
    }
  }
}

/// A ``Disposable`` instance, as an object and the closure that unboxes it and runs `dispose()`.
///
/// **Invariant** (that of ``ObjectBox``): `object` is what `ObjectBox.box` made from a value of
/// the type `run` unboxes. `init(_:)` makes both from one typed value; `init(_:as:)` is given the
/// boxed object and its type separately, and has one caller, ``Disposal/of(_:key:registration:)``, which boxes
/// the instance at its static type `Instance` and passes `Instance.self` itself (opened from
/// `Instance.self as? any Disposable.Type`, so the same type). Neither is reachable by a user.
@usableFromInline
struct SyncDisposer {
  @usableFromInline let object: AnyObject
  @usableFromInline let run: (AnyObject) throws -> Void

  @inlinable
  init<Instance: Disposable>(_ instance: Instance) {
    self.init(ObjectBox.box(instance), as: Instance.self)
  }

  /// - Parameter object: What `ObjectBox.box` made from an instance of `type` exactly.
  @inlinable
  init<Instance: Disposable>(_ object: AnyObject, as type: Instance.Type) {
    self.object = object
    run = { try ObjectBox.unbox($0, as: Instance.self).dispose() }
  }

  /// Runs the instance's `dispose()`.
  func dispose() throws { try run(object) }
}

/// An ``AsyncDisposable`` instance, as an object and the closure that unboxes it and awaits
/// `dispose()` (see ``SyncDisposer``, whose invariant it shares).
@usableFromInline
struct AsyncDisposer {
  @usableFromInline let object: AnyObject
  @usableFromInline let run: (AnyObject) async throws -> Void

  @inlinable
  init<Instance: AsyncDisposable>(_ instance: Instance) {
    self.init(ObjectBox.box(instance), as: Instance.self)
  }

  /// - Parameter object: What `ObjectBox.box` made from an instance of `type` exactly.
  @inlinable
  init<Instance: AsyncDisposable>(_ object: AnyObject, as type: Instance.Type) {
    self.object = object
    run = { try await ObjectBox.unbox($0, as: Instance.self).dispose() }
  }

  /// Runs the instance's `dispose()`.
  func dispose() async throws { try await run(object) }
}

/// A disposer's error, with the service it came from.
public struct DisposalError: Error, CustomStringConvertible {
  /// The service whose disposer failed.
  public let key: ServiceKey
  /// What the disposer threw.
  public let underlying: any Error

  /// `Connection: <error>`, the error's text as stable as a name's (see `StableText`).
  public var description: String { "\(key): \(StableText.describing(underlying))" }
}

/// Which disposal protocol a type conforms to, remembered per type for the whole process (see
/// ``TypeFacts``): the first instance of a type pays for the casts that fail, and later instances
/// make only the one cast that succeeds (see ``Disposal/of(_:key:registration:)``).
@usableFromInline
enum DisposalKind: UInt {
  case none = 1
  case sync = 2
  case async = 3
  /// A wrapper whose conformance a cast looks through to the value inside (an `Optional`, an
  /// `AnyHashable`): the answer depends on the instance, so it is worked out for each one.
  case perInstance = 4

  private static let facts = TypeFacts()

  /// Whether casts of a `type` instance to a protocol look at the value it wraps.
  @usableFromInline
  static func wrapsValues(_ type: Any.Type) -> Bool {
    type is any OptionalWrapper.Type || type == AnyHashable.self
  }

  /// Whether instances of `instance`'s static type can differ in their conformances: a wrapper
  /// (see ``wrapsValues(_:)``), or an existential such as `any Storage` or `Any`, whose values have
  /// many dynamic types. (`type(of:)` of a generic value gives the existential type itself, not the
  /// type of the value inside; `as Any` opens it.) Such a type's answer is never remembered: the
  /// first value seen would decide for every later one.
  @usableFromInline
  static func variesPerInstance<Instance>(_ instance: Instance) -> Bool {
    let staticType = Swift.type(of: instance)
    return wrapsValues(staticType) || staticType != Swift.type(of: instance as Any)
  }

  /// The kind of instances whose dynamic type is `type`; `compute` finds it for the first one.
  @usableFromInline
  static func of(_ type: Any.Type, compute: () -> DisposalKind) -> DisposalKind {
    DisposalKind(rawValue: facts.fact(for: type) { compute().rawValue }) ?? .none
  }
}

/// `Optional`, to tell it apart at run time (see ``DisposalKind/wrapsValues(_:)``).
@usableFromInline
protocol OptionalWrapper {
  /// The wrapped value, if any.
  var wrappedValueIfAny: Any? { get }
  /// The type of the wrapped value (`Tracer` for `Tracer?`), for hints.
  static var wrappedType: Any.Type { get }
}

extension Optional: OptionalWrapper {
  @usableFromInline var wrappedValueIfAny: Any? { map { $0 as Any } }
  @usableFromInline static var wrappedType: Any.Type { Wrapped.self }
}
