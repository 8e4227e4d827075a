/// The one error type Strata throws: what went wrong, for which key, along which resolution path,
/// where the registration involved was made, and a hint on how to fix it.
///
/// ```swift
/// do {
///   _ = try container.resolve(App.self)
/// } catch let error as ResolutionError {
///   print(error)
///   // notRegistered: nothing is registered for `Database`
///   //   path: App → UserService → Database
///   //   requested by the registration at App/Setup.swift:14
///   //   hint: `DatabaseImpl` is registered; did you mean to register it as `Database`
///   //         (`.forwarding(to: Database.self)`) or to resolve `DatabaseImpl`?
///   if error.code == .notRegistered { … }
/// }
/// ```
///
/// Creating the error is cheap: the hint, which may search the registrations, is worked out only
/// when ``hint`` or ``description`` is read.
public struct ResolutionError: Error, CustomStringConvertible {
  /// What kind of failure this is. New codes may be added; switch with a `default` case.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, such as `notRegistered`.
    public let rawValue: String

    init(_ rawValue: String) {
      self.rawValue = rawValue
    }

    /// Nothing is registered for the key in the scope chain (argument types and name included).
    public static let notRegistered = Code("notRegistered")
    /// The resolution reached a service it was already building.
    public static let cycle = Code("cycle")
    /// The resolution nested deeper than Strata allows, or than the thread's stack has room for,
    /// without repeating a service (a repeat is a ``cycle``).
    public static let depthLimitExceeded = Code("depthLimitExceeded")
    /// A factory threw; ``ResolutionError/underlying`` holds its error.
    public static let factoryFailed = Code("factoryFailed")
    /// An activation hook (``RegistrationHandle/onActivated(_:)``) threw.
    public static let activationFailed = Code("activationFailed")
    /// A forwarded service could not be converted to the type it was forwarded to.
    public static let typeMismatch = Code("typeMismatch")
    /// A registration is not valid as written (for example a singleton with runtime arguments).
    public static let invalidRegistration = Code("invalidRegistration")
    /// The scope was closed before or during the resolve.
    public static let scopeClosed = Code("scopeClosed")
    /// A `scoped(tag)` service was resolved where no enclosing scope has that tag.
    public static let noMatchingScope = Code("noMatchingScope")
    /// A longer-lived instance would capture a shorter-lived one.
    public static let captiveDependency = Code("captiveDependency")
    /// One or more disposers failed while a scope closed; ``ResolutionError/disposalErrors``
    /// lists them.
    public static let disposalFailed = Code("disposalFailed")

    /// The code's name.
    public var description: String { rawValue }
  }

  /// What kind of failure this is.
  public var code: Code {
    // Recursion stopped by the depth or stack check is a cycle if its path shows one.
    guard rawCode == .depthLimitExceeded, ResolutionError.firstRepeat(in: rawPath) != nil else {
      return rawCode
    }
    return .cycle
  }
  let rawCode: Code
  /// The key the failure is about: the missing service, the failing factory's service, the
  /// service that closed a cycle.
  public var key: ServiceKey {
    guard code == .cycle, let last = trimmedPath.last else { return rawKey }
    return last
  }
  let rawKey: ServiceKey
  /// The chain of services being resolved, outermost first, ending with ``key``:
  /// `App → UserService → Database`. For a cycle, it ends where the cycle closes.
  public var path: [ServiceKey] { trimmedPath }
  /// Where the registration involved was made: the failing registration for a factory error or a
  /// cycle; for a missing service, the registration that asked for it (`nil` at top level).
  public internal(set) var registeredAt: SourceLocation?
  /// The error a factory, hook or disposer threw, if that is what happened.
  public let underlying: (any Error)?
  /// For ``Code/disposalFailed``: every disposer error, in the order they happened.
  public internal(set) var disposalErrors: [any Error]

  var rawPath: [ServiceKey]
  let hintSource: HintSource?

  /// How the hint is produced, lazily.
  enum HintSource: Sendable {
    case text(String)
    /// Near misses for `key` among the registrations of a scope chain.
    case candidates(key: ServiceKey, registries: [Registry])
  }

  /// - Parameter insideFactory: The error is thrown by Strata inside the factory of the
  ///   registration for `key`, which adds `key` to the path itself as the error leaves it.
  init(
    code: Code, key: ServiceKey, registeredAt: SourceLocation?, underlying: (any Error)? = nil,
    disposalErrors: [any Error] = [], hintSource: HintSource? = nil, insideFactory: Bool = false
  ) {
    self.rawCode = code
    self.rawKey = key
    self.rawPath = insideFactory ? [] : [key]
    self.registeredAt = registeredAt
    self.underlying = underlying
    self.disposalErrors = disposalErrors
    self.hintSource = hintSource
  }

  /// How to fix it, when Strata can tell.
  public var hint: String? {
    if rawCode != code { return ResolutionError.cycleHint }
    return switch hintSource {
    case .text(let text): text
    case .candidates(let key, let registries): Hints.forMissing(key, in: registries)
    case nil: nil
    }
  }

  /// For a ``Code/cycle``: the services that form the cycle, starting and ending with the same one.
  public var cycle: [ServiceKey]? {
    let path = trimmedPath
    guard code == .cycle, let last = path.last, let first = path.dropLast().firstIndex(of: last)
    else { return nil }
    return Array(path[first...])
  }

  /// One sentence on what went wrong.
  public var message: String {
    switch code {
    case .notRegistered: "nothing is registered for `\(key)`"
    case .cycle:
      if let cycle {
        "circular dependency: \(cycle.map(\.shortDescription).joined(separator: " → "))"
      } else {
        "circular dependency while resolving `\(key)`"
      }
    case .factoryFailed: "the factory of `\(key)` threw: \(underlying.map { "\($0)" } ?? "an error")"
    case .activationFailed:
      "the activation hook of `\(key)` threw: \(underlying.map { "\($0)" } ?? "an error")"
    case .typeMismatch: "a forwarded instance could not be converted to `\(key.service.name)`"
    case .invalidRegistration: "the registration of `\(key)` is invalid"
    case .scopeClosed: "the scope was closed; `\(key)` cannot be resolved from it"
    case .noMatchingScope: "`\(key)` needs an enclosing scope that is not there"
    case .captiveDependency: "a longer-lived service would capture the shorter-lived `\(key)`"
    case .disposalFailed: "\(disposalErrors.count) disposer(s) failed while the scope closed"
    default: "\(code) for `\(key)`"
    }
  }

  /// The full report: code, message, path, registration site and hint, one per line.
  public var description: String {
    var lines = ["\(code): \(message)"]
    let path = self.path
    if path.count > 1 { lines.append("  path: " + path.map(\.shortDescription).joined(separator: " → ")) }
    if let registeredAt {
      let role = code == .notRegistered ? "requested by the registration at" : "registered at"
      lines.append("  \(role) \(registeredAt)")
    }
    if let hint { lines.append("  hint: \(hint)") }
    for error in disposalErrors { lines.append("  disposer error: \(error)") }
    return lines.joined(separator: "\n")
  }

  /// The path with a cycle shown once: `App → A → B → A`, however deep the recursion went.
  private var trimmedPath: [ServiceKey] {
    guard code == .cycle, let repeatAt = ResolutionError.firstRepeat(in: rawPath) else { return rawPath }
    return Array(rawPath[...repeatAt])
  }

  /// The index of the first key of `path` that an earlier key repeats, in linear time.
  static func firstRepeat(in path: [ServiceKey]) -> Int? {
    guard path.count > 1 else { return nil }
    // The earliest closing repeat: the smallest index whose key appeared before it.
    var seen = Set<ServiceKey>()
    for (index, key) in path.enumerated() where !seen.insert(key).inserted { return index }
    return nil
  }
}

extension ResolutionError {
  /// Recursion stopped at `key`, `depth` levels deep, before it could overflow the stack.
  @usableFromInline
  static func tooDeep(at key: ServiceKey, depth: Int) -> ResolutionError {
    ResolutionError(
      code: .depthLimitExceeded, key: key, registeredAt: nil,
      hintSource: .text(
        "resolves nested \(depth) levels deep here without repeating a service, and the thread's "
          + "stack (or Strata's limit of \(Resolver.maximumDepth)) has no room for more; shorten the "
          + "chain, defer part of it with Lazy or Provider, or resolve on a thread with a larger stack"))
  }

  /// A cycle detected at `key`.
  static func cycle(at key: ServiceKey, acrossThreads: Bool = false) -> ResolutionError {
    ResolutionError(
      code: .cycle, key: key, registeredAt: nil,
      hintSource: .text(
        acrossThreads
          ? "`\(key)` is being created by another thread that is waiting for a service this thread "
            + "is creating; break the cycle with Lazy, Provider or an onActivated hook"
          : cycleHint))
  }

  static var cycleHint: String {
    "break the cycle: inject one side as Lazy or Provider, or set it in an onActivated hook of a "
      + "graph, singleton or scoped registration"
  }

  /// A ``Lazy`` or ``Provider`` (`holder`) used after the scope it resolves from was freed.
  static func scopeGone(_ key: ServiceKey, holder: String) -> ResolutionError {
    ResolutionError(
      code: .scopeClosed, key: key, registeredAt: nil,
      hintSource: .text(
        "the scope this \(holder)<\(key.service.name)> resolves from has been freed; a \(holder) "
          + "does not keep its scope alive, so use it only while that scope is in use"))
  }

  /// `error` thrown inside `registration`'s factory or hook, with `registration` added to its path.
  @usableFromInline
  static func propagating(
    _ error: any Error, through registration: AnyRegistration, activating: Bool = false
  ) -> ResolutionError {
    guard var resolution = error as? ResolutionError else {
      return ResolutionError(
        code: activating ? .activationFailed : .factoryFailed, key: registration.key,
        registeredAt: registration.location, underlying: error,
        hintSource: .text(
          activating
            ? "the instance was discarded; fix the hook or the service it resolves"
            : "the error comes from your factory; `underlying` holds it"))
    }
    if resolution.registeredAt == nil { resolution.registeredAt = registration.location }
    resolution.rawPath.insert(registration.key, at: 0)
    return resolution
  }
}
