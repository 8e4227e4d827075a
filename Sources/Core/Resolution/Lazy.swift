import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A dependency resolved on first use and then kept.
///
/// Ask for `Lazy<Service>` to defer an expensive service, or to break a circular dependency: the
/// cycle is closed only when ``value`` is first read, after both objects exist.
///
/// ```swift
/// final class ReportController {
///   let generator: Lazy<ReportGenerator>
///   init(generator: Lazy<ReportGenerator>) { self.generator = generator }
///   func export() throws -> Data { try generator.value.render() }
/// }
/// registry.register(ReportController.self, ReportController.init)   // Lazy is built for you
/// ```
///
/// The resolve runs as a top-level resolve in the scope the `Lazy` was made in. A `Lazy` does not
/// keep that scope alive: a scoped service holding one would otherwise keep its own scope, and
/// everything the scope made, alive forever. Read after the scope was freed, it throws
/// ``ResolutionError/Code/scopeClosed``; a value it already resolved stays readable. Reading
/// ``value`` from several threads at once resolves once. When a scope disposes both, the instance
/// holding the `Lazy` is disposed before what the `Lazy` resolved for it, as if that had been
/// made first, so its disposer can still use the value: what the `Lazy` makes, and what it finds
/// made after the holder when the declared dependencies show the move is safe (see
/// "Scopes and Lifetimes" for when they cannot).
///
/// A `Lazy` read (a ``Provider`` called, an ``Injected`` property read) while the resolve of
/// another one runs, in a factory it calls, is nested in it: at most 32 nest on one thread, and a
/// deeper chain throws ``ResolutionError/Code/depthLimitExceeded``. Resolve long chains directly.
///
/// A `Lazy` that breaks a cycle between two shared instances (`A` holds `Lazy<B>`, `B` holds
/// `A`) makes a reference cycle once read: `A` keeps `B` through the `Lazy`, and `B` keeps `A`.
/// Closing the scope disposes both but cannot free them; hold one side weakly, or use a
/// ``Provider``, which keeps no value.
///
/// `Sendable` when `Value` is: every thread that reads a `Lazy` gets the one cached value, so a
/// value that is not `Sendable` must stay on one thread with its `Lazy`. (`@unchecked`: `cached`
/// is written once under `creation`, before `resolved` is set, and read after it is seen.)
public final class Lazy<Value> {
  /// Weak: see the type's discussion.
  @usableFromInline weak let scope: Scope?
  /// The shared instance this was made for, if any: its resolve obeys that instance's lifetime
  /// rules, and what it makes is disposed after that instance (see ``DeferredHolding``). Its link
  /// to the registration is weak: the instance may hold this `Lazy`, and the registration holds
  /// the instance.
  @usableFromInline let holder: DeferredHolding
  @usableFromInline let key: ServiceKey
  @usableFromInline let make: @Sendable (Scope) throws -> Value
  /// The once-guard: no plain lock is held while the resolve runs, and a thread that re-enters
  /// the `Lazy` it is resolving, or two threads waiting on each other, get a cycle error.
  @usableFromInline let creation = CreationGuard()
  @usableFromInline let resolved = Atomic<Bool>(false)
  /// Written once under `creation` before `resolved` is set (release); read after it is seen.
  /// Boxed, not a `Value?`: where a `Lazy` is used unspecialised (from generic code), every use
  /// of a `Value?` looked up `Optional<Value>`'s metadata in the runtime (about 300 instructions);
  /// an optional reference needs no metadata, and the box is made once.
  @usableFromInline var cached: ValueBox<Value>?

  @usableFromInline
  init(
    scope: Scope, holder: DeferredHolding, key: ServiceKey, make: @escaping @Sendable (Scope) throws -> Value
  ) {
    self.scope = scope
    self.holder = holder
    self.key = key
    self.make = make
  }

  /// The resolved instance, resolved on the first read.
  ///
  /// - Throws: ``ResolutionError`` if resolving fails (the next read tries again), or a `cycle`
  ///   if the resolve needs this same value.
  public var value: Value {
    @inlinable get throws {
      if resolved.load(ordering: .acquiring), let cached { return cached.value }
      return try resolveOnce()
    }
  }

  /// The first read's resolve. Inlinable (though never inlined) so that it is specialised where
  /// `Value` is known: unspecialised, making the `ValueBox<Value>` looked up its metadata in the
  /// runtime (about 325 instructions) for every `Lazy` read for the first time.
  @inlinable @inline(never)
  final func resolveOnce() throws -> Value {
    try creation.withCreationLock(for: key) {
      if resolved.load(ordering: .acquiring), let cached { return cached.value }
      guard let scope else { throw scopeGone() }
      let value = try ResolutionNesting.nest(key, for: holder, in: scope) { try make(scope) }
      cached = ValueBox(value)
      resolved.store(true, ordering: .releasing)
      return value
    }
  }

  @usableFromInline
  final func scopeGone() -> ResolutionError { ResolutionError.scopeGone(key, holder: .lazy) }

  /// Whether ``value`` has been resolved.
  public var isResolved: Bool { resolved.load(ordering: .acquiring) }
}

extension Lazy: @unchecked Sendable where Value: Sendable {}

/// A dependency resolved anew each time it is called: a factory for instances of `Value`.
///
/// ```swift
/// final class JobRunner {
///   let makeJob: Provider<Job>
///   init(makeJob: Provider<Job>) { self.makeJob = makeJob }
///   func runTwice() throws { try makeJob().run(); try makeJob().run() }
/// }
/// registry.register(JobRunner.self, JobRunner.init)   // Provider is built for you
/// ```
///
/// Each call is a top-level resolve in the scope the provider was made in; the registration's
/// lifetime decides whether calls share an instance. Like ``Lazy``, a provider does not keep its
/// scope alive: called after the scope was freed, it throws ``ResolutionError/Code/scopeClosed``.
public struct Provider<Value>: Sendable {
  /// Weak: see ``Lazy``.
  @usableFromInline weak let scope: Scope?
  /// As ``Lazy``'s: the shared registration whose instance this was made for, if any.
  private let holder: DeferredHolding
  private let make: @Sendable (Scope) throws -> Value

  @usableFromInline
  init(scope: Scope, holder: DeferredHolding, make: @escaping @Sendable (Scope) throws -> Value) {
    self.scope = scope
    self.holder = holder
    self.make = make
  }

  /// Resolves an instance.
  ///
  /// - Throws: ``ResolutionError`` if resolving fails.
  public func get() throws -> Value {
    let key = ServiceKey(Value.self, name: nil)
    guard let scope else { throw ResolutionError.scopeGone(key, holder: .provider) }
    return try ResolutionNesting.nest(key, for: holder, in: scope) { try make(scope) }
  }

  /// Resolves an instance: `try provider()`.
  ///
  /// - Throws: ``ResolutionError`` if resolving fails.
  public func callAsFunction() throws -> Value { try get() }
}

/// A type Strata builds by itself when asked for and not registered: ``Lazy`` and ``Provider``.
@usableFromInline
protocol ImplicitDependency {
  init(implicitIn scope: Scope, holder: DeferredHolding)

  /// The key of what it resolves (`T` for `Lazy<T>`).
  static var targetKey: ServiceKey { get }
}

extension ImplicitDependency {
  /// An instance for `scope`, as `Service`, which is this type (the caller found `Service` to
  /// conform).
  @inlinable
  static func make<Service>(as _: Service.Type, in scope: Scope, holder: DeferredHolding) throws -> Service {
    try identicallyTyped(Self(implicitIn: scope, holder: holder), as: Service.self)
  }
}

extension Lazy: ImplicitDependency {
  @usableFromInline static var targetKey: ServiceKey { ServiceKey(Value.self, name: nil) }

  @inlinable
  convenience init(implicitIn scope: Scope, holder: DeferredHolding) {
    self.init(scope: scope, holder: holder, key: ServiceKey(Value.self, name: nil)) {
      try $0.resolve(Value.self)
    }
  }
}

extension Provider: ImplicitDependency {
  @usableFromInline static var targetKey: ServiceKey { ServiceKey(Value.self, name: nil) }

  @inlinable
  init(implicitIn scope: Scope, holder: DeferredHolding) {
    self.init(scope: scope, holder: holder) { try $0.resolve(Value.self) }
  }
}

/// How many `Lazy`, `Provider` and `@Injected` resolves are nested on the calling thread.
///
/// Each of them starts a fresh top-level resolve, so the depth of one resolve cannot see a cycle
/// that runs through them (`A` → `B` → `Lazy<A>.value` → `A` → …); this per-thread count, and the
/// stack check every top-level resolve makes, turn what would be a stack overflow into an error,
/// which reads as a `cycle` when its path repeats a key.
@usableFromInline
enum ResolutionNesting {
  /// Nested lazy resolves allowed on one thread. Each holds its once-guard while it resolves;
  /// ThreadSanitizer's deadlock detector handles at most 64 locks held by one thread, and hangs
  /// past that, so the limit stays well below.
  static var limit: Int { 32 }

  static func nest<Result>(_ key: ServiceKey, _ body: () throws -> Result) throws -> Result {
    let depth = ThreadContext.lazyNesting
    guard depth < limit else { throw ResolutionError(.tooManyDeferred(key, depth: depth)) }
    guard !ThreadContext.isStackNearlyExhausted else { throw ResolutionError.tooDeep(at: key, depth: depth) }
    ThreadContext.lazyNesting = depth + 1
    defer { ThreadContext.lazyNesting = depth }
    return try body()
  }

  /// ``nest(_:_:)`` for a `Lazy`, `Provider` or `@Injected` made for `holder`'s instance in
  /// `scope`: what it makes is filed for disposal below that instance (`Scope.file`), what it
  /// finds is moved there when the declared graph allows it, `scope` is
  /// the current one (``Scope/current``), and, where the holder's lifetime rules can forbid
  /// something, they apply to it as inside its factory (see `Scope.owningScope`). Without a
  /// holder (made outside any shared instance's factory), only the nesting is counted.
  @usableFromInline
  static func nest<Result>(
    _ key: ServiceKey, for holder: DeferredHolding, in scope: Scope, _ body: () throws -> Result
  ) throws -> Result {
    guard holder.identity != 0 else { return try nest(key, body) }
    // What it found rather than made was filed where the resolve that made it left it, maybe
    // after the holder: moved below it if the declared graph allows (`Scope+FoundDependencies`).
    // Also after a resolve that threw: whatever it found, such a move keeps the order valid. (A
    // `defer`, run last: keeping the result in a local cost a generic copy of it per resolve.)
    // A scope that never filed a disposal has nothing to move: one flag load, no call.
    defer {
      if scope.lifecycle.everOwnedOrLinked {
        scope.keepFoundDependencies(below: holder.identity, resolved: key)
      }
    }
    // The holder's instance exists already, so what this resolve makes would be filed for
    // disposal after it; `Scope.file` files it below the holder instead.
    let outerHolder = ThreadContext.deferredHolder
    ThreadContext.deferredHolder = (holder.identity, UInt(bitPattern: ObjectIdentifier(scope)))
    defer { ThreadContext.deferredHolder = outerHolder }
    // `Scope.current` is the holder's scope, as inside its factory, not whichever scope the
    // reader is in: a `scoped(.session)` instance's `Lazy` read inside a request must not see
    // (and keep) that request. A holder the rules do not constrain names no holder for them.
    let outerOwner = ThreadContext.ambientOwner
    let outerAmbientHolder = ThreadContext.ambientHolder
    defer {
      ThreadContext.ambientOwner = outerOwner
      ThreadContext.ambientHolder = outerAmbientHolder
    }
    ThreadContext.ambientOwner = ScopeRef(scope)
    guard let registration = holder.rules?.registration else {
      ThreadContext.ambientHolder = nil
      return try Scope.withAmbientTaskLocal(scope) { try nest(key, body) }
    }
    ThreadContext.ambientHolder = RegistrationRef(registration)
    // A task that what it makes starts sees `scope` too (see `Scope.withAmbientTaskLocal`).
    return try withExtendedLifetime(registration) {
      try Scope.withAmbientTaskLocal(scope) { try nest(key, body) }
    }
  }

}
