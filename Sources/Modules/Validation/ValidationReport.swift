public import Strata

/// What graph validation found: every problem at once, and the registrations it could not check.
///
/// ```swift
/// let report = container.validationReport()
/// for problem in report.problems { print(problem) }
/// print("unchecked closure factories:", report.unchecked.count)
/// ```
public struct ValidationReport: Sendable, CustomStringConvertible {
  /// Every problem found, in a stable order: duplicates, then each registration's problems in
  /// registration order (root first), then cycles.
  public let problems: [ValidationProblem]
  /// Closure factories that declared no dependencies (`dependsOn:`): their dependencies could not
  /// be checked. Listed, not reported as problems.
  public let unchecked: [RegistrationDescriptor]
  /// How many registrations were read (the unchecked ones included).
  public let registrationCount: Int
  /// The scope chain validated, such as `root → session("s1")`.
  public let scopes: String

  /// Whether no problem was found.
  ///
  /// ```swift
  /// #expect(container.validationReport().isValid)
  /// ```
  public var isValid: Bool { problems.isEmpty }

  /// All problems, numbered, then the unchecked registrations.
  ///
  /// ```text
  /// validation of root found 2 problems in 5 registrations
  /// 1. missingDependency: nothing is registered for `Mailer`
  ///      path: OrderService → Mailer
  ///      …
  /// unchecked (closure factories that declare no dependencies with dependsOn:):
  ///   `Clock` (singleton) at App/Setup.swift:9 by AppModule
  /// ```
  public var description: String { ValidationText.description(of: self) }
}

/// Graph validation failed: ``report`` holds every problem.
///
/// ```swift
/// do {
///   try container.validate()
/// } catch let error as ValidationError {
///   print(error)   // every problem, one numbered entry each
///   exit(1)
/// }
/// ```
public struct ValidationError: Error, CustomStringConvertible {
  /// The full report, with at least one problem.
  public let report: ValidationReport

  /// The problems.
  public var problems: [ValidationProblem] { report.problems }

  /// The report's description.
  public var description: String { report.description }
}
