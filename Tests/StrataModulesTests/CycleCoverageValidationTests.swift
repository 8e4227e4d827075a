import Strata
import StrataModules
import Testing

// Two cycles that share an edge: `A → B → D → A` and `A → C → D → A`. A depth-first search meets
// the second one only as an edge into a service it has finished (`C → D`), not as an edge back.

private enum A {}
private enum B {}
private enum C {}
private enum D {}
private enum Z {}
private struct Node<Tag>: Sendable {}

private func register<Tag>(_: Tag.Type, dependsOn dependencies: [ServiceDependency], in registry: Registrar) {
  registry.register(Node<Tag>.self, dependsOn: dependencies) { _ in Node<Tag>() }
}

@Suite struct CycleCoverageValidationTests {
  /// The services on the reported cycles.
  private func servicesOnCycles(registeringCFirst: Bool) throws -> Set<String> {
    let container = try Container { registry in
      let c = { register(C.self, dependsOn: [.service(Node<D>.self)], in: registry) }
      if registeringCFirst { c() }
      register(A.self, dependsOn: [.service(Node<B>.self), .service(Node<C>.self)], in: registry)
      register(B.self, dependsOn: [.service(Node<D>.self)], in: registry)
      if !registeringCFirst { c() }
      register(D.self, dependsOn: [.service(Node<A>.self)], in: registry)
    }
    let problems = container.validationReport().problems
    #expect(problems.allSatisfy { $0.code == .cycle })
    return Set(problems.flatMap { $0.path.map(\.description) })
  }

  @Test func everyServiceOnACycleIsOnAReportedCycle() throws {
    let expected: Set = ["Node<A>", "Node<B>", "Node<C>", "Node<D>"]
    #expect(try servicesOnCycles(registeringCFirst: false) == expected)
    #expect(try servicesOnCycles(registeringCFirst: true) == expected)
  }

  /// `Z → B`, `B → C → B`, `B → A → C`: the search enters the cycles at `B`, and meets `A → C`
  /// after it finished `C`; `A`, first of its component, is on a cycle through `C` and `B`.
  @Test func aServiceTheSearchMeetsOnlyAfterItsCycleIsFinishedIsOnAReportedCycle() throws {
    let container = try Container { registry in
      register(Z.self, dependsOn: [.service(Node<B>.self)], in: registry)
      register(A.self, dependsOn: [.service(Node<C>.self)], in: registry)
      register(B.self, dependsOn: [.service(Node<C>.self), .service(Node<A>.self)], in: registry)
      register(C.self, dependsOn: [.service(Node<B>.self)], in: registry)
    }
    let problems = container.validationReport().problems
    #expect(problems.map(\.code) == [.cycle, .cycle])
    #expect(
      problems.map { $0.path.map(\.description) } == [
        ["Node<B>", "Node<C>", "Node<B>"], ["Node<A>", "Node<C>", "Node<B>", "Node<A>"],
      ])
  }
}
