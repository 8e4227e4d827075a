public import Strata

extension Scope {
  /// Checks every registration visible from this scope without making any instance, and throws
  /// every problem at once.
  ///
  /// ```swift
  /// let container = try Container(modules: [AppModule()])
  /// try container.validate(expecting: [.session, .request])   // at start-up, before serving
  /// ```
  ///
  /// Validation reads the dependencies each registration declares (auto-wired initializers, forwards,
  /// `dependsOn:`) and reports missing dependencies, dependencies registered only with other runtime
  /// arguments, cycles (a `Lazy` or `Provider` edge breaks one), captive dependencies (a singleton
  /// or weak service reaching a scoped one, directly or through transient services — including an
  /// untagged `scoped` service, which the core hands the singleton's own scope's instance of),
  /// `scoped(tag)` services resolved where no scope with the tag can enclose them, and keys
  /// registered by two modules. Closure factories that declare no dependencies cannot be checked:
  /// the returned report lists them.
  ///
  /// - Parameter scopes: The tags of the scopes the application makes below this one, outermost
  ///   first, such as `[.session, .request]`. With them, validation also reports `scoped(tag)`
  ///   services that no expected scope can own; without them, it assumes any scope may exist below.
  /// - Returns: The report, which lists the unchecked registrations.
  /// - Throws: ``ValidationError`` with every problem, if there is any.
  @discardableResult
  public func validate(expecting scopes: [ScopeTag] = []) throws -> ValidationReport {
    let report = validationReport(expecting: scopes)
    guard report.isValid else { throw ValidationError(report: report) }
    return report
  }

  /// Checks every registration visible from this scope without making any instance: what
  /// ``validate(expecting:)`` checks, returned rather than thrown, for tools.
  ///
  /// ```swift
  /// let report = container.validationReport()
  /// print(report.problems.map(\.code))
  /// ```
  ///
  /// - Parameter scopes: The tags of the scopes the application makes below this one.
  /// - Returns: Every problem found, and the registrations that could not be checked.
  public func validationReport(expecting scopes: [ScopeTag] = []) -> ValidationReport {
    var validator = Validator(graph: GraphModel(scope: self, expecting: scopes))
    return validator.report()
  }
}
