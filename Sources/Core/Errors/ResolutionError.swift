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
/// The error holds data: its ``code``, its ``subject`` (a service or, for a scope's own lifecycle,
/// a scope), the keys, lifetimes and registration sites involved. Its text (``message``, ``hint``,
/// ``description``) is rendered from that data when read, in one place: `ErrorMessages.swift`.
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
    /// The resolution nested deeper than Strata allows (4,096 levels, or 32 `Lazy`, `Provider`
    /// and `@Injected` resolves each started inside the one before), or than the thread's stack
    /// has room for, without repeating a service (a repeat is a ``cycle``).
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
  var rawCode: Code { reason.code }

  /// What the failure is about: a service, or a scope.
  ///
  /// Most failures are about a service: the missing one, the one whose factory threw, the one that
  /// closed a cycle (``key``). A few are about a scope's own lifecycle, where no service is
  /// involved: making a child of a closed scope, disposers failing while a scope closes, a free
  /// ``withScope(_:name:_:)`` with no current scope to make a child of.
  ///
  /// ```swift
  /// do {
  ///   try request.close()
  /// } catch let error as ResolutionError where error.code == .disposalFailed {
  ///   if case .scope(let scope) = error.subject { log.warning("cleanup of \(scope) failed") }
  ///   // cleanup of root → request("r1") failed
  /// }
  /// ```
  public enum Subject: Hashable, Sendable, CustomStringConvertible {
    /// A service, by its key (the same as ``ResolutionError/key``).
    case service(ServiceKey)
    /// A scope, by its chain from the root as it was when the error was made:
    /// `root → session("s1")`.
    case scope(String)
    /// The ambient ``Scope/current`` scope: the call needed one, and none was current.
    case currentScope

    /// The key's description, the scope's chain, or `Scope.current`.
    public var description: String {
      switch self {
      case .service(let key): key.description
      case .scope(let chain): chain
      case .currentScope: "Scope.current"
      }
    }
  }

  /// What the failure is about: a service (``key``), or, for a scope's own lifecycle failures, a
  /// scope.
  public var subject: Subject {
    guard case .service = reason.subject else { return reason.subject }
    return .service(key)
  }

  /// The key the failure is about: the missing service, the failing factory's service, the
  /// service that closed a cycle.
  ///
  /// A failure about a scope rather than a service (see ``subject``) has no key of its own; for
  /// compatibility this is then `ServiceKey(Scope.self)`, or for
  /// ``Code/disposalFailed`` the service of the first disposer that failed.
  public var key: ServiceKey {
    guard code == .cycle, let last = trimmedPath.last else { return reason.key }
    return last
  }

  /// The chain of services being resolved, outermost first, ending with ``key``:
  /// `App → UserService → Database`. For a cycle, it ends where the cycle closes. For a failure
  /// about a scope (see ``subject``), the services being resolved when it happened, none at top
  /// level.
  public var path: [ServiceKey] { trimmedPath }
  /// Where the registration involved was made: the failing registration for a factory error; for
  /// a cycle, the registration whose factory asked for the service again, closing the cycle; for
  /// a missing service, the registration that asked for it (`nil` at top level).
  public internal(set) var registeredAt: SourceLocation?
  /// The error a factory, hook or disposer threw, if that is what happened.
  public let underlying: (any Error)?
  /// For ``Code/disposalFailed``: every disposer error, in the order they happened.
  public internal(set) var disposalErrors: [any Error]

  /// The registrations at fault, each with its key, lifetime and site, outermost first: the
  /// failing registration for ``Code/factoryFailed``, ``Code/activationFailed`` and an
  /// ``Code/invalidRegistration`` of its lifetime; the forwarded one for ``Code/typeMismatch``;
  /// the scoped one for ``Code/noMatchingScope``; the longer-lived captor, then the captive, for
  /// ``Code/captiveDependency``. Empty when no registration is at fault (a missing service, a
  /// cycle, a closed scope).
  ///
  /// ```swift
  /// if error.code == .captiveDependency, let captor = error.registrations.first {
  ///   print("make \(captor.key) shorter-lived than \(captor.lifetime) (\(captor.registeredAt))")
  /// }
  /// ```
  public var registrations: [RegistrationDescriptor] { reason.registrations }

  /// What failed, with its data; the text is rendered from it in `ErrorMessages.swift`.
  let reason: Reason
  var rawPath: [ServiceKey]

  /// - Parameter insideFactory: The error is thrown by Strata inside the factory of the
  ///   registration for the reason's key, which adds that key to the path itself as the error
  ///   leaves it.
  init(
    _ reason: Reason, underlying: (any Error)? = nil, disposalErrors: [any Error] = [],
    insideFactory: Bool = false
  ) {
    self.reason = reason
    // A scope is not a service: it starts no path.
    let inPath = !insideFactory && { if case .service = reason.subject { true } else { false } }()
    self.rawPath = inPath ? [reason.key] : []
    self.registeredAt = reason.site
    self.underlying = underlying
    self.disposalErrors = disposalErrors
  }

  /// How to fix it, when Strata can tell.
  public var hint: String? { ErrorMessages.hint(for: self) }

  /// For a ``Code/cycle``: the services that form the cycle, starting and ending with the same one
  /// (from where the path met the closing service last before).
  public var cycle: [ServiceKey]? {
    let path = trimmedPath
    guard code == .cycle, let last = path.last, let first = path.dropLast().lastIndex(of: last)
    else { return nil }
    return Array(path[first...])
  }

  /// One sentence on what went wrong.
  public var message: String { ErrorMessages.message(for: self) }

  /// The full report: code, message, path, registration site and hint, one per line.
  public var description: String { ErrorMessages.description(of: self) }

  /// The path with a cycle shown once: `App → A → B → A`, however deep the recursion went.
  ///
  /// A cycle detected where it closed (a shared instance or `Lazy` entered again) ends there
  /// already. Recursion stopped by the depth or stack check repeats its cycle up to the limit: the
  /// path is cut after the first round of that repeating tail. A key met twice before it (a
  /// session's `Logger` whose singleton needs the container's `Logger`) is no cycle.
  private var trimmedPath: [ServiceKey] {
    guard code == .cycle, rawCode != .cycle else { return rawPath }
    guard
      let repeatAt = ResolutionError.repeatingTail(of: rawPath) ?? ResolutionError.firstRepeat(in: rawPath)
    else { return rawPath }
    return Array(rawPath[...repeatAt])
  }

  /// Where the first round of the repeating tail of `path` closes: the index of the first key
  /// that repeats the one a period before it, for the shortest period the tail repeats twice
  /// with; `nil` if it does not.
  static func repeatingTail(of path: [ServiceKey]) -> Int? {
    let count = path.count
    guard count >= 2 else { return nil }
    for period in 1...(count / 2) {
      guard (count - 2 * period..<count - period).allSatisfy({ path[$0] == path[$0 + period] }) else {
        continue
      }
      var start = count - 2 * period
      while start > 0, path[start - 1] == path[start - 1 + period] { start -= 1 }
      return start + period
    }
    return nil
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
    ResolutionError(.tooDeep(key, depth: depth))
  }

  /// A cycle detected at `key`.
  static func cycle(at key: ServiceKey, acrossThreads: Bool = false) -> ResolutionError {
    ResolutionError(.cycle(key, acrossThreads: acrossThreads))
  }

  /// A ``Lazy``, ``Provider`` or ``Injected`` (`holder`) used after the scope it resolves from was
  /// freed.
  static func scopeGone(_ key: ServiceKey, holder: Holder) -> ResolutionError {
    ResolutionError(.scopeFreed(key, holder: holder))
  }

  /// `error` thrown inside `registration`'s factory or hook, with `registration` added to its path.
  @usableFromInline
  static func propagating(
    _ error: any Error, through registration: AnyRegistration, activating: Bool = false
  ) -> ResolutionError {
    guard var resolution = error as? ResolutionError else {
      let descriptor = registration.descriptor
      return ResolutionError(
        activating ? .activationFailed(descriptor) : .factoryFailed(descriptor), underlying: error)
    }
    if resolution.registeredAt == nil { resolution.registeredAt = registration.location }
    resolution.rawPath.insert(registration.key, at: 0)
    return resolution
  }
}
