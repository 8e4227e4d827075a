/// The lifetime of a registration whose service is not `Sendable`.
///
/// An instance with a shared lifetime (`singleton`, `eagerSingleton`, `weak`, `scoped`) is handed
/// to every thread that resolves it, so Swift's data-race safety asks for it to be `Sendable`.
/// When the service is `Sendable`, `register` takes a ``Lifetime`` and you never meet this type.
/// When it is not, `register` takes an `UnsharedLifetime` instead:
///
/// - `.transient` (the default) and `.graph` compile silently: neither instance is shared between
///   threads.
/// - `.singleton`, `.eagerSingleton`, `.weak`, `.scoped` and `.scoped(_:)` compile with a
///   deprecation warning that says why the instance is at risk and what to do.
/// - ``UnsharedLifetimeConvertible/unchecked(_:)`` is the escape hatch: any ``Lifetime``, with no
///   warning, for a legacy type you have checked yourself.
/// - A ``Lifetime`` held in a variable compiles with a warning too: the compiler cannot tell
///   whether it is shared.
///
/// ```swift
/// final class LegacyCache {            // not Sendable: a dictionary behind an NSLock
///   private let lock = NSLock()
///   private var entries: [String: Data] = [:]
/// }
///
/// registry.register(LegacyCache.self, lifetime: .singleton) { _ in LegacyCache() }
/// // warning: 'singleton' is deprecated: a singleton is shared by every thread that resolves it …
///
/// // Checked: every access goes through `lock`.
/// registry.register(LegacyCache.self, lifetime: .unchecked(.singleton)) { _ in LegacyCache() }
/// ```
///
/// Prefer making the type `Sendable`: an `actor`, a `@MainActor` class, a `final class` with only
/// `let` properties of `Sendable` types, or a class that guards its state with a lock
/// (`Mutex`, or `@unchecked Sendable` over `NSLock`). `unchecked` only silences the compiler: a
/// type that is not safe to share still races when two threads use it.
///
/// The lifetime behaves exactly as the ``Lifetime`` it stands for; ``lifetime`` is that value.
///
/// The members (`.transient`, `.unchecked(_:)`, …) are declared on
/// ``UnsharedLifetimeConvertible`` where `Self` is `UnsharedLifetime`, which lets `register` also
/// accept a ``Lifetime`` held in a variable, with a warning rather than an error.
public struct UnsharedLifetime: UnsharedLifetimeConvertible, Hashable, CustomStringConvertible {
  /// The lifetime the registration gets.
  public let lifetime: Lifetime

  init(_ lifetime: Lifetime) { self.lifetime = lifetime }

  /// The description of ``lifetime``: `transient`, `singleton`, `scoped(.request)`, …
  public var description: String { lifetime.description }
}

/// A lifetime that `register` accepts for a service that is not `Sendable`: an
/// ``UnsharedLifetime`` such as `.transient` or `.unchecked(.singleton)`, or, with a warning, a
/// ``Lifetime`` value.
///
/// You do not use this protocol by name: it lets `register` resolve `.transient`, `.singleton`,
/// `.unchecked(_:)` and the other members below for a service that is not `Sendable`, and accept a
/// ``Lifetime`` held in a variable with a warning rather than an error, since the compiler cannot
/// tell whether a value known only at run time is shared.
public protocol UnsharedLifetimeConvertible: Sendable {
  /// The lifetime the registration gets.
  var lifetime: Lifetime { get }
}

/// A ``Lifetime`` value held in a variable, for a service that is not `Sendable`: the compiler
/// cannot tell whether it is shared, so it warns.
@available(
  *, deprecated,
  message:
    "a lifetime known only at run time may share the instance between threads, but this service is not Sendable; make it Sendable (an actor, a @MainActor class, or a final class with only `let`s or a lock), or, for a legacy type you have checked, write `lifetime: .unchecked(lifetime)`"
)
extension Lifetime: UnsharedLifetimeConvertible {
  /// The lifetime itself.
  public var lifetime: Lifetime { self }
}

extension UnsharedLifetimeConvertible where Self == UnsharedLifetime {
  /// A new instance every time the service is resolved: never shared, so it needs no `Sendable`.
  /// The default.
  public static var transient: UnsharedLifetime { UnsharedLifetime(.transient) }
  /// One instance within a single top-level resolve: shared only by what that resolve builds, on
  /// its thread, so it needs no `Sendable`.
  public static var graph: UnsharedLifetime { UnsharedLifetime(.graph) }

  /// A ``Lifetime/singleton`` for a service that is not `Sendable`: compiles, with a warning.
  @available(
    *, deprecated,
    message:
      "a singleton is shared by every thread that resolves it, but this service is not Sendable; make it Sendable (an actor, a @MainActor class, or a final class with only `let`s or a lock), or, for a legacy type you have checked, write `lifetime: .unchecked(.singleton)`"
  )
  public static var singleton: UnsharedLifetime { UnsharedLifetime(.singleton) }

  /// A ``Lifetime/eagerSingleton`` for a service that is not `Sendable`: compiles, with a warning.
  @available(
    *, deprecated,
    message:
      "an eager singleton is shared by every thread that resolves it, but this service is not Sendable; make it Sendable (an actor, a @MainActor class, or a final class with only `let`s or a lock), or, for a legacy type you have checked, write `lifetime: .unchecked(.eagerSingleton)`"
  )
  public static var eagerSingleton: UnsharedLifetime { UnsharedLifetime(.eagerSingleton) }

  /// A ``Lifetime/weak`` lifetime for a service that is not `Sendable`: compiles, with a warning.
  @available(
    *, deprecated,
    message:
      "a weak instance is shared by every thread that resolves it while somebody holds it, but this service is not Sendable; make it Sendable (an actor, a @MainActor class, or a final class with only `let`s or a lock), or, for a legacy type you have checked, write `lifetime: .unchecked(.weak)`"
  )
  public static var weak: UnsharedLifetime { UnsharedLifetime(.weak) }

  /// A ``Lifetime/scoped`` lifetime for a service that is not `Sendable`: compiles, with a warning.
  @available(
    *, deprecated,
    message:
      "a scoped instance is shared by every thread that resolves it in its scope, but this service is not Sendable; make it Sendable (an actor, a @MainActor class, or a final class with only `let`s or a lock), or, for a legacy type you have checked, write `lifetime: .unchecked(.scoped)`"
  )
  public static var scoped: UnsharedLifetime { UnsharedLifetime(.scoped) }

  /// A ``Lifetime/scoped(_:)`` lifetime for a service that is not `Sendable`: compiles, with a
  /// warning.
  ///
  /// - Parameter tag: The tag of the owning scope.
  /// - Returns: The lifetime.
  @available(
    *, deprecated,
    message:
      "a scoped instance is shared by every thread that resolves it in its scope, but this service is not Sendable; make it Sendable (an actor, a @MainActor class, or a final class with only `let`s or a lock), or, for a legacy type you have checked, write `lifetime: .unchecked(.scoped(tag))`"
  )
  public static func scoped(_ tag: ScopeTag) -> UnsharedLifetime { UnsharedLifetime(.scoped(tag)) }

  /// Any lifetime for a service that is not `Sendable`, without a warning: the escape hatch for a
  /// legacy type that you have checked is safe to share between threads.
  ///
  /// ```swift
  /// // `ImageCache` predates Swift concurrency; every method takes its lock.
  /// registry.register(ImageCache.self, lifetime: .unchecked(.singleton)) { _ in ImageCache() }
  /// registry.register(Session.self, lifetime: .unchecked(.scoped(.session)), Session.init)
  /// ```
  ///
  /// Like `@unchecked Sendable` and `nonisolated(unsafe)`, this is a promise the compiler takes
  /// on trust: leave a comment saying why the type is safe. For a `Sendable` service write the
  /// lifetime alone (`.singleton`); `unchecked` is accepted there too and changes nothing.
  ///
  /// - Parameter lifetime: The lifetime the registration gets.
  /// - Returns: That lifetime, accepted for a service that is not `Sendable`.
  public static func unchecked(_ lifetime: Lifetime) -> UnsharedLifetime { UnsharedLifetime(lifetime) }
}
