public import Strata

/// One problem graph validation found: what it is, the dependency path that leads to it, and the
/// registration to change.
///
/// ```swift
/// for problem in container.validationReport().problems where problem.code == .missingDependency {
///   print(problem.registeredAt, problem.key)
/// }
/// ```
public struct ValidationProblem: Sendable, CustomStringConvertible {
  /// What kind of problem; new codes may be added.
  ///
  /// ```swift
  /// let captives = report.problems.filter { $0.code == .captiveDependency }
  /// ```
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, such as `missingDependency`.
    public let rawValue: String

    init(_ rawValue: String) {
      self.rawValue = rawValue
    }

    /// A dependency that nothing visible from where it is resolved registers.
    public static let missingDependency = Code("missingDependency")
    /// A dependency registered only with other runtime arguments.
    public static let argumentMismatch = Code("argumentMismatch")
    /// Services that need each other while they are made (no `Lazy` or `Provider` between).
    public static let cycle = Code("cycle")
    /// A longer-lived service that would keep a shorter-lived one.
    public static let captiveDependency = Code("captiveDependency")
    /// A `scoped(tag)` service reached where no scope with the tag encloses the resolve.
    public static let noMatchingScope = Code("noMatchingScope")
    /// One key registered by two modules, neither an override.
    public static let duplicateRegistration = Code("duplicateRegistration")

    /// The raw value.
    public var description: String { rawValue }
  }

  /// What kind of problem.
  public let code: Code
  /// The key the problem is about: the missing dependency, the captured service, the first service
  /// of a cycle, the duplicated key.
  public let key: ServiceKey
  /// The dependency path from the registration that has the problem to ``key``: `[A, B, C]` for
  /// `A → B → C`; for a cycle, its services with the first repeated at the end.
  public let path: [ServiceKey]
  /// Where the registration to change was made: the one that needs the missing or mismatched
  /// dependency, the captor, the first of a cycle, the first of two duplicates.
  public let registeredAt: SourceLocation
  /// The module of that registration, if it was made by one.
  public let module: String?
  let detail: Detail

  /// The facts each code's text is made from.
  enum Detail: Sendable {
    case missing
    case argumentMismatch(registered: [ServiceKey])
    case cycle
    case captive(captor: RegistrationDescriptor, captured: RegistrationDescriptor, scopes: String)
    case noMatchingScope(service: RegistrationDescriptor, scopes: String)
    case duplicate(first: RegistrationDescriptor, second: RegistrationDescriptor)
  }

  /// The first line of ``description``, without the code.
  ///
  /// ```swift
  /// print(problem.message)   // nothing is registered for `Mailer`
  /// ```
  public var message: String { ValidationText.message(for: self) }

  /// What to do about it.
  ///
  /// ```swift
  /// print(problem.hint)
  /// ```
  public var hint: String { ValidationText.hint(for: self) }

  /// A few lines: code and message, the path, the registration site and module, and a hint.
  ///
  /// ```text
  /// missingDependency: nothing is registered for `Mailer`
  ///   path: OrderService → Mailer
  ///   registered at App/Orders.swift:14 by OrdersModule
  ///   hint: register `Mailer` where the resolve can see it (in that scope or above), or install the module that does
  /// ```
  public var description: String { ValidationText.description(of: self) }
}
