import Foundation
import Strata
import StrataModules
import Testing

/// Differential tests of validation: for seeded random graphs, what `validate()` reports must be
/// what resolving every registration meets, no more and no less.
@Suite struct ValidationDifferentialTests {
  static let seeds: [UInt64] = Array(1...60)

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
    case .missingDependency, .argumentMismatch: "missing"
    case .cycle: "cycle"
    case .captiveDependency, .noMatchingScope: "scope"
    default: "other \(code)"
    }
  }

  /// Compares a report with what resolving met, and returns every disagreement.
  private static func disagreements(
    _ report: ValidationReport, _ run: GraphRun, truncated: Bool, shadowed: Set<ServiceKey> = []
  ) -> [String] {
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
      // So may one of a registration the session shadows: no resolve from the request reaches it.
      // A cycle is a cycle of the registrations: one through a registration shadowed here, or
      // one that a resolve meets only behind another error, is not met either.
      let masked =
        problem.group == "cycle"
        ? problem.path.contains { run.failed.contains($0) || shadowed.contains($0) }
        : problem.path.first.map { run.failed.contains($0) || shadowed.contains($0) } ?? false
      if !met && !captive && !truncated && !masked { found.append("reported, never met: \(problem.text)") }
    }
    return found
  }

  /// The edges a text export marks missing, as (dependent, dependency) key descriptions.
  private static func missingEdges(inTextExport text: String) -> [(String, String)] {
    var dependent = ""
    var edges: [(String, String)] = []
    for line in text.split(separator: "\n").map(String.init) {
      if line.hasPrefix("      ") {
        let edge = line.dropFirst(8)  // the indent, the arrow and a space
        guard edge.hasSuffix("missing)"), let open = edge.range(of: " (", options: .backwards) else {
          continue
        }
        edges.append((dependent, String(edge[..<open.lowerBound])))
      } else if line.hasPrefix("    "), let open = line.range(of: " [") {
        dependent = String(line[line.index(line.startIndex, offsetBy: 4)..<open.lowerBound])
      }
    }
    return edges
  }

  /// The problems as a set: code and key, and for cycles the services on cycles.
  private static func summary(_ report: ValidationReport) -> Set<String> {
    Set(
      report.problems.flatMap { problem in
        problem.code == .cycle ? problem.path.map { "cycle \($0)" } : ["\(problem.code) \(problem.key)"]
      })
  }

  private static func describe(_ shape: GraphShape) -> String {
    (shape.specs + shape.shadows + shape.twins).enumerated().map { index, spec in
      let edges = spec.edges.map { ($0.isDeferred ? "~" : "") + KeyOps.forKey($0.target).description }
      return "\(KeyOps.forKey(spec.key).description) [\(spec.lifetime)]"
        + (shape.sessionKeys.contains(spec.key)
          || (shape.specs.count..<shape.specs.count + shape.shadows.count).contains(index)
          ? " (session)" : "")
        + (spec.declares ? " -> " + edges.joined(separator: ", ") : " unchecked")
    }.joined(separator: "\n")
  }

  @Test(arguments: seeds)
  func validationOfASessionAgreesWithResolvingFromARequest(seed: UInt64) throws {
    let shape = GraphShape(seed: seed)
    let log = GraphLog()
    let modules = shape.modules(log: log)
    let container = try Container(modules: modules.root)
    let session = try shape.session(of: container, modules: modules.session, log: log)
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
    // An edge the export marks missing is a problem validation reports for that dependent.
    for (dependent, dependency) in Self.missingEdges(inTextExport: exports[0]) {
      let reported = report.problems.contains { problem in
        "\(problem.key)" == dependency
          && problem.path.map(\.description).suffix(2) == [dependent, dependency]
      }
      #expect(
        reported, "seed \(seed): the export's missing \(dependent) → \(dependency) is not reported\n\(report)"
      )
    }
    // The same graph, its modules installed and their registrations made in the other order.
    let again = shape.modules(log: GraphLog(), reversed: true)
    let other = try shape.session(of: Container(modules: again.root), modules: again.session, log: GraphLog())
    #expect([GraphFormat.text, .dot, .mermaid].map { other.exportGraph(as: $0) } == exports, "seed \(seed)")
    // The same problems, listed in registration order (and each cycle found from where the
    // search met it first).
    #expect(
      Self.summary(other.validationReport(expecting: [.request])) == Self.summary(report), "seed \(seed)")
    #expect(Set(session.installedModules).isDisjoint(with: container.installedModules))
    #expect(
      report.registrationCount == shape.specs.count + shape.shadows.count + shape.argumentKeys.count
        + shape.twins.count)
    #expect(report.unchecked.count == shape.specs.filter { !$0.declares }.count)

    let request = try session.makeScope(.request)
    // Validated from the request itself, the same graph has the same problems.
    #expect(Self.summary(request.validationReport()) == Self.summary(report), "seed \(seed)")
    let run = GraphRun.resolve(shape.specs.map(\.key), from: request, log: log)
    let shadowed = Set(shape.shadows.map { KeyOps.forKey($0.key).key })
    let found = Self.disagreements(report, run, truncated: log.isOverBudget, shadowed: shadowed)
    #expect(
      found.isEmpty,
      "seed \(seed):\n\(found.joined(separator: "\n"))\n\(report)\n\(Self.describe(shape))\nmet:\n\(run.errors.map { "\($0.path)" }.joined(separator: "\n"))"
    )
  }

  /// A request with registrations of its own (new keys, and keys it shadows), validated from
  /// itself, against resolving every key from it.
  @Test(arguments: seeds)
  func validationOfARequestWithItsOwnRegistrationsAgreesWithResolvingFromIt(seed: UInt64) throws {
    let shape = GraphShape(seed: seed)
    let log = GraphLog()
    let modules = shape.modules(log: log)
    let session = try shape.session(of: Container(modules: modules.root), modules: modules.session, log: log)
    let request = try session.makeScope(.request) { registry in
      for spec in shape.requestSpecs { spec.register(in: registry, log: log) }
    }
    let report = request.validationReport()
    #expect(log.runs == 0, "validation ran a factory")

    let above = Set((shape.specs + shape.shadows).map(\.key))
    let keys = above.union(shape.requestSpecs.map(\.key)).sorted()
    let run = GraphRun.resolve(keys, from: request, log: log)
    let shadowed = Set(
      (shape.shadows.map(\.key) + shape.requestSpecs.map(\.key).filter(above.contains)).map {
        KeyOps.forKey($0).key
      })
    let found = Self.disagreements(report, run, truncated: log.isOverBudget, shadowed: shadowed)
    let ownSpecs = shape.requestSpecs.map {
      "\(KeyOps.forKey($0.key).description) [\($0.lifetime)] (request) -> \($0.edges.map(\.target))"
    }
    #expect(
      found.isEmpty,
      "seed \(seed):\n\(found.joined(separator: "\n"))\n\(report)\n\(Self.describe(shape))\n\(ownSpecs.joined(separator: "\n"))"
    )
  }

  /// Without factories that carry on past an error, each failing resolve reports its whole path:
  /// the problem reported for its key must end the same way.
  @Test(arguments: seeds)
  func theFirstErrorOfEachResolveIsReportedWithItsPath(seed: UInt64) throws {
    let shape = GraphShape(seed: seed)
    let log = GraphLog(collects: false)
    let modules = shape.modules(log: log)
    let session = try shape.session(of: Container(modules: modules.root), modules: modules.session, log: log)
    let report = session.validationReport(expecting: [.request])
    let request = try session.makeScope(.request)
    var found: [String] = []
    for spec in shape.specs {
      do {
        _ = try KeyOps.forKey(spec.key).resolveFrom(request)
      } catch let error as ResolutionError {
        let matches = report.problems.contains { problem in
          guard Self.group(problem.code) == Self.group(error.code) else { return false }
          if error.code == .cycle {
            let cycle = error.cycle ?? []
            return Set(problem.path) == Set(cycle)
          }
          guard problem.key == error.key else { return false }
          if error.path.reversed().starts(with: problem.path.reversed()) { return true }
          // One report per captor and captured service, and per dependent and key missing only
          // in a scope (whichever resolve met it first): the path may come from another start.
          return problem.path.count > 2 && problem.path.suffix(2) == error.path.suffix(2)
            || Self.group(problem.code) == "scope" && problem.path.first.map(error.path.contains) == true
        }
        if !matches { found.append("\(error.code) \(error.path)") }
      }
    }
    #expect(
      found.isEmpty, "seed \(seed):\n\(found.joined(separator: "\n"))\n\(report)\n\(Self.describe(shape))")
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
