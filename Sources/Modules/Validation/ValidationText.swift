import Strata

/// Every text of graph validation, made in one place from a problem's code and facts.
enum ValidationText {
  static func message(for problem: ValidationProblem) -> String {
    let key = "`\(problem.key)`"
    switch problem.detail {
    case .missing: return "nothing is registered for \(key)"
    case .argumentMismatch(let registered):
      return "\(key) is registered only with other runtime arguments: "
        + registered.map { "`\($0)`" }.joined(separator: ", ")
    case .cycle:
      return "circular dependency: " + problem.path.map(\.description).joined(separator: " → ")
    case .captive(let captor, let captured, _):
      return "`\(captor.key)` (\(captor.lifetime)) would capture `\(captured.key)` (\(captured.lifetime))"
    case .noMatchingScope(let service, let scopes):
      let tag = service.lifetime.scopeTag.map(\.description) ?? "matching"
      return "\(key) (\(service.lifetime)) is resolved where no \(tag) scope encloses it: \(scopes)"
    case .duplicate(let first, let second):
      return "\(key) is registered by two modules: \(first.module ?? "-") at \(first.registeredAt) "
        + "and \(second.module ?? "-") at \(second.registeredAt)"
    }
  }

  static func hint(for problem: ValidationProblem) -> String {
    switch problem.detail {
    case .missing:
      return "register `\(problem.key)` where the resolve can see it (in that scope or above), "
        + "or install the module that does"
    case .argumentMismatch:
      return "a dependency is resolved without arguments; register `\(problem.key)` without "
        + "arguments, or inject a Provider or factory that passes them"
    case .cycle:
      return "break the cycle: inject one side as Lazy or Provider, or set it in an onActivated hook"
    case .captive(let captor, let captured, let scopes):
      if captured.lifetime.scopeTag == nil {
        return "`\(captor.key)` is made in \(scopes) and would keep that scope's `\(captured.key)` "
          + "for its whole life; make it scoped as well, or resolve `\(captured.key)` from the scope "
          + "that uses it (a Lazy or Provider it keeps resolves in its own scope too)"
      }
      return
        "`\(captor.key)` is made in \(scopes), where no \(captured.lifetime.scopeTag?.description ?? "") "
        + "scope encloses it; make it \(captured.lifetime) as well, or pass the value as an argument"
    case .noMatchingScope(let service, _):
      let tag = service.lifetime.scopeTag.map(\.description) ?? "matching"
      return "resolve it only inside a \(tag) scope, or change its lifetime"
    case .duplicate:
      return "keep one of them, or declare the later one an override: `.overriding()` on its "
        + "registration, or install `base.overridden(by: replacement)`"
    }
  }

  static func description(of problem: ValidationProblem) -> String {
    var lines = ["\(problem.code): \(message(for: problem))"]
    if problem.path.count > 1 {
      lines.append("  path: " + problem.path.map(\.description).joined(separator: " → "))
    }
    lines.append("  registered at \(problem.registeredAt)" + (problem.module.map { " by \($0)" } ?? ""))
    lines.append("  hint: \(hint(for: problem))")
    return lines.joined(separator: "\n")
  }

  static func description(of report: ValidationReport) -> String {
    let count = report.problems.count
    let found = count == 0 ? "no problems" : count == 1 ? "1 problem" : "\(count) problems"
    var lines = ["validation of \(report.scopes) found \(found) in \(report.registrationCount) registrations"]
    for (number, problem) in report.problems.enumerated() {
      let prefix = "\(number + 1). "
      let indent = String(repeating: " ", count: prefix.count)
      let text = problem.description.split(separator: "\n", omittingEmptySubsequences: false)
      lines.append(prefix + text[0])
      lines += text.dropFirst().map { indent + $0 }
    }
    if !report.unchecked.isEmpty {
      lines.append("unchecked (closure factories that declare no dependencies with dependsOn:):")
      lines += report.unchecked.map { "  " + site(of: $0) }
    }
    return lines.joined(separator: "\n")
  }

  /// `` `Database` (singleton) at App/Setup.swift:12 by PersistenceModule ``.
  static func site(of registration: RegistrationDescriptor) -> String {
    "`\(registration.key)` (\(registration.lifetime)) at \(registration.registeredAt)"
      + (registration.module.map { " by \($0)" } ?? "")
  }
}
