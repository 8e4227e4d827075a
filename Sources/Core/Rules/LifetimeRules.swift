/// The lifetime rules: which instance may keep which, decided in one place.
///
/// An instance *captures* its dependencies: a singleton keeps what its factory resolved for as
/// long as the singleton lives. A dependency that lives shorter than its holder would be kept
/// past its end (a closed request's context inside a singleton), so the rules allow a capture only
/// when the dependency lives at least as long as the holder:
///
/// | holder ↓ · dependency → | transient, graph | singleton, eagerSingleton, weak | scoped | scoped(tag) |
/// |---|---|---|---|---|
/// | transient, graph | allowed | allowed | allowed | allowed |
/// | singleton, eagerSingleton, weak | allowed | allowed | **captive** | allowed within a `tag` scope |
/// | scoped, scoped(t) | allowed | allowed | allowed | allowed within a `tag` scope |
///
/// - A transient or graph holder keeps nothing beyond its own resolve; whatever holds *it* is the
///   holder that counts (a singleton's transient dependency passes the singleton's rules on).
/// - "Allowed within a `tag` scope": the holder's instance is owned by a scope inside a `tag`
///   scope, so the dependency's owner outlives it. A singleton registered in the container is
///   inside no request scope, so it may not depend on `scoped(.request)`.
/// - An untagged `scoped` instance belongs to the scope a resolve *starts* in. A singleton's
///   resolve starts in the scope that registered it, never in a request, so an untagged scoped
///   dependency would silently be that scope's one instance for good: captive.
///
/// Every route to a dependency applies these rules: a factory's resolver, a `Lazy` or `Provider`
/// made for a shared instance, an `@Injected` property of one, and ``Scope/current`` read inside
/// its factory. The `validate()` of `StrataModules` applies them to the whole graph.
@usableFromInline
package enum LifetimeRules {
  /// What the rules say about a holder capturing a dependency.
  @usableFromInline
  package enum Capture: Equatable, Sendable {
    /// The dependency lives at least as long as the holder.
    case allowed
    /// The dependency would be kept past its end.
    case captive
    /// Allowed when a scope with this tag encloses the scope that owns the holder's instance;
    /// captive otherwise.
    case allowedWithin(ScopeTag)
  }

  /// The rule for a `holder` instance keeping a `dependency` instance.
  package static func capture(of dependency: Lifetime, by holder: Lifetime) -> Capture {
    capture(of: dependency.kind, tagged: dependency.scopeTag, by: holder.kind)
  }

  /// Whether the rules can forbid a `holder` something that a plain lookup from the holder's own
  /// scope allows: an untagged scoped dependency. Only then does a `Lazy`, `Provider` or
  /// `@Injected` made for the holder need to remember it; for the others (a scoped holder), the
  /// lookup from its scope already gives the table's answer.
  static func constrainsLookups(by holder: Lifetime.Kind) -> Bool {
    capture(of: .scoped, tagged: nil, by: holder) == .captive
  }

  /// ``constrainsLookups(by:)`` for a lifetime.
  package static func constrainsLookups(by holder: Lifetime) -> Bool { constrainsLookups(by: holder.kind) }

  /// The rule, by lifetime kinds: the table itself. Inlined on the resolve path, where the
  /// dependency is known to be `scoped`, so that only the switch on the holder remains.
  @inlinable @inline(__always)
  static func capture(
    of dependency: Lifetime.Kind, tagged tag: ScopeTag?, by holder: Lifetime.Kind
  ) -> Capture {
    switch (holder, dependency) {
    case (.transient, _), (.graph, _):
      return .allowed
    case (_, .transient), (_, .graph), (_, .singleton), (_, .eagerSingleton), (_, .weak):
      return .allowed
    case (.singleton, .scoped), (.eagerSingleton, .scoped), (.weak, .scoped), (.scoped, .scoped):
      if let tag { return .allowedWithin(tag) }
      return holder == .scoped ? .allowed : .captive
    }
  }
}

/// The shared registration a `Lazy`, `Provider` or `@Injected` property was made for, when the
/// lifetime rules can forbid it something (``LifetimeRules/constrainsLookups(by:)``): its later
/// resolves obey that holder's rules.
///
/// Made only for singleton and weak holders, so that the common `Lazy` or `Provider` (made for a
/// transient or scoped service) carries no weak reference at all. The reference is weak because
/// the holder's instance may keep the `Lazy`, and the registration keeps the instance.
@usableFromInline
final class DeferredHolder: Sendable {
  weak let registration: AnyRegistration?

  fileprivate init(_ registration: AnyRegistration) {
    self.registration = registration
  }
}

/// What a `Lazy`, `Provider` or `@Injected` property knows of the shared instance it was made for:
/// the instance's lifetime rules, when they can forbid it something (``DeferredHolder``), and
/// which registration it is, so that what it resolves later is disposed after that instance (see
/// ``DisposalStack/push(_:belowNewestOf:)``). No allocation unless the rules need the link.
@usableFromInline
struct DeferredHolding: Sendable {
  /// The link the lifetime rules need, or `nil`.
  @usableFromInline let rules: DeferredHolder?
  /// The registration's ``AnyRegistration/identity``, or 0 when made for no shared instance.
  @usableFromInline let identity: UInt

  /// Made for no shared instance.
  @usableFromInline static var unheld: DeferredHolding { DeferredHolding(rules: nil, identity: 0) }

  /// What a property made now for `registration`'s instance holds; for none if it is `nil`.
  static func link(to registration: RegistrationRef?) -> DeferredHolding {
    guard let registration else { return .unheld }
    return registration.with { registration in
      DeferredHolding(
        rules: LifetimeRules.constrainsLookups(by: registration.kind) ? DeferredHolder(registration) : nil,
        identity: registration.identity)
    }
  }
}
