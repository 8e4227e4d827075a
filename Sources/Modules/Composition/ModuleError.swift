public import Strata

/// Why installing modules failed: two modules registering one key, a cycle among modules, an
/// override that replaces nothing, a failing ``Module/loaded(in:)`` hook, or a closed scope.
///
/// ```swift
/// do {
///   try container.install(PersistenceModule(), CacheModule())
/// } catch let error as ModuleError where error.code == .duplicateRegistration {
///   print(error)   // names the key, both modules and both registration sites
/// }
/// ```
///
/// Nothing of an installation is registered when it fails with any code but `loadHookFailed`.
public struct ModuleError: Error, CustomStringConvertible {
  /// What went wrong; new codes may be added.
  ///
  /// ```swift
  /// if error.code == .moduleCycle { print(error.modules) }
  /// ```
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, such as `duplicateRegistration`.
    public let rawValue: String

    init(_ rawValue: String) {
      self.rawValue = rawValue
    }

    /// Two modules register the same key, and neither is an override.
    public static let duplicateRegistration = Code("duplicateRegistration")
    /// Two modules override the same key.
    public static let duplicateOverride = Code("duplicateOverride")
    /// Modules require each other in a cycle.
    public static let moduleCycle = Code("moduleCycle")
    /// An override registration replaces nothing: no other module, and no enclosing scope,
    /// registers its key. (The override's own module registering the key before, listed beside
    /// its composition or installed earlier, does not count.)
    public static let staleOverride = Code("staleOverride")
    /// A module's ``Module/loaded(in:)`` hook threw; the installation's registrations stay.
    public static let loadHookFailed = Code("loadHookFailed")
    /// The scope to install in is closed.
    public static let scopeClosed = Code("scopeClosed")

    /// The raw value.
    public var description: String { rawValue }
  }

  /// What went wrong.
  public let code: Code
  /// The modules involved: the two that register one key, the cycle (its first module repeated at
  /// the end), the module with the stale override, the module whose hook failed, or the modules
  /// given to install in a closed scope.
  public let modules: [ModuleID]
  /// The key involved, for the registration errors.
  public let key: ServiceKey?
  /// The registration sites involved, one per module in ``modules`` for the registration errors.
  public let sites: [SourceLocation]
  /// The error a `loaded(in:)` hook threw.
  public let underlying: (any Error)?

  init(
    code: Code, modules: [ModuleID], key: ServiceKey? = nil, sites: [SourceLocation] = [],
    underlying: (any Error)? = nil
  ) {
    self.code = code
    self.modules = modules
    self.key = key
    self.sites = sites
    self.underlying = underlying
  }

  /// The first line of ``description``.
  ///
  /// ```swift
  /// print(error.message)   // module cycle: AModule → BModule → AModule
  /// ```
  public var message: String {
    let key = self.key.map { "`\($0)`" } ?? "a service"
    return switch code {
    case .duplicateRegistration: "\(key) is registered by two modules"
    case .duplicateOverride: "\(key) is overridden by two modules"
    case .moduleCycle: "module cycle: " + modules.map(\.description).joined(separator: " → ")
    case .staleOverride: "the override of \(key) replaces nothing"
    case .loadHookFailed:
      "the loaded(in:) hook of \(modules.first.map(\.description) ?? "a module") threw: "
        + (underlyingLines.first ?? "an error")
    case .scopeClosed:
      "the scope was closed; "
        + (modules.isEmpty ? "modules" : modules.map(\.description).joined(separator: ", "))
        + " cannot be installed in it"
    default: "\(code)"
    }
  }

  /// What to do about it.
  public var hint: String {
    switch code {
    case .duplicateRegistration:
      "keep one of them, or declare the later one an override: `.overriding()` on its registration, "
        + "or install `base.overridden(by: replacement)`"
    case .duplicateOverride: "keep one override of a key per installation"
    case .moduleCycle:
      "a module cannot require itself, directly or through others; move what they share into a "
        + "module both require"
    case .staleOverride:
      "no other module and no enclosing scope registers it; remove the override (a stale test "
        + "double?) or register the service it stands in for"
    case .scopeClosed: "install modules before closing the scope, or in an open scope"
    default:
      // The hook's error's own hint first (a `ResolutionError` says what to register).
      underlyingLines.dropFirst().compactMap { line in
        line.hasPrefix("  hint: ") ? String(line.dropFirst("  hint: ".count)) + "; " : nil
      }.joined() + "the modules' registrations are published; fix the hook or what it resolves"
    }
  }

  /// The lines of the hook's error's description (one for most errors; a `ResolutionError` adds
  /// its path, registration site and hint).
  private var underlyingLines: [String] {
    underlying.map { "\($0)".split(separator: "\n", omittingEmptySubsequences: false).map(String.init) } ?? []
  }

  /// A multi-line text: the message, the modules and sites, and a hint.
  ///
  /// ```text
  /// duplicateRegistration: `Database` is registered by two modules
  ///   PersistenceModule at App/Persistence.swift:12
  ///   CacheModule at App/Cache.swift:30
  ///   hint: keep one of them, or declare the later one an override: …
  /// ```
  public var description: String {
    var lines = ["\(code): \(message)"]
    for (module, site) in zip(modules, sites) { lines.append("  \(module) at \(site)") }
    // The rest of the hook's error (its path and site), its hint merged into this one.
    lines += underlyingLines.dropFirst().filter { !$0.hasPrefix("  hint: ") }
    lines.append("  hint: \(hint)")
    return lines.joined(separator: "\n")
  }
}
