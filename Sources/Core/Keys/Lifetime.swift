/// How long an instance made by a registration lives, and who shares it.
///
/// ```swift
/// registry.register(Clock.self, lifetime: .singleton) { _ in SystemClock() }
/// registry.register(Session.self, lifetime: .scoped(.request)) { _ in Session() }
/// ```
///
/// | lifetime | one instance per |
/// |---|---|
/// | ``transient`` | resolve |
/// | ``singleton`` | registering container or scope, made on first use |
/// | ``eagerSingleton`` | registering container or scope, made when its registrations are added |
/// | ``weak`` | as long as somebody outside the container holds it |
/// | ``graph`` | top-level `resolve` call (shared by everything that call builds) |
/// | ``scoped`` | scope the resolve starts in |
/// | ``scoped(_:)`` | nearest enclosing scope with the given tag |
public struct Lifetime: Hashable, Sendable, CustomStringConvertible {
  @usableFromInline
  enum Kind: UInt8, Sendable {
    case transient, singleton, eagerSingleton, weak, graph, scoped
  }

  @usableFromInline let kind: Kind
  /// For ``scoped(_:)``, the tag of the scope that owns instances; `nil` otherwise.
  public let scopeTag: ScopeTag?

  init(_ kind: Kind, scopeTag: ScopeTag? = nil) {
    self.kind = kind
    self.scopeTag = scopeTag
  }

  /// A new instance every time the service is resolved. The default.
  public static let transient = Lifetime(.transient)
  /// One instance, made on first use and kept by the container or scope that registered it.
  /// Its dependencies are resolved in that container, never in the scope that asked.
  public static let singleton = Lifetime(.singleton)
  /// A ``singleton`` that is made as soon as its registration is added, so start-up fails fast.
  public static let eagerSingleton = Lifetime(.eagerSingleton)
  /// One instance shared while anybody holds a strong reference to it; made again afterwards.
  /// For class instances only: resolving a `weak` registration whose factory makes a value (or
  /// `nil`) throws ``ResolutionError/Code/invalidRegistration``.
  public static let weak = Lifetime(.weak)
  /// One instance within a single top-level resolve, shared by the transients and `graph`
  /// instances that resolve builds (a singleton, scoped or weak instance made during it builds its
  /// own graph: it outlives the resolve). Together with ``RegistrationHandle/onActivated(_:)`` it
  /// lets two objects refer to each other.
  public static let graph = Lifetime(.graph)
  /// One instance per scope: the scope in which the resolve starts owns it.
  public static let scoped = Lifetime(.scoped)

  /// One instance per nearest enclosing scope with `tag`, which owns and disposes it.
  ///
  /// - Parameter tag: The tag of the owning scope, such as ``ScopeTag/request``.
  public static func scoped(_ tag: ScopeTag) -> Lifetime { Lifetime(.scoped, scopeTag: tag) }

  /// Whether the container keeps the instance beyond the resolve that made it.
  var isShared: Bool { kind != .transient && kind != .graph }

  /// `transient`, `singleton`, `scoped(.request)`, …
  public var description: String {
    switch kind {
    case .transient: "transient"
    case .singleton: "singleton"
    case .eagerSingleton: "eagerSingleton"
    case .weak: "weak"
    case .graph: "graph"
    case .scoped: scopeTag.map { "scoped(\($0))" } ?? "scoped"
    }
  }
}
