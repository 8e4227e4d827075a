import Strata
import StrataModules
import Testing

/// A module whose identity carries a name; registers a `Clock` under that name that depends on
/// the `Mailer` of the same name, which nobody registers.
private struct NamedModule: Module {
  let name: String
  var moduleID: ModuleID { ModuleID(Self.self, name) }
  func register(in registry: Registrar) {
    registry.register(Clock.self, name: name, dependsOn: [.service(Mailer.self, name: name)]) { _ in Clock() }
  }
}

/// Splits `line` into its quoted strings and the text around them, scalar by scalar (as a DOT or
/// Mermaid parser reads it, not by grapheme: `"` followed by a combining mark is still a quote to
/// them). Strings become `S` in the skeleton; `nil` if a string is left open.
private func skeleton(of line: Substring, backslashEscapes: Bool) -> String? {
  var skeleton = ""
  var inString = false
  var escaped = false
  for scalar in line.unicodeScalars {
    if inString {
      if escaped {
        escaped = false
      } else if backslashEscapes && scalar == "\\" {
        escaped = true
      } else if scalar == "\"" {
        inString = false
        skeleton += "S"
      }
    } else if scalar == "\"" {
      inString = true
    } else {
      skeleton.unicodeScalars.append(scalar)
    }
  }
  return inString ? nil : skeleton
}

/// The shapes a line of the export may have once its strings are `S` (see ``skeleton(of:backslashEscapes:)``).
private let dotShapes = [
  #"digraph Strata \{|  rankdir=LR;|  node \[shape=box\];| *\}"#, #" *subgraph cluster_s\d+(_m\d+)? \{"#,
  #" *label=S;"#, #" *[nm]\d+ \[label=S(, style=dashed)?\];"#, #"  [nm]\d+ -> [nm]\d+( \[style=dashed\])?;"#,
]
private let mermaidShapes = [
  #"flowchart LR| *end"#, #" *subgraph s\d+(_m\d+)?\[S\]"#, #" *[nm]\d+\[S\]"#,
  #"  [nm]\d+ (-->|-\.->) [nm]\d+"#,
]

private func matches(_ shape: String, _ patterns: [String]) throws -> Bool {
  try patterns.contains { try Regex($0).wholeMatch(in: shape) != nil }
}

/// A diamond of features over a shared core, parameterised, in two scopes.
private struct CoreModule: Module {
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton, dependsOn: []) { _ in Database() }
  }
}

private struct FeatureModule: Module {
  let index: Int
  var moduleID: ModuleID { ModuleID(Self.self, index) }
  var requires: [any Module] {
    [CoreModule()] + (index > 1 ? [FeatureModule(index: index / 2), FeatureModule(index: index - 1)] : [])
  }
  func register(in registry: Registrar) {
    registry.register(
      Clock.self, name: index, lifetime: index.isMultiple(of: 3) ? .singleton : .transient,
      dependsOn: [.service(Database.self), .deferred(Mailer.self)]
    ) { _ in Clock() }
  }
}

/// Graph export against the Modules article: "The output is deterministic, so it can be checked
/// in and diffed", and every name stays inside its label (the exports are valid DOT and Mermaid).
@Suite struct Attack4ExportTests {
  /// Names whose first scalar is a combining mark (a name in a script with vowel signs, cut at the
  /// wrong place) join the quote Strata puts before them into one `Character`; the escaping
  /// compares characters, so that quote, and a quote the name holds before a combining mark,
  /// are not escaped, and the label ends early.
  private let combiningNames = ["\u{301}accent", "say \"\u{301}hi\u{301}\"", "\u{94D}virama", "ok"]

  @Test
  func everyDOTStringIsClosedWhereItsLabelEndsEvenBeforeACombiningMark() throws {
    let container = try Container(modules: combiningNames.map { NamedModule(name: $0) })
    let session = try container.makeScope(.session, name: "\u{301}s")
    defer { try? session.close() }
    let dot = session.exportGraph(as: .dot)
    for line in dot.split(separator: "\n") {
      let shape = try #require(skeleton(of: line, backslashEscapes: true), "an open string: \(line)")
      #expect(try matches(shape, dotShapes), "\(line) reads as \(shape)")
    }
  }

  @Test
  func everyMermaidLabelIsClosedWhereItEndsEvenBeforeACombiningMark() throws {
    let container = try Container(modules: combiningNames.map { NamedModule(name: $0) })
    let session = try container.makeScope(.session, name: "\u{301}s")
    defer { try? session.close() }
    let mermaid = session.exportGraph(as: .mermaid)
    for line in mermaid.split(separator: "\n") {
      let shape = try #require(skeleton(of: line, backslashEscapes: false), "an open label: \(line)")
      #expect(try matches(shape, mermaidShapes), "\(line) reads as \(shape)")
    }
  }

  /// The same check on names without combining marks passes: the scanner is not the problem.
  @Test func everyDOTAndMermaidStringIsClosedForPlainOddNames() throws {
    let names = [#"a"b"#, #"c\"d"#, "e\u{2028}f", "g\r\nh", "ä-->ö", "#quot;"]
    let container = try Container(modules: names.map { NamedModule(name: $0) })
    for line in container.exportGraph(as: .dot).split(separator: "\n") {
      let shape = skeleton(of: line, backslashEscapes: true)
      #expect(shape != nil && shape?.filter({ $0 == "S" }).count ?? 0 <= 1, "\(line)")
    }
    for line in container.exportGraph(as: .mermaid).split(separator: "\n") {
      let shape = skeleton(of: line, backslashEscapes: false)
      #expect(shape != nil && shape?.filter({ $0 == "S" }).count ?? 0 <= 1, "\(line)")
    }
  }

  /// A diamond of 60 parameterised features over one core, given in two different orders and in
  /// two containers: every format reads the same, and every module is drawn once.
  @Test func aShuffledDiamondOfParameterisedFeaturesExportsTheSameText() throws {
    var random = SeededRandom(seed: 4)
    let features = (1...60).map { FeatureModule(index: $0) }
    let first = try Container(modules: features)
    let second = try Container(modules: random.shuffled(features) + [CoreModule()])
    let firstSession = try first.makeScope(.session, name: "s", modules: [])
    let secondSession = try second.makeScope(.session, name: "s", modules: [])
    defer {
      try? firstSession.close()
      try? secondSession.close()
    }
    for format in [GraphFormat.text, .dot, .mermaid] {
      #expect(firstSession.exportGraph(as: format) == secondSession.exportGraph(as: format))
    }
    let text = first.exportGraph(as: .text)
    #expect(text.split(separator: "\n").filter { $0.hasPrefix("  module ") }.count == 61)
    #expect(text.components(separatedBy: "module FeatureModule(7)\n").count == 2)
    #expect(text.contains("      ⇢ Mailer (deferred, missing)"))
  }
}
