/// What a registration records besides its factory and lifetime, for tools that check or draw the
/// graph: the module that made it, whether it is an explicit override, and the dependencies a
/// closure factory declared.
///
/// Set on a staged registration before its batch is published, and copied onto the registration
/// when the batch is materialized; never written afterwards.
package struct RegistrationAttributes: Sendable {
  /// The module whose `register(in:)` made the registration; `nil` for a registration made
  /// outside any module.
  package var module: ModuleAttribution?
  /// Whether the registration was declared an override (``RegistrationHandle/overriding()``).
  package var isOverride: Bool {
    get { overrideRank > 0 }
    set { overrideRank = newValue ? max(overrideRank, 1) : 0 }
  }
  /// How many layers of overrides the registration is above a plain one: 0 for a plain
  /// registration, 1 for `overriding()` or a composition's replacement, and one more for each
  /// composition that overrides a composition (`base.overridden(by: a).overridden(by: b)`: `b`'s
  /// registrations replace `a`'s, which replace `base`'s). Among registrations of one key, the
  /// highest rank wins.
  package var overrideRank: UInt32 = 0
  /// The dependencies a closure factory declared (`dependsOn:`); `nil` when it declared none.
  package var declaredDependencies: [ServiceDependency]? { declared?.dependencies }
  /// Where they are kept (see ``DeclaredList``).
  var declared: DeclaredList?
  /// For a forward (`forwarding(to:)`), the identity (`AnyRegistration.identity`) of the
  /// registration it leads to, which need not be the latest of its key; 0 for anything else.
  package var forwardTarget: UInt = 0

  package init() {}

  /// The attributes of a forward made from a registration with these attributes: the same module
  /// and override flag; its one dependency, the target, is known without a declaration.
  var forForward: RegistrationAttributes {
    var attributes = self
    attributes.declared = nil
    return attributes
  }

  /// Writes these attributes onto `registration`, which is not published yet, and returns it.
  func applied(to registration: AnyRegistration) -> AnyRegistration {
    registration.attributes = self
    return registration
  }
}

/// The dependencies one closure factory declared, kept in a ``DeclarationChunk`` shared with the
/// declarations made before and after it, rather than as the array the caller passed.
///
/// Keeping the caller's array kept one more small heap block per registration alive for as long as
/// the registration: at 10,000 registrations those blocks no longer fit in the processor's cache,
/// and freeing the container (glibc merging every freed small block with its neighbours) missed
/// on each. Copied into a chunk, the caller's array is freed as soon as `register` returns, while
/// still in cache, and the next registration's array reuses its block.
struct DeclaredList: Sendable {
  let chunk: DeclarationChunk
  let range: Range<Int>

  var dependencies: [ServiceDependency] { Array(chunk.items[range]) }
}

/// The declared dependencies of some of one batch's closure factories, one list after another.
///
/// Fixed in size, so that it never moves and stays a block that the allocator keeps in its heap:
/// one growing array for a whole batch of 10,000 registrations was copied at each growth and, past
/// 128 KB, mapped and unmapped from the system on every build (page faults).
///
/// `@unchecked Sendable`: `items` is appended to only while its batch is open, by the thread
/// running the registrar's closure (a registrar is not `Sendable`), and read afterwards through
/// registrations that publishing the batch made visible (an atomic release), or earlier on that
/// same thread.
final class DeclarationChunk: @unchecked Sendable {
  /// How many dependencies a chunk holds, unless one list needs more (32 KB).
  static let capacity = 1_024

  @exclusivity(unchecked) private(set) var items: [ServiceDependency] = []

  init(capacity: Int) { items.reserveCapacity(capacity) }

  /// Appends `dependencies` and returns where they are, or `nil` if they do not fit.
  func add(_ dependencies: [ServiceDependency]) -> DeclaredList? {
    let start = items.count
    guard items.capacity - start >= dependencies.count else { return nil }
    // One by one: `append(contentsOf:)` copied through the element type's value witnesses, about
    // 160 instructions for a list of one.
    for dependency in dependencies { items.append(dependency) }
    return DeclaredList(chunk: self, range: start..<items.count)
  }
}

/// The module that made a registration: compared by the module's identity, shown by its name.
///
/// Two modules can read alike (two nested types named `Feature`, or parameters `1` and
/// `UInt8(1)`) and still be two modules; duplicates are found by identity, not by name. A class,
/// made once per module and installation: every registration of the module shares it, one word
/// each.
///
/// The name is made when it is first read (a message, a report, a graph export), not when the
/// module is installed: describing a module's parameter reflects on it, about 40,000 instructions,
/// which was an eighth of building a container of 10 modules of 100 registrations each.
///
/// `@unchecked Sendable`: `madeName` is read and written only under `lock`; `describe` runs outside
/// it (it may run the parameter's own `description`), and the first name stored is kept.
package final class ModuleAttribution: Hashable, @unchecked Sendable {
  /// The module's identity (a `ModuleID` in `StrataModules`).
  package let identity: any Hashable & Sendable
  private let describe: @Sendable () -> String
  private let lock = SpinLock()
  @exclusivity(unchecked) private var madeName: String?

  /// - Parameters:
  ///   - name: Makes the module's name, once, when it is first read.
  ///   - identity: The module's identity.
  package init(name: @escaping @Sendable () -> String, identity: any Hashable & Sendable) {
    self.describe = name
    self.identity = identity
  }

  /// How the module reads in messages.
  package var name: String {
    lock.lock()
    let made = madeName
    lock.unlock()
    if let made { return made }
    let described = describe()
    lock.lock()
    defer { lock.unlock() }
    if let first = madeName { return first }
    madeName = described
    return described
  }

  package static func == (lhs: ModuleAttribution, rhs: ModuleAttribution) -> Bool {
    lhs === rhs || AnyHashable(lhs.identity) == AnyHashable(rhs.identity)
  }

  package func hash(into hasher: inout Hasher) { AnyHashable(identity).hash(into: &hasher) }
}

/// One dependency of a registration: the key its factory resolves, and whether it resolves it
/// later, through a ``Lazy`` or ``Provider``, rather than while it runs.
///
/// Auto-wired registrations record theirs from the initializer's parameters; a closure factory
/// declares them with `dependsOn:`:
///
/// ```swift
/// registry.register(
///   ReportService.self, lifetime: .singleton,
///   dependsOn: [.service(Database.self), .service(Logger.self, name: LogChannel.audit), .deferred(Mailer.self)]
/// ) { resolver in
///   ReportService(
///     database: try resolver.resolve(Database.self),
///     logger: try resolver.resolve(Logger.self, name: LogChannel.audit),
///     mailer: resolver.lazy(Mailer.self))
/// }
/// ```
public struct ServiceDependency: Hashable, Sendable, CustomStringConvertible {
  /// The key as declared: for `.service(Lazy<T>.self)`, the key of `Lazy<T>` itself, which reads
  /// as a deferred dependency on `T` (see ``resolved``).
  private let declaredKey: ServiceKey
  /// Whether it was declared deferred (``deferred(_:)``), and whether `declaredKey` is known to
  /// be the final key (``resolved`` then needs no look-up).
  private let declaredDeferred: Bool
  private let isResolved: Bool

  /// The key the factory resolves: for a deferred dependency, the key of the service the `Lazy` or
  /// `Provider` resolves, never the key of the `Lazy` itself.
  public var key: ServiceKey { resolved.key }
  /// Whether the key is resolved later, through a `Lazy` or `Provider`: such an edge may close a
  /// cycle, and the service it leads to is not made while the dependent is.
  public var isDeferred: Bool { resolved.isDeferred }

  init(key: ServiceKey, isDeferred: Bool) {
    declaredKey = key
    declaredDeferred = isDeferred
    isResolved = isDeferred
  }

  private init(resolvedKey key: ServiceKey, isDeferred: Bool) {
    declaredKey = key
    declaredDeferred = isDeferred
    isResolved = true
  }

  /// This dependency with its key and kind found out once, for tools that read it many times (a
  /// validation walks each edge several times).
  package var resolvedOnce: ServiceDependency {
    let resolved = resolved
    return ServiceDependency(resolvedKey: resolved.key, isDeferred: resolved.isDeferred)
  }

  /// The key and kind the declaration stands for. Whether a declared type is a `Lazy` or
  /// `Provider` is found out here, when a tool reads the dependency, not when it is declared: in a
  /// container of 10,000 service types that look-up misses the processor's cache for each one,
  /// and registering should not pay for what only validation and export read.
  private var resolved: (key: ServiceKey, isDeferred: Bool) {
    guard !isResolved, declaredKey.name == nil, !declaredKey.hasArguments,
      let deferred = deferredType(declaredKey.serviceType)
    else { return (declaredKey, declaredDeferred) }
    return (deferred.deferredKey, true)
  }

  public static func == (lhs: ServiceDependency, rhs: ServiceDependency) -> Bool {
    let left = lhs.resolved
    let right = rhs.resolved
    return left.key == right.key && left.isDeferred == right.isDeferred
  }

  public func hash(into hasher: inout Hasher) {
    let resolved = resolved
    hasher.combine(resolved.key)
    hasher.combine(resolved.isDeferred)
  }

  /// A dependency resolved while the factory runs.
  ///
  /// ```swift
  /// registry.register(UserService.self, dependsOn: [.service(Database.self)]) { resolver in
  ///   UserService(database: try resolver.resolve(Database.self))
  /// }
  /// ```
  ///
  /// `Lazy<Service>` or `Provider<Service>` as `type` records a deferred dependency on `Service`.
  ///
  /// - Parameters:
  ///   - type: The type the factory resolves.
  ///   - name: The typed name it resolves `type` under, or `nil`.
  /// - Returns: The dependency.
  public static func service<Service>(
    _ type: Service.Type, name: (any Hashable & Sendable)? = nil
  ) -> ServiceDependency {
    ServiceDependency(parameterKey: ServiceKey(Service.self, name: Registrar.box(name)))
  }

  /// A dependency resolved later, through a ``Lazy`` or ``Provider`` of `type`.
  ///
  /// ```swift
  /// registry.register(Parent.self, dependsOn: [.deferred(Child.self)]) { resolver in
  ///   Parent(child: resolver.lazy(Child.self))
  /// }
  /// ```
  ///
  /// - Parameter type: The type the `Lazy` or `Provider` resolves.
  /// - Returns: The dependency.
  public static func deferred<Service>(_ type: Service.Type) -> ServiceDependency {
    ServiceDependency(key: ServiceKey(Service.self, name: nil), isDeferred: true)
  }

  /// The dependency behind a resolved key: a `Lazy<T>` or `Provider<T>` key stands for a deferred
  /// dependency on `T` (found out when it is read).
  init(parameterKey key: ServiceKey) {
    self.init(key: key, isDeferred: false)
  }

  /// `Database`, or `Mailer (deferred)`.
  public var description: String {
    let resolved = resolved
    return resolved.isDeferred ? "\(resolved.key) (deferred)" : resolved.key.description
  }
}

/// A type that resolves another service later: ``Lazy`` and ``Provider``.
protocol DeferredDependency {
  static var deferredKey: ServiceKey { get }
}

/// Which types are ``DeferredDependency`` (1: no, 2: yes), for the whole process: a declared or
/// auto-wired dependency is checked each time a tool reads it (see ``TypeFacts``).
private let deferredTypes = TypeFacts()

/// `type` as a ``DeferredDependency``, or `nil` if it is not one.
private func deferredType(_ type: Any.Type) -> (any DeferredDependency.Type)? {
  let isDeferred = deferredTypes.fact(for: type) { type is any DeferredDependency.Type ? 2 : 1 } == 2
  return isDeferred ? type as? any DeferredDependency.Type : nil
}

extension Lazy: DeferredDependency {
  static var deferredKey: ServiceKey { ServiceKey(Value.self, name: nil) }
}

extension Provider: DeferredDependency {
  static var deferredKey: ServiceKey { ServiceKey(Value.self, name: nil) }
}

extension RegistrationDescriptor {
  /// The registration's dependencies with their kind: what auto-wiring recorded, or what a closure
  /// factory declared with `dependsOn:`; `nil` for a closure factory that declared nothing, which
  /// graph validation lists as unchecked.
  ///
  /// ```swift
  /// for registration in container.registrations {
  ///   for edge in registration.edges ?? [] where edge.isDeferred { print(registration.key, "⇢", edge.key) }
  /// }
  /// ```
  public var edges: [ServiceDependency]? {
    attributes.declaredDependencies ?? rawDependencies?.map(ServiceDependency.init(parameterKey:))
  }

  /// ``edges``, each with its key and kind found out once (`ServiceDependency.resolvedOnce`), as a
  /// validation reads them; made in one pass rather than from ``edges`` (which a validation of
  /// 10,000 registrations made 10,000 arrays more for).
  package var resolvedEdges: [ServiceDependency]? {
    if let declared = attributes.declared { return declared.chunk.items[declared.range].map(\.resolvedOnce) }
    return rawDependencies?.map { ServiceDependency(parameterKey: $0).resolvedOnce }
  }

  /// The module that registered it, as its name reads in messages (see `StrataModules`); `nil`
  /// for a registration made outside a module.
  ///
  /// ```swift
  /// let byModule = Dictionary(grouping: container.registrations, by: { $0.module ?? "-" })
  /// ```
  public var module: String? { attributes.module?.name }

  /// The module that registered it, compared by identity (two modules may read alike).
  package var moduleAttribution: ModuleAttribution? { attributes.module }

  /// Whether it was declared an override of a registration of the same key
  /// (``RegistrationHandle/overriding()``).
  ///
  /// ```swift
  /// let overrides = container.registrations.filter(\.isOverride)
  /// ```
  public var isOverride: Bool { attributes.isOverride }
}
