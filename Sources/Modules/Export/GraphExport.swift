import Strata

/// Renders a ``GraphModel`` as a text tree, Graphviz DOT or Mermaid, in a deterministic order.
struct GraphExport {
  /// A scope of the chain with its modules, in output order.
  struct ScopeGroup {
    let title: String
    let modules: [(name: String, nodes: [Int])]
  }

  /// A dependency edge between output ids.
  struct Edge {
    let from: String
    let to: String
    let isDeferred: Bool
  }

  let graph: GraphModel
  let scopes: [ScopeGroup]
  /// The output id of each node: `n0`, `n1`, … in output order.
  let ids: [Int: String]
  let edges: [Edge]
  /// Keys nobody registers, with their output ids (`m0`, …), in order of first mention.
  let missing: [(id: String, key: ServiceKey)]

  static let noModule = "(no module)"

  init(graph: GraphModel) {
    self.graph = graph
    var scopes: [ScopeGroup] = []
    var ids: [Int: String] = [:]
    for position in 0..<graph.existingCount {
      let nodes = graph.nodes.indices.filter { graph.nodes[$0].position == position }
      // By module identity: two modules that read alike are two clusters.
      let byModule = Dictionary(grouping: nodes) { graph.nodes[$0].registration.moduleAttribution }
      // Two modules that read alike are told apart by what they register, sorted, before their
      // order of registration: that order changes when the application lists them in another
      // order, and changed the output with it.
      let contents = byModule.mapValues { members in
        members.map { "\(graph.nodes[$0].registration.key) [\(graph.nodes[$0].registration.lifetime)]" }
          .sorted()
      }
      func precedes(_ lhs: ModuleAttribution?, _ rhs: ModuleAttribution?) -> Bool {
        let (left, right) = ((lhs == nil ? 1 : 0, lhs?.name ?? ""), (rhs == nil ? 1 : 0, rhs?.name ?? ""))
        if left != right { return left < right }
        let (leftContents, rightContents) = (contents[lhs] ?? [], contents[rhs] ?? [])
        if leftContents != rightContents { return leftContents.lexicographicallyPrecedes(rightContents) }
        return (byModule[lhs]?.min() ?? 0) < (byModule[rhs]?.min() ?? 0)
      }
      let modules = byModule.keys.sorted(by: precedes)
        .map { module in
          // Sorted by key; registrations of one key keep their registration order.
          (
            module?.name ?? Self.noModule,
            (byModule[module] ?? []).sorted {
              (graph.nodes[$0].registration.key.description, $0) < (
                graph.nodes[$1].registration.key.description, $1
              )
            }
          )
        }
      for (_, members) in modules {
        for node in members { ids[node] = "n\(ids.count)" }
      }
      scopes.append(ScopeGroup(title: graph.scopeTitles[position], modules: modules))
    }
    var edges: [Edge] = []
    var missing: [(id: String, key: ServiceKey)] = []
    var missingIDs: [ServiceKey: String] = [:]
    for group in scopes {
      for (_, members) in group.modules {
        for node in members {
          let position = graph.resolvingPosition(of: graph.nodes[node])
          for edge in graph.nodes[node].edges ?? [] {
            let target: String
            if let found = graph.target(of: edge, from: node, at: position), let id = ids[found] {
              target = id
            } else if let known = missingIDs[edge.key] {
              target = known
            } else {
              target = "m\(missing.count)"
              missing.append((target, edge.key))
              missingIDs[edge.key] = target
            }
            edges.append(Edge(from: ids[node] ?? "", to: target, isDeferred: edge.isDeferred))
          }
        }
      }
    }
    self.scopes = scopes
    self.ids = ids
    self.edges = edges
    self.missing = missing
  }

  /// `singleton`, `scoped(.request), override`, `transient, unchecked`.
  private func details(of node: Int) -> String {
    let registration = graph.nodes[node].registration
    var parts = ["\(registration.lifetime)"]
    if registration.isOverride { parts.append("override") }
    if graph.nodes[node].edges == nil { parts.append("unchecked") }
    return parts.joined(separator: ", ")
  }

  // MARK: Text

  func text() -> String {
    var lines: [String] = []
    for group in scopes {
      lines.append("scope \(group.title)")
      for (name, members) in group.modules {
        lines.append(name == Self.noModule ? "  \(name)" : "  module \(name)")
        for node in members {
          lines.append("    \(graph.nodes[node].registration.key) [\(details(of: node))]")
          let position = graph.resolvingPosition(of: graph.nodes[node])
          for edge in graph.nodes[node].edges ?? [] {
            let arrow = edge.isDeferred ? "⇢" : "→"
            var notes: [String] = []
            if edge.isDeferred { notes.append("deferred") }
            if graph.target(of: edge, from: node, at: position) == nil { notes.append("missing") }
            let note = notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")"
            lines.append("      \(arrow) \(edge.key)\(note)")
          }
        }
      }
    }
    // A line break inside a name (any of Unicode's: U+2028 and U+0085 too) would start a line of
    // its own and break the tree.
    return lines.map { line in
      line.contains(where: \.isNewline)
        ? String(line.flatMap { $0.isNewline ? ["\\", "n"] : [$0] }) : line
    }
    .joined(separator: "\n")
  }

  // MARK: DOT

  func dot() -> String {
    var lines = ["digraph Strata {", "  rankdir=LR;", "  node [shape=box];"]
    for (scopeIndex, group) in scopes.enumerated() {
      lines.append("  subgraph cluster_s\(scopeIndex) {")
      lines.append("    label=\"scope \(Self.dotEscaped(group.title))\";")
      for (moduleIndex, (name, members)) in group.modules.enumerated() {
        lines.append("    subgraph cluster_s\(scopeIndex)_m\(moduleIndex) {")
        lines.append("      label=\"\(Self.dotEscaped(name))\";")
        for node in members {
          let key = Self.dotEscaped("\(graph.nodes[node].registration.key)")
          lines.append("      \(ids[node] ?? "") [label=\"\(key)\\n\(Self.dotEscaped(details(of: node)))\"];")
        }
        lines.append("    }")
      }
      lines.append("  }")
    }
    for (id, key) in missing {
      lines.append("  \(id) [label=\"\(Self.dotEscaped("\(key)"))\\nmissing\", style=dashed];")
    }
    for edge in edges {
      lines.append("  \(edge.from) -> \(edge.to)\(edge.isDeferred ? " [style=dashed]" : "");")
    }
    lines.append("}")
    return lines.joined(separator: "\n")
  }

  /// `text` inside a DOT string: quotes and backslashes escaped.
  ///
  /// Read by Unicode scalar, as DOT's parser reads it: a quote followed by a combining mark is one
  /// `Character` in Swift, but still a quote that would end the string.
  private static func dotEscaped(_ text: String) -> String {
    escaped(text, newline: "\\n") { scalar in
      switch scalar {
      case "\"": "\\\""
      case "\\": "\\\\"
      default: nil
      }
    }
  }

  /// `text` with each Unicode scalar that `replacement` names replaced, and each line break (any of
  /// Unicode's; CR LF as one) replaced by `newline`, so that a name stays one statement.
  private static func escaped(
    _ text: String, newline: String, _ replacement: (Unicode.Scalar) -> String?
  ) -> String {
    var result = ""
    var previous: Unicode.Scalar?
    for scalar in text.unicodeScalars {
      defer { previous = scalar }
      if let replaced = replacement(scalar) {
        result += replaced
      } else if isLineBreak(scalar) {
        if scalar == "\n", previous == "\r" { continue }
        result += newline
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// Whether `scalar` breaks a line (what `Character.isNewline` accepts, by scalar).
  private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
    default: false
    }
  }

  // MARK: Mermaid

  func mermaid() -> String {
    var lines = ["flowchart LR"]
    for (scopeIndex, group) in scopes.enumerated() {
      lines.append("  subgraph s\(scopeIndex)[\"scope \(Self.mermaidEscaped(group.title))\"]")
      for (moduleIndex, (name, members)) in group.modules.enumerated() {
        lines.append("    subgraph s\(scopeIndex)_m\(moduleIndex)[\"\(Self.mermaidEscaped(name))\"]")
        for node in members {
          let key = Self.mermaidEscaped("\(graph.nodes[node].registration.key)")
          lines.append("      \(ids[node] ?? "")[\"\(key)<br/>\(Self.mermaidEscaped(details(of: node)))\"]")
        }
        lines.append("    end")
      }
      lines.append("  end")
    }
    for (id, key) in missing {
      lines.append("  \(id)[\"\(Self.mermaidEscaped("\(key)"))<br/>missing\"]")
    }
    for edge in edges {
      lines.append("  \(edge.from) \(edge.isDeferred ? "-.->" : "-->") \(edge.to)")
    }
    return lines.joined(separator: "\n")
  }

  /// `text` inside a Mermaid label: quotes, angle brackets and `#` (which starts an entity) as
  /// entities, read by Unicode scalar (see `dotEscaped`); a line break is Mermaid's `<br/>`.
  private static func mermaidEscaped(_ text: String) -> String {
    escaped(text, newline: "<br/>") { scalar in
      switch scalar {
      case "\"": "#quot;"
      case "<": "#lt;"
      case ">": "#gt;"
      case "#": "#35;"
      default: nil
      }
    }
  }
}
