import Strata
import StrataModules
import Testing

// Names that mean something in DOT or Mermaid (arrows, braces, brackets, quotes, tags, comments,
// keywords) in service names, module parameters and scope names: every line of the export keeps
// the shape of its kind, so the file stays valid, and every name is still there.

private let oddNames = [
  #"a"b"#, "x --> y", "}{", "<b>bold</b>", #"back\slash"#, "end", "🧪 ünï", "%%comment", "`tick`",
  "a]b[c", "semi;colon", "pipe|bar", "-.->",
]

/// A module whose identity carries an odd name; registers a `Clock` named after it that depends
/// on the `Mailer` of the same name, which nobody registers.
private struct OddModule: Module {
  let name: String
  var moduleID: ModuleID { ModuleID(Self.self, name) }
  func register(in registry: Registrar) {
    registry.register(Clock.self, name: name, dependsOn: [.service(Mailer.self, name: name)]) { _ in Clock() }
  }
}

@Suite struct OddNameExportTests {
  private func graph() throws -> Scope {
    let container = try Container(modules: oddNames.map { OddModule(name: $0) })
    return try container.makeScope(.session, name: #"s"]--> end }"#)
  }

  @Test func everyMermaidLineKeepsItsShape() throws {
    let mermaid = try graph().exportGraph(as: .mermaid)
    let shapes = try [
      #"flowchart LR| *end"#, #" *subgraph s\d+(_m\d+)?\["[^"]*"\]"#, #" *[nm]\d+\["[^"]*"\]"#,
      #" *[nm]\d+ (-->|-\.->) [nm]\d+"#,
    ].map { try Regex($0) }
    let lines = mermaid.split(separator: "\n")
    for line in lines {
      #expect(shapes.contains { (try? $0.wholeMatch(in: line)) != nil }, "\(line)")
      // Inside labels, the only tag is Mermaid's line break.
      #expect(!line.replacing("<br/>", with: "").contains("<"), "\(line)")
    }
    #expect(lines.filter { $0.contains(" --> ") }.count == oddNames.count)
    #expect(mermaid.contains("🧪 ünï"))
  }

  @Test func everyDOTLineKeepsItsShape() throws {
    let dot = try graph().exportGraph(as: .dot)
    let string = #""(?:[^"\\]|\\.)*""#
    let shapes = [
      try Regex(#"digraph Strata \{|  rankdir=LR;|  node \[shape=box\];| *\}"#),
      try Regex(#" *subgraph cluster_s\d+(_m\d+)? \{"#),
      try Regex(#" *label=\#(string);"#),
      try Regex(#" *[nm]\d+ \[label=\#(string)(, style=dashed)?\];"#),
      try Regex(#"  [nm]\d+ -> [nm]\d+( \[style=dashed\])?;"#),
    ]
    let lines = dot.split(separator: "\n")
    for line in lines {
      #expect(shapes.contains { (try? $0.wholeMatch(in: line)) != nil }, "\(line)")
    }
    #expect(lines.filter { $0.contains(" -> ") }.count == oddNames.count)
    #expect(dot.contains(#"back\\slash"#))
  }

  @Test func theTextTreeKeepsOneLinePerEntry() throws {
    let text = try graph().exportGraph(as: .text)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    // root, a module line, a service line and an edge line per module; then the session.
    #expect(lines.count == 1 + oddNames.count * 3 + 1)
    #expect(lines.last == #"scope session("s"]--> end }")"#)
    #expect(lines.contains(#"    Clock named "x --> y" [transient]"#))
  }
}
