import Strata
import StrataModules
import Testing

private final class Logger: Sendable {}
private struct OrderService: Sendable {
  let database: Database
  let mailer: Lazy<Mailer>
}
private struct Cart: Sendable { let database: Database }
private struct Greeting: Sendable { let text: String }

private enum LogChannel: Hashable, Sendable { case audit }

private struct CoreModule: Module {
  let runs: FactoryRuns
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton, dependsOn: []) { _ in
      runs.tick()
      return Database()
    }
    registry.register(Clock.self, lifetime: .singleton) { _ in
      runs.tick()
      return Clock()
    }
    registry.register(Logger.self, name: LogChannel.audit, lifetime: .weak, dependsOn: [.service(Clock.self)])
    { _ in
      runs.tick()
      return Logger()
    }
  }
}

private struct OrdersModule: Module {
  let runs: FactoryRuns
  var requires: [any Module] { [CoreModule(runs: runs)] }
  func register(in registry: Registrar) {
    registry.register(OrderService.self, lifetime: .singleton) { (database: Database, mailer: Lazy<Mailer>) in
      runs.tick()
      return OrderService(database: database, mailer: mailer)
    }
  }
}

private struct CheckoutModule: Module {
  let runs: FactoryRuns
  var requires: [any Module] { [OrdersModule(runs: runs)] }
  func register(in registry: Registrar) {
    registry.register(Cart.self, lifetime: .scoped(.session)) { (database: Database) in
      runs.tick()
      return Cart(database: database)
    }
    registry.register(Clock.self, lifetime: .singleton, dependsOn: []) { _ in
      runs.tick()
      return Clock()
    }.overriding()
  }
}

/// Two scopes, three modules, a named service, a registration outside modules, a deferred and a
/// missing dependency, an override and an unchecked closure factory.
private func makeApplication(runs: FactoryRuns) throws -> Scope {
  let container = try Container(modules: [OrdersModule(runs: runs)])
  try container.register { registry in
    registry.register(Greeting.self) { (_, text: String) in
      runs.tick()
      return Greeting(text: text)
    }
  }
  return try container.makeScope(.session, name: "s1", modules: [CheckoutModule(runs: runs)])
}

private struct FirstModule: Module {
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton, dependsOn: []) { _ in Database() }
  }
}

private struct SecondModule: Module {
  func register(in registry: Registrar) {
    registry.register(Cart.self, Cart.init)
  }
}

@Suite struct ExportTests {
  @Test func textTree() throws {
    let runs = FactoryRuns()
    let session = try makeApplication(runs: runs)

    #expect(
      session.exportGraph(as: .text) == """
        scope root
          module CoreModule
            Clock [singleton, unchecked]
            Database [singleton]
            Logger named .audit [weak]
              → Clock
          module OrdersModule
            OrderService [singleton]
              → Database
              ⇢ Mailer (deferred, missing)
          (no module)
            Greeting with arguments (String) [transient, unchecked]
        scope session("s1")
          module CheckoutModule
            Cart [scoped(.session)]
              → Database
            Clock [singleton, override]
        """)
    #expect(runs.value == 0)
  }

  @Test func graphvizDOT() throws {
    let runs = FactoryRuns()
    let session = try makeApplication(runs: runs)

    #expect(
      session.exportGraph(as: .dot) == #"""
        digraph Strata {
          rankdir=LR;
          node [shape=box];
          subgraph cluster_s0 {
            label="scope root";
            subgraph cluster_s0_m0 {
              label="CoreModule";
              n0 [label="Clock\nsingleton, unchecked"];
              n1 [label="Database\nsingleton"];
              n2 [label="Logger named .audit\nweak"];
            }
            subgraph cluster_s0_m1 {
              label="OrdersModule";
              n3 [label="OrderService\nsingleton"];
            }
            subgraph cluster_s0_m2 {
              label="(no module)";
              n4 [label="Greeting with arguments (String)\ntransient, unchecked"];
            }
          }
          subgraph cluster_s1 {
            label="scope session(\"s1\")";
            subgraph cluster_s1_m0 {
              label="CheckoutModule";
              n5 [label="Cart\nscoped(.session)"];
              n6 [label="Clock\nsingleton, override"];
            }
          }
          m0 [label="Mailer\nmissing", style=dashed];
          n2 -> n0;
          n3 -> n1;
          n3 -> m0 [style=dashed];
          n5 -> n1;
        }
        """#)
    #expect(runs.value == 0)
  }

  @Test func mermaid() throws {
    let runs = FactoryRuns()
    let session = try makeApplication(runs: runs)

    #expect(
      session.exportGraph(as: .mermaid) == """
        flowchart LR
          subgraph s0["scope root"]
            subgraph s0_m0["CoreModule"]
              n0["Clock<br/>singleton, unchecked"]
              n1["Database<br/>singleton"]
              n2["Logger named .audit<br/>weak"]
            end
            subgraph s0_m1["OrdersModule"]
              n3["OrderService<br/>singleton"]
            end
            subgraph s0_m2["(no module)"]
              n4["Greeting with arguments (String)<br/>transient, unchecked"]
            end
          end
          subgraph s1["scope session(#quot;s1#quot;)"]
            subgraph s1_m0["CheckoutModule"]
              n5["Cart<br/>scoped(.session)"]
              n6["Clock<br/>singleton, override"]
            end
          end
          m0["Mailer<br/>missing"]
          n2 --> n0
          n3 --> n1
          n3 -.-> m0
          n5 --> n1
        """)
    #expect(runs.value == 0)
  }

  @Test func theOrderModulesAreInstalledInDoesNotChangeTheOutput() throws {
    let forward = try Container(modules: [FirstModule(), SecondModule()])
    let backward = try Container(modules: [SecondModule(), FirstModule()])

    for format in [GraphFormat.text, .dot, .mermaid] {
      #expect(forward.exportGraph(as: format) == backward.exportGraph(as: format))
    }
    #expect(forward.exportGraph(as: .mermaid).contains("n1 --> n0"))
  }

  /// A quote in a scope tag and a line break in a name stay inside their label in every format.
  @Test func quotesAndLineBreaksInNamesAndTagsStayInsideTheirLabels() throws {
    let container = try Container { registry in
      registry.register(Clock.self, lifetime: .scoped(ScopeTag("we\"ird")), dependsOn: []) { _ in Clock() }
      registry.register(Mailer.self, name: "two\nlines", dependsOn: []) { _ in Mailer() }
    }
    let dot = container.exportGraph(as: .dot)
    #expect(dot.contains(#"scoped(.we\"ird)"#))
    let mermaid = container.exportGraph(as: .mermaid)
    #expect(mermaid.contains("two<br/>lines"))
    let text = container.exportGraph(as: .text)
    #expect(text.contains(#"two\nlines"#))
    for export in [dot, mermaid, text] {
      #expect(!export.contains("two\nlines"))
      #expect(!export.split(separator: "\n").contains { $0.hasPrefix("lines") })
    }
    // Every DOT line holds its quotes in pairs.
    for line in dot.split(separator: "\n") {
      let unescaped = line.replacing(#"\\"#, with: "").replacing(#"\""#, with: "")
      #expect(unescaped.filter { $0 == "\"" }.count % 2 == 0, "\(line)")
    }
  }

  /// Every line break Unicode knows (U+2028, U+2029, U+0085, vertical tab, form feed) stays
  /// inside its label, and a `#` in a Mermaid label is not read as the start of an entity.
  @Test func unicodeLineBreaksAndHashesStayInsideTheirLabels() throws {
    let breaks = ["\u{2028}", "\u{2029}", "\u{85}", "\u{0B}", "\u{0C}"]
    let container = try Container { registry in
      for (index, separator) in breaks.enumerated() {
        registry.register(Int.self, name: "first\(index)\(separator)second\(index)", dependsOn: []) { _ in
          index
        }
      }
      registry.register(Mailer.self, name: "#lt;tag#gt; #1", dependsOn: []) { _ in Mailer() }
    }
    let text = container.exportGraph(as: .text)
    let dot = container.exportGraph(as: .dot)
    let mermaid = container.exportGraph(as: .mermaid)
    for (index, _) in breaks.enumerated() {
      #expect(text.contains("first\(index)\\nsecond\(index)"), "text, break \(index)")
      #expect(dot.contains("first\(index)\\nsecond\(index)"), "dot, break \(index)")
      #expect(mermaid.contains("first\(index)<br/>second\(index)"), "mermaid, break \(index)")
    }
    for export in [text, dot, mermaid] {
      // Split as a viewer would, on every kind of line break: no line starts inside a name.
      let lines = export.split(whereSeparator: \.isNewline)
      #expect(!lines.contains { $0.hasPrefix("second") })
    }
    #expect(mermaid.contains("#35;lt;tag#35;gt; #35;1"))
    #expect(!mermaid.contains("#lt;tag"))
  }
}
