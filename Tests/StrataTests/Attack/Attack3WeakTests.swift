import Strata
import Testing

/// A weak service that says which registration made it.
private final class Cached: Sendable {
  let label: String
  init(label: String) { self.label = label }
}

/// The `weak` lifetime overridden in a child scope: two registrations of one key, each with its
/// own weak instance, made again and again as holders drop them on several threads.
@Suite struct Attack3WeakTests {
  /// The container and a session each register `Cached` as `weak`. Four threads resolve it, two
  /// from requests of the session and two from the container, holding each instance while they
  /// resolve again, then dropping it so that it is made again: a resolve while holding gives the
  /// instance held; every instance carries its own registration's label (no instance crosses
  /// between the two registrations); and each registration's factory ran at most once per
  /// resolve that did not hold an instance.
  @Test func weakOverridesAreRemadeIndependentlyWhileThreadsDropThem() async throws {
    let containerMade = Counter()
    let sessionMade = Counter()
    let container = try Container { registry in
      registry.register(Cached.self, lifetime: .weak) { _ in
        containerMade.increment()
        return Cached(label: "container")
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Cached.self, lifetime: .weak) { _ in
        sessionMade.increment()
        return Cached(label: "session")
      }
    }
    let problems = Collector<String>()

    let finished = await runOnThreads(4) { thread in
      let fromSession = thread < 2
      let expected = fromSession ? "session" : "container"
      for _ in 0..<1_000 {
        do {
          let scope: Scope = fromSession ? try session.makeScope(.request) : container
          let held = try scope.resolve(Cached.self)
          let again = try scope.resolve(Cached.self)
          if held !== again { problems.append("two \(expected) instances while one was held") }
          if held.label != expected { problems.append("\(expected) resolve got \(held.label)") }
          if fromSession { try closeSynchronously(scope) }
        } catch {
          problems.append("\(error)")
        }
      }
    }

    #expect(finished, "deadlock")
    #expect(problems.elements.isEmpty, "\(Set(problems.elements).prefix(3))")
    #expect(containerMade.value >= 1 && containerMade.value <= 2_000)
    #expect(sessionMade.value >= 1 && sessionMade.value <= 2_000)
    let held = try session.resolve(Cached.self)
    #expect(try container.resolve(Cached.self).label == "container")
    #expect(try session.makeScope(.request).resolve(Cached.self) === held)
    try await container.close()
  }

  /// A weak instance held past its session's close: the session refuses to resolve it (a
  /// `scopeClosed` error), the instance stays alive in the holder's hands (`weak` is disposed by
  /// its holder, not by the scope), and the container's own registration is unaffected.
  @Test func aWeakInstanceHeldPastItsSessionsCloseStaysWithItsHolder() async throws {
    let container = try Container { registry in
      registry.register(Cached.self, lifetime: .weak) { _ in Cached(label: "container") }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Cached.self, lifetime: .weak) { _ in Cached(label: "session") }
    }
    let held = try session.resolve(Cached.self)

    try await session.close()

    let error = resolutionError { _ = try session.resolve(Cached.self) }
    #expect(error?.code == .scopeClosed)
    #expect(held.label == "session")
    #expect(try container.resolve(Cached.self).label == "container")
    try await container.close()
  }
}
