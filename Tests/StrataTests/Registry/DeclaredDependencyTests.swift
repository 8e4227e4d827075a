import Foundation
import Strata
import Synchronization
import Testing

/// What a closure factory declares with `dependsOn:` is kept per batch, in shared fixed-size
/// storage rather than as the caller's array: every registration must still read back exactly its
/// own list, in order, across storage boundaries, batches and scopes, and while other threads read.
@Suite struct DeclaredDependencyTests {
  /// The declaration of the service named `number`: one to three dependencies, some deferred.
  static func declaration(of number: Int) -> [ServiceDependency] {
    (0...(number % 3)).map { offset in
      offset == 1 ? .deferred(Widget.self) : .service(Widget.self, name: number * 10 + offset)
    }
  }

  static func edges(_ scope: Scope, name: Int) -> [String]? {
    scope.registrations.last { $0.key.nameDescription == "\(name)" }?.edges?.map(\.description)
  }

  @Test func everyRegistrationReadsBackExactlyItsOwnListPastOneStore() throws {
    // About 1,200 declared dependencies: past the first fixed-size store in one batch.
    let container = try Container { registry in
      for number in 0..<600 {
        registry.register(Widget.self, name: number, dependsOn: Self.declaration(of: number)) { _ in
          Widget(id: number)
        }
      }
    }
    let byName = Dictionary(
      uniqueKeysWithValues: container.registrations.map { ($0.key.nameDescription, $0.edges) })
    #expect(byName.count == 600)
    let wrong = (0..<600).filter { byName["\($0)"] != Self.declaration(of: $0) }
    #expect(wrong == [])
  }

  @Test func aListLongerThanOneStoreIsKeptWholeBetweenShortOnes() throws {
    let long = (0..<5_000).map { ServiceDependency.service(Widget.self, name: -$0 - 1) }
    let container = try Container { registry in
      registry.register(Widget.self, name: 1, dependsOn: [.service(Widget.self, name: 2)]) { _ in
        Widget(id: 1)
      }
      registry.register(Widget.self, name: 2, dependsOn: long) { _ in Widget(id: 2) }
      registry.register(Widget.self, name: 3, dependsOn: [.deferred(Widget.self)]) { _ in Widget(id: 3) }
      registry.register(Widget.self, name: 4, dependsOn: []) { _ in Widget(id: 4) }
    }
    let edges = container.registrations.map(\.edges)
    #expect(edges.count == 4)
    #expect(edges[0] == [.service(Widget.self, name: 2)])
    #expect(edges[1] == long)
    #expect(edges[2] == [.deferred(Widget.self)])
    // An empty declaration is a declaration (checked, no edges), not an unchecked factory.
    #expect(edges[3] == [])
  }

  @Test func batchesAndScopesKeepTheirOwnDeclarations() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: 1, dependsOn: Self.declaration(of: 2)) { _ in Widget(id: 1) }
    }
    try container.register { registry in
      registry.register(Widget.self, name: 2, dependsOn: Self.declaration(of: 4)) { _ in Widget(id: 2) }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Widget.self, name: 1, dependsOn: Self.declaration(of: 3)) { _ in Widget(id: 11) }
    }

    #expect(Self.edges(container, name: 1) == Self.declaration(of: 2).map(\.description))
    #expect(Self.edges(container, name: 2) == Self.declaration(of: 4).map(\.description))
    #expect(Self.edges(session, name: 1) == Self.declaration(of: 3).map(\.description))
    try session.close()
  }

  @Test func aDeclarationMadeAfterPublishingChangesNothingPublished() throws {
    final class Escaped: @unchecked Sendable { var registrar: Registrar? }  // one thread only
    let escaped = Escaped()
    let container = try Container { registry in
      registry.register(Widget.self, name: 1, dependsOn: Self.declaration(of: 2)) { _ in Widget(id: 1) }
      escaped.registrar = registry
    }
    let late = (0..<2_000).map { ServiceDependency.service(Widget.self, name: $0) }
    try #require(escaped.registrar).register(Widget.self, name: 2, dependsOn: late) { _ in Widget(id: 2) }

    #expect(Self.edges(container, name: 1) == Self.declaration(of: 2).map(\.description))
    let error = try #require(resolutionError { _ = try container.resolve(Widget.self, name: 2) })
    #expect(error.code == .invalidRegistration)
  }

  /// Readers on two threads read published declarations while this thread keeps publishing new
  /// batches with declarations of their own (run under the thread sanitizer in CI's TSan step).
  @Test func declarationsReadWhileOtherBatchesArePublishedStayExact() async throws {
    let container = try Container { registry in
      for number in 0..<100 {
        registry.register(Widget.self, name: number, dependsOn: Self.declaration(of: number)) { _ in
          Widget(id: number)
        }
      }
    }
    let rounds = 12
    let started = DispatchSemaphore(value: 0)
    let mismatches = MismatchCount()
    let threads = (0..<2).map { _ in
      Thread {
        started.signal()
        for _ in 0..<rounds {
          for registration in container.registrations {
            guard let name = Int(registration.key.nameDescription ?? "") else { continue }
            if name < 100, registration.edges != Self.declaration(of: name) {
              mismatches.count.add(1, ordering: .relaxed)
            }
          }
        }
      }
    }
    for thread in threads { thread.start() }
    for _ in threads { started.wait() }
    for round in 0..<rounds {
      try container.register { registry in
        for number in 0..<10 {
          let name = 1_000 + round * 10 + number
          registry.register(Widget.self, name: name, dependsOn: Self.declaration(of: name)) { _ in
            Widget(id: name)
          }
        }
      }
    }
    while threads.contains(where: { !$0.isFinished }) { try await Task.sleep(for: .milliseconds(5)) }
    #expect(mismatches.count.load(ordering: .relaxed) == 0)
    for round in [0, rounds - 1] {
      let name = 1_000 + round * 10 + 7
      #expect(Self.edges(container, name: name) == Self.declaration(of: name).map(\.description))
    }
  }

  /// Four threads each make 10 session scopes whose registrars declare 10 lists apiece, while
  /// the other threads do the same: every scope reads back exactly its own declarations (each
  /// registrar has chunks of its own; run under the thread sanitizer in CI's TSan step).
  @Test func scopesRegisteringOnSeveralThreadsAtOnceKeepTheirOwnDeclarations() async throws {
    let container = Container()
    let mismatches = MismatchCount()
    let start = DispatchSemaphore(value: 0)
    let threads = (0..<4).map { thread in
      Thread {
        start.wait()
        for round in 0..<10 {
          let base = (thread * 10 + round) * 100
          guard
            let session = try? container.makeScope(
              .session,
              { registry in
                for number in base..<base + 10 {
                  registry.register(Widget.self, name: number, dependsOn: Self.declaration(of: number)) { _ in
                    Widget(id: number)
                  }
                }
              })
          else {
            mismatches.count.add(1, ordering: .relaxed)
            continue
          }
          let edges = Dictionary(
            uniqueKeysWithValues: session.registrations.map { ($0.key.nameDescription, $0.edges) })
          for number in base..<base + 10 where edges["\(number)"] != Self.declaration(of: number) {
            mismatches.count.add(1, ordering: .relaxed)
          }
          try? session.close()
        }
      }
    }
    for thread in threads { thread.start() }
    for _ in threads { start.signal() }
    while threads.contains(where: { !$0.isFinished }) { try await Task.sleep(for: .milliseconds(5)) }
    #expect(mismatches.count.load(ordering: .relaxed) == 0)
  }

  final class MismatchCount: Sendable {
    let count = Atomic<Int>(0)
  }
}
