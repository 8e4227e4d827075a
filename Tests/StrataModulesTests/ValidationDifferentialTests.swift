import Foundation
import Strata
import StrataModules
import Testing

/// Differential tests of validation: for seeded random graphs, what `validate()` reports must be
/// what resolving every registration meets, no more and no less.
@Suite struct ValidationDifferentialTests {
  static let seeds: [UInt64] = Array(1...100)

  /// The kind of problem, as resolution and validation each name it: a service the rules forbid
  /// where it is resolved is `captiveDependency` or `noMatchingScope` depending on who asks.
  private static func group(_ code: ResolutionError.Code) -> String {
    switch code {
    case .notRegistered: "missing"
    case .cycle: "cycle"
    case .captiveDependency, .noMatchingScope: "scope"
    default: "other \(code)"
    }
  }

  private static func group(_ code: ValidationProblem.Code) -> String {
    switch code {
    case .missingDependency: "missing"
    case .cycle: "cycle"
    case .captiveDependency, .noMatchingScope: "scope"
    default: "other \(code)"
    }
  }

  /// Compares a report with what resolving met, and returns every disagreement.
  private static func disagreements(_ report: ValidationReport, _ run: GraphRun, truncated: Bool) -> [String]
  {
    var found: [String] = []
    let problems = report.problems.map { (group: group($0.code), key: $0.key, path: $0.path, text: "\($0)") }
    if report.isValid && !run.errors.isEmpty {
      found.append("valid, but resolving met: " + run.errors.map(\.text).joined(separator: "\n"))
    }
    for (holder, held) in run.captives {
      let heldKey = KeyOps.forKey(held).description
      if !problems.contains(where: { $0.group == "scope" && "\($0.key)" == heldKey }) {
        found.append("captive not reported: \(KeyOps.forKey(holder).description) holds \(heldKey)")
      }
    }
    for error in run.errors {
      let kind = group(error.code)
      let reported =
        kind == "cycle"
        ? problems.contains {
          $0.group == "cycle" && (error.key.map($0.path.contains) ?? false || error.path.contains($0.key))
        }
        : problems.contains { $0.group == kind && $0.key == error.key }
      if !reported { found.append("not reported: \(error.text)") }
    }
    for problem in problems {
      let met =
        problem.group == "cycle"
        ? run.errors.contains {
          group($0.code) == "cycle"
            && ($0.path.contains(problem.key) || ($0.key.map(problem.path.contains) ?? false))
        }
        : run.errors.contains { group($0.code) == problem.group && $0.key == problem.key }
      let captive =
        problem.group == "scope"
        && run.captives.contains { KeyOps.forKey($0.held).description == "\(problem.key)" }
      // A problem behind another one may be left unmet: the resolve fails at the first.
      let masked = problem.path.first.map(run.failed.contains) ?? false
      if !met && !captive && !truncated && !masked { found.append("reported, never met: \(problem.text)") }
    }
    return found
  }

  /// The problems as a set: code and key, and for cycles the services on cycles.
  private static func summary(_ report: ValidationReport) -> Set<String> {
    Set(
      report.problems.flatMap { problem in
        problem.code == .cycle ? problem.path.map { "cycle \($0)" } : ["\(problem.code) \(problem.key)"]
      })
  }

  private static func describe(_ shape: GraphShape) -> String {
    shape.specs.map { spec in
      let edges = spec.edges.map { ($0.isDeferred ? "~" : "") + KeyOps.forKey($0.target).description }
      return "\(KeyOps.forKey(spec.key).description) [\(spec.lifetime)]"
        + (shape.sessionKeys.contains(spec.key) ? " (session)" : "")
        + (spec.declares ? " -> " + edges.joined(separator: ", ") : " unchecked")
    }.joined(separator: "\n")
  }

  @Test(arguments: seeds)
  func validationOfASessionAgreesWithResolvingFromARequest(seed: UInt64) throws {
    let shape = GraphShape(seed: seed)
    let log = GraphLog()
    let modules = shape.modules(log: log)
    let container = try Container(modules: modules.root)
    let session = try container.makeScope(.session, name: "s", modules: modules.session)
    let report = session.validationReport(expecting: [.request])
    let exports = [GraphFormat.text, .dot, .mermaid].map { session.exportGraph(as: $0) }
    #expect(log.runs == 0, "validation or export ran a factory")
    for spec in shape.specs {
      let key = KeyOps.forKey(spec.key).description
      #expect(exports[0].contains("\(key) [\(spec.lifetime)"), "seed \(seed): \(key) not in the text export")
      #expect(exports[1].contains(key), "seed \(seed): \(key) not in the DOT export")
      let mermaidKey = key.replacingOccurrences(of: "<", with: "#lt;").replacingOccurrences(
        of: ">", with: "#gt;")
      #expect(exports[2].contains(mermaidKey), "seed \(seed): \(key) not in the Mermaid export")
    }
    // The same graph, its modules installed and their registrations made in the other order.
    let again = shape.modules(log: GraphLog(), reversed: true)
    let other = try Container(modules: again.root).makeScope(.session, name: "s", modules: again.session)
    #expect([GraphFormat.text, .dot, .mermaid].map { other.exportGraph(as: $0) } == exports, "seed \(seed)")
    // The same problems, listed in registration order (and each cycle found from where the
    // search met it first).
    #expect(
      Self.summary(other.validationReport(expecting: [.request])) == Self.summary(report), "seed \(seed)")
    #expect(Set(session.installedModules).isDisjoint(with: container.installedModules))
    #expect(report.registrationCount == shape.specs.count)
    #expect(report.unchecked.count == shape.specs.filter { !$0.declares }.count)

    let request = try session.makeScope(.request)
    let run = GraphRun.resolve(shape.specs.map(\.key), from: request, log: log)
    let found = Self.disagreements(report, run, truncated: log.isOverBudget)
    #expect(
      found.isEmpty,
      "seed \(seed):\n\(found.joined(separator: "\n"))\n\(report)\n\(Self.describe(shape))\nmet:\n\(run.errors.map { "\($0.path)" }.joined(separator: "\n"))"
    )
  }

  @Test(arguments: seeds)
  func validationOfTheContainerAgreesWithResolvingFromARequestBelowIt(seed: UInt64) throws {
    let shape = GraphShape(seed: seed)
    let log = GraphLog()
    let container = try Container(modules: shape.modules(log: log).root)
    let report = container.validationReport(expecting: [.session, .request])
    #expect(log.runs == 0, "validation ran a factory")

    let request = try container.makeScope(.session).makeScope(.request)
    let keys = shape.specs.map(\.key).filter { !shape.sessionKeys.contains($0) }
    let run = GraphRun.resolve(keys, from: request, log: log)
    let found = Self.disagreements(report, run, truncated: log.isOverBudget)
    #expect(
      found.isEmpty,
      "seed \(seed):\n\(found.joined(separator: "\n"))\n\(report)\n\(Self.describe(shape))\nmet:\n\(run.errors.map { "\($0.path)" }.joined(separator: "\n"))"
    )
  }
}
