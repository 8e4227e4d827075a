public import Strata

/// A text format for ``Strata/Scope/exportGraph(as:)``.
///
/// ```swift
/// try container.exportGraph(as: .dot).write(toFile: "graph.dot", atomically: true, encoding: .utf8)
/// ```
public enum GraphFormat: Sendable {
  /// An indented tree: scopes, modules, services with their lifetimes, and their dependencies.
  case text
  /// Graphviz DOT: scopes and modules as clusters; deferred dependencies dashed.
  case dot
  /// A Mermaid flowchart: scopes and modules as subgraphs; deferred dependencies dotted.
  case mermaid
}

extension Scope {
  /// The registrations visible from this scope and their dependencies, as text, without making
  /// any instance.
  ///
  /// ```swift
  /// print(container.exportGraph(as: .mermaid))
  /// ```
  ///
  /// Services show their key (type, name and runtime arguments), lifetime (with its scope tag) and
  /// module, grouped by the scope holding them and then by module. Each dependency points at the
  /// registration a resolve would find; one nobody registers points at a node marked missing. The
  /// output is deterministic: scopes root first, modules and services sorted by name (modules
  /// whose names read alike, by what they register).
  ///
  /// - Parameter format: ``GraphFormat/text``, ``GraphFormat/dot`` or ``GraphFormat/mermaid``.
  /// - Returns: The graph in that format.
  public func exportGraph(as format: GraphFormat = .text) -> String {
    let export = GraphExport(graph: GraphModel(scope: self, expecting: []))
    return switch format {
    case .text: export.text()
    case .dot: export.dot()
    case .mermaid: export.mermaid()
    }
  }
}
