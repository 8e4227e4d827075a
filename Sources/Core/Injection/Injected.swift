import Synchronization

/// A property resolved on first access, then kept: from an explicit scope, or from the
/// ``Scope/current`` scope of the moment its holder was created (or, if none was current then,
/// of its first access).
///
/// ```swift
/// final class ProfileController {
///   @Injected var repository: UserRepository
///   @Injected(name: LogChannel.audit) var audit: Logger
///
///   func show(_ id: User.ID) throws -> Profile {
///     try $repository.resolve().profile(id)   // throwing access
///   }
/// }
/// ```
///
/// Nothing is resolved when the object is created, so it can be created where no scope is current.
/// A value passed to the initializer wins over injection, which is handy in tests:
/// `@Injected var clock: Clock = FixedClock()`.
///
/// The scope an `@Injected` property resolves from is fixed when its holder is created, so a
/// singleton (made while its container is current) can never pick up the request scope of the
/// code that first reads the property: it gets ``ResolutionError/Code/noMatchingScope`` for a
/// request-scoped service instead of one request's instance. The property does not keep that
/// scope alive; read after the scope was freed, it throws ``ResolutionError/Code/scopeClosed``.
///
/// Reading the plain property cannot throw, because Swift does not let property wrappers throw;
/// if resolving fails, it stops the program with the message the ``ResolutionError`` carries.
/// This is the one place Strata traps. Use the projected value (`try $repository.resolve()`) to
/// handle the error, or resolve the service once at start-up to rule the failure out.
@propertyWrapper
public struct Injected<Value> {
  @usableFromInline let storage: InjectionStorage<Value>

  /// Resolves on first access from the scope current now, or, if none is, from the scope current
  /// at that first access.
  @inlinable
  public init() {
    storage = InjectionStorage(scope: Scope.current) { try $0.resolve(Value.self) }
  }

  /// Resolves from `scope` on first access.
  ///
  /// - Parameter scope: The scope to resolve from, such as the container.
  @inlinable
  public init(from scope: Scope) {
    storage = InjectionStorage(scope: scope) { try $0.resolve(Value.self) }
  }

  /// Resolves the registration named `name`, from `scope` or, if `nil`, from the current scope
  /// (as ``init()`` picks it).
  ///
  /// - Parameters:
  ///   - name: The name the service was registered with.
  ///   - scope: The scope to resolve from; `nil` for the current scope.
  @inlinable
  public init<Name: Hashable & Sendable>(name: Name?, from scope: Scope? = nil) {
    storage = InjectionStorage(scope: scope ?? Scope.current, name: Registrar.box(name)) {
      try $0.resolve(Value.self, name: name)
    }
  }

  /// Uses `wrappedValue` and never resolves.
  ///
  /// - Parameter wrappedValue: The value the property holds.
  @inlinable
  public init(wrappedValue: Value) {
    storage = InjectionStorage(value: wrappedValue)
  }

  /// The injected instance, resolved on first access.
  ///
  /// Traps with the resolution error's message if resolving fails; see the type's discussion.
  @inlinable
  public var wrappedValue: Value {
    do {
      return try storage.value()
    } catch {
      Self.trap(error)
    }
  }

  /// The one documented trap: a property wrapper's getter cannot throw. `$property.resolve()` is
  /// the throwing access, and resolving once at start-up rules this out.
  @usableFromInline
  static func trap(_ error: any Error) -> Never {
    fatalError("@Injected \(Value.self): \(error)")
  }

  /// Throwing access to the injected instance: `try $repository.resolve()`.
  @inlinable
  public var projectedValue: Injection<Value> { Injection(storage: storage) }
}

/// The projected value of an ``Injected`` property: throwing access to its instance.
///
/// ```swift
/// extension ProfileController {
///   func save(_ profile: Profile) {
///     do {
///       let repository = try $repository.resolve()
///       try repository.save(profile)
///     } catch {
///       logger.error("\(error)")   // a ResolutionError names the key, the path and a hint
///     }
///   }
/// }
/// ```
public struct Injection<Value> {
  @usableFromInline let storage: InjectionStorage<Value>

  @inlinable
  init(storage: InjectionStorage<Value>) { self.storage = storage }

  /// The injected instance, resolving it on first use.
  ///
  /// - Returns: The instance, kept for later accesses.
  /// - Throws: ``ResolutionError`` if resolving fails (including when no scope is current); a
  ///   later access tries again.
  @inlinable
  public func resolve() throws -> Value { try storage.value() }

  /// Whether the instance has been resolved (or was given to the initializer).
  public var isResolved: Bool { storage.isResolved }
}

/// The state of one ``Injected`` property, shared by its copies.
///
/// `@unchecked Sendable`: `cached` is written once under `creation` before `resolved` is set
/// (release), and read after `resolved` is seen (acquire), as in ``Lazy``.
///
/// Read through inlinable code, specialised where `Value` is known: unspecialised, every read of a
/// `Value?` looked up `Optional<Value>`'s metadata in the runtime (about 325 instructions per
/// property access). The value is boxed for the same reason (see ``Lazy``).
@usableFromInline
final class InjectionStorage<Value> {
  /// Weak, so that an instance holding the property does not keep its own scope alive.
  @usableFromInline weak let scope: Scope?
  /// The shared instance whose factory made the holder of this property, if any: reading it
  /// obeys that instance's lifetime rules, and what it makes is disposed after that instance. As
  /// in ``Lazy``.
  @usableFromInline let holder: DeferredHolding
  /// Whether a scope was given (or current) at creation; if it is gone, reading fails.
  @usableFromInline let hadScope: Bool
  @usableFromInline let make: (@Sendable (Scope) throws -> Value)?
  /// The name the property resolves, for the key its errors name.
  @usableFromInline let name: AnyServiceName?
  @usableFromInline let creation = CreationGuard()
  @usableFromInline let resolved = Atomic<Bool>(false)
  @usableFromInline var cached: ValueBox<Value>?

  @usableFromInline
  init(scope: Scope?, name: AnyServiceName? = nil, make: @escaping @Sendable (Scope) throws -> Value) {
    self.scope = scope
    self.holder = scope?.deferredHolder ?? .unheld
    self.hadScope = scope != nil
    self.make = make
    self.name = name
  }

  @inlinable
  init(value: Value) {
    self.scope = nil
    self.holder = .unheld
    self.hadScope = false
    self.make = nil
    self.name = nil
    self.cached = ValueBox(value)
    resolved.store(true, ordering: .releasing)
  }

  var isResolved: Bool { resolved.load(ordering: .acquiring) }

  @inlinable
  func value() throws -> Value {
    if resolved.load(ordering: .acquiring), let cached { return cached.value }
    return try resolveOnce()
  }

  /// The first access's resolve (specialised, never inlined: see the type's discussion).
  @inlinable @inline(never)
  func resolveOnce() throws -> Value {
    let key = ServiceKey(Value.self, name: name)
    return try creation.withCreationLock(for: key) {
      if resolved.load(ordering: .acquiring), let cached { return cached.value }
      if hadScope && scope == nil { throw Self.scopeGone(key) }
      guard let make, let scope = scope ?? Scope.current else {
        throw Self.withoutScope(key)
      }
      let value = try ResolutionNesting.nest(key, for: holder, in: scope) { try make(scope) }
      cached = ValueBox(value)
      resolved.store(true, ordering: .releasing)
      return value
    }
  }

  @usableFromInline
  static func scopeGone(_ key: ServiceKey) -> ResolutionError {
    ResolutionError.scopeGone(key, holder: .injected)
  }

  @usableFromInline
  static func withoutScope(_ key: ServiceKey) -> ResolutionError {
    ResolutionError(.injectedWithoutScope(key))
  }
}

/// `Sendable` when `Value` is: every copy of the property hands out the one cached instance.
extension Injected: Sendable where Value: Sendable {}

extension Injection: Sendable where Value: Sendable {}

/// `@unchecked`: see the class's discussion.
extension InjectionStorage: @unchecked Sendable where Value: Sendable {}
