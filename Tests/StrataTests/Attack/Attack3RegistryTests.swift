import Strata
import Testing

/// Which scope's registration a resolve found.
private struct Source: Sendable, Equatable {
  let label: String
}

/// One edition of a batch, by the round that published it.
private struct EditionA: Sendable { let round: Int }
private struct EditionB: Sendable { let round: Int }
private struct EditionC: Sendable { let round: Int }

/// What one resolve read of several editions, in one factory run.
private struct Reading: Sendable {
  let container: Int
  let session: Int
  let sessionPair: Int
}

/// Registering into live scopes while other threads resolve: a factory that registers an override
/// and resolves it, batches published into several scopes of one tree at once, scopes made before
/// their ancestors got registrations, and registrations into closed (or closing) scopes.
@Suite struct Attack3RegistryTests {
  /// A factory running in a request registers an override in the request's session and then
  /// resolves the key through its resolver. The session's batch was published by this thread
  /// during the resolve, so the resolve sees it ("A factory that registers something itself sees
  /// it at once", Getting Started; `Scope.publishedRegistry(asOf:)`). Here the session had
  /// registrations of its own before, so the request's skip link names it.
  @Test func aFactoryOverridingInItsNonEmptySessionSeesTheOverrideFromTheRequest() throws {
    let seen = try Self.factoryOverride(sessionHadRegistrations: true)
    #expect(
      seen.fromFactory == "session", "the factory's resolve missed the override its own thread published")
    #expect(seen.afterwards == "session")
  }

  /// The same with a session that had no registrations: the request's skip link, cached for the
  /// resolve's version, names the container, which has the key too. The factory's resolve found
  /// the container's registration and never looked at the session's new snapshot (the walk of
  /// every scope, `findInEveryScope`, ran only after a miss), while `resolveAll` and the next
  /// top-level resolve saw the override. A lookup now walks every scope whenever something was
  /// published since its resolve began.
  @Test func aFactoryOverridingInItsEmptySessionSeesTheOverrideFromTheRequest() throws {
    let seen = try Self.factoryOverride(sessionHadRegistrations: false)
    #expect(
      seen.fromFactory == "session", "the factory's resolve missed the override its own thread published")
    #expect(seen.afterwards == "session")
    // `resolveAll` in the same factory walks every scope, and does see the override.
    #expect(seen.allFromFactory == ["container", "session"])
  }

  /// The same from a request with registrations of its own (none for the key): the lookup goes on
  /// from the request's parent, through the session's skip link, which names the container too.
  @Test func aFactoryOverridingInItsEmptySessionSeesTheOverrideFromARequestWithRegistrations() throws {
    let seen = try Self.factoryOverride(sessionHadRegistrations: false, requestHasRegistrations: true)
    #expect(
      seen.fromFactory == "session", "the factory's resolve missed the override its own thread published")
    #expect(seen.afterwards == "session")
  }

  /// Runs the factory-override scenario; what the factory's resolve and the next top-level
  /// resolve from the request found.
  private static func factoryOverride(
    sessionHadRegistrations: Bool, requestHasRegistrations: Bool = false
  ) throws -> (fromFactory: String, allFromFactory: [String], afterwards: String) {
    let container = try Container { registry in
      registry.register(instance: Source(label: "container"))
    }
    let session = try container.makeScope(.session) { registry in
      if sessionHadRegistrations { registry.register(instance: EditionA(round: 0)) }
    }
    let request = try session.makeScope(.request) { registry in
      if requestHasRegistrations { registry.register(instance: EditionB(round: 0)) }
    }
    let fromFactory = Slot<String>()
    let allFromFactory = Slot<[String]>()
    try container.register { registry in
      registry.register(Reading.self) { resolver in
        try session.register { registry in registry.register(instance: Source(label: "session")) }
        fromFactory.value = try resolver.resolve(Source.self).label
        allFromFactory.value = try resolver.resolveAll(Source.self).map(\.label)
        return Reading(container: 0, session: 0, sessionPair: 0)
      }
    }

    _ = try request.resolve(Reading.self)

    let afterwards = try request.resolve(Source.self).label
    #expect(try container.resolve(Source.self) == Source(label: "container"))
    try container.close()
    return (fromFactory.value ?? "nothing", allFromFactory.value ?? [], afterwards)
  }

  /// A factory of each shared lifetime (and a transient's) registers a new key into the scope
  /// that owns its instance and resolves it at once: no deadlock on the scope's locks or on the
  /// creation guard the factory runs under, and the resolve finds the key.
  @Test(arguments: [Lifetime.transient, .singleton, .weak, .scoped(.request), .graph])
  func aFactoryRegisteringIntoItsOwnScopeFindsTheKeyWithoutDeadlock(lifetime: Lifetime) async throws {
    final class Made: Sendable {
      let found: String
      init(found: String) { self.found = found }
    }
    let container = try Container { registry in
      registry.register(Made.self, lifetime: lifetime) { resolver in
        let scope = lifetime == .singleton || lifetime == .weak ? Scope.current : resolver.currentScope
        try scope?.register { registry in registry.register(instance: Source(label: "late")) }
        return Made(found: try resolver.resolve(Source.self).label)
      }
    }
    let request = try container.makeScope(.request)

    let found = await withDeadline { (try? request.resolve(Made.self))?.found }

    #expect(found == .some("late"), "\(lifetime)")
    try await container.close()
  }

  /// One thread publishes, round after round, an edition into the container and then one (two
  /// keys) into the session; resolves from a request below read the session's keys first and the
  /// container's last, in one factory run. One resolve reads one registry version: it never sees
  /// half of the session's batch, and never a session edition newer than the container edition
  /// published before it.
  @Test func resolvesAcrossTwoScopesSeeBatchesInTheOrderTheyWerePublished() async throws {
    let container = try Container { registry in
      registry.register(instance: EditionA(round: 0))
      registry.register(Reading.self) { resolver in
        let sessionEdition = try resolver.resolve(EditionB.self).round
        let pair = try resolver.resolve(EditionC.self).round
        let containerEdition = try resolver.resolve(EditionA.self).round
        return Reading(container: containerEdition, session: sessionEdition, sessionPair: pair)
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(instance: EditionB(round: 0))
      registry.register(instance: EditionC(round: 0))
    }
    let requests = try (0..<2).map { _ in try session.makeScope(.request) }
    let problems = Collector<String>()
    let done = Flag()

    let finished = await runOnThreads(3) { index in
      guard index < 2 else {
        for round in 1...400 {
          try? container.register { registry in registry.register(instance: EditionA(round: round)) }
          try? session.register { registry in
            registry.register(instance: EditionB(round: round))
            registry.register(instance: EditionC(round: round))
          }
        }
        done.raise()
        return
      }
      var reads = 0
      while !done.isRaised || reads < 100 {
        reads += 1
        do {
          let reading = try requests[index].resolve(Reading.self)
          if reading.session != reading.sessionPair {
            problems.append("half a batch: B \(reading.session), C \(reading.sessionPair)")
          }
          if reading.session > reading.container {
            problems.append("session edition \(reading.session) with container edition \(reading.container)")
          }
        } catch {
          problems.append("\(error)")
        }
      }
    }

    #expect(finished, "deadlock")
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
    let last = try requests[0].resolve(Reading.self)
    #expect(last.container == 400 && last.session == 400 && last.sessionPair == 400)
    try await container.close()
  }

  /// A chain of four empty scopes below the container, all made (and resolved from, so that their
  /// skip links are cached) before the second one gets its first registrations from another
  /// thread. Once that thread has published and met the readers at a barrier, their very next
  /// resolve from the deepest scope sees the new registration; scopes above it do not.
  @Test func readersMeetingAPublisherSeeItsFirstRegistrationsInAnEmptyAncestorAtOnce() async throws {
    let problems = Collector<String>()
    for round in 0..<60 {
      let container = try Container { registry in registry.register(instance: Source(label: "container")) }
      let first = try container.makeScope(.session)
      let second = try first.makeScope(.session)
      let third = try second.makeScope(.request)
      let fourth = try third.makeScope(.request)
      let published = Barrier(parties: 3)
      let finished = await runOnThreads(3) { index in
        if index == 2 {
          do {
            try second.register { registry in registry.register(instance: Source(label: "second")) }
          } catch {
            problems.append("round \(round): the publish threw \(error)")
          }
          published.arriveAndWait()
          return
        }
        for _ in 0..<50 { _ = try? fourth.resolve(Source.self) }
        guard published.arriveAndWait() else {
          problems.append("round \(round): barrier timed out")
          return
        }
        let deepest = try? (index == 0 ? fourth : third).resolve(Source.self)
        if deepest != Source(label: "second") {
          problems.append(
            "round \(round): thread \(index) read \(String(describing: deepest)) after the publish")
        }
      }
      #expect(finished, "deadlock")
      #expect(try first.resolve(Source.self) == Source(label: "container"))
      #expect(try container.resolve(Source.self) == Source(label: "container"))
      try await container.close()
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
  }

  /// Requests made under an empty session at the moment another thread gives the session its
  /// first registration: once both threads are past the barrier, a resolve from every request
  /// (made before, during or after the publish) finds the session's registration.
  @Test func requestsMadeWhileTheirSessionGetsItsFirstRegistrationsSeeThem() async throws {
    let problems = Collector<String>()
    for round in 0..<100 {
      let container = try Container { registry in registry.register(instance: Source(label: "container")) }
      let session = try container.makeScope(.session)
      let start = Barrier(parties: 2)
      let done = Barrier(parties: 2)
      let made = Collector<Scope>()
      let finished = await runOnThreads(2) { index in
        start.arriveAndWait()
        if index == 0 {
          try? session.register { registry in registry.register(instance: Source(label: "session")) }
        } else {
          for _ in 0..<4 {
            if let request = try? session.makeScope(.request) {
              _ = try? request.resolve(Source.self)
              made.append(request)
            }
          }
        }
        done.arriveAndWait()
        for request in made.elements where (try? request.resolve(Source.self)) != Source(label: "session") {
          problems.append("round \(round): thread \(index) missed the session's registration")
        }
      }
      #expect(finished, "deadlock")
      #expect(made.elements.count == 4)
      try await container.close()
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
  }

  /// Four threads, each publishing 150 editions of an override into its own session while
  /// reading its own request, its neighbour's request and the container: a thread's resolve after
  /// its own publish sees exactly that edition; a neighbour's request shows the neighbour's
  /// override or the container's, never this thread's; the container never shows an override.
  @Test func overridesPublishedIntoSiblingSessionsAtOnceStayInTheirSessions() async throws {
    let container = try Container { registry in registry.register(instance: Source(label: "container")) }
    let sessions = try (0..<4).map { _ in try container.makeScope(.session) }
    let requests = try sessions.map { try $0.makeScope(.request) }
    let problems = Collector<String>()

    let finished = await runOnThreads(4) { index in
      let neighbour = (index + 1) % 4
      for edition in 0..<150 {
        let mine = "s\(index)-\(edition)"
        do {
          try sessions[index].register { registry in registry.register(instance: Source(label: mine)) }
          let seen = try requests[index].resolve(Source.self).label
          if seen != mine { problems.append("thread \(index) published \(mine), then read \(seen)") }
          let theirs = try requests[neighbour].resolve(Source.self).label
          if theirs != "container" && !theirs.hasPrefix("s\(neighbour)-") {
            problems.append("request \(neighbour) read \(theirs)")
          }
          let root = try container.resolve(Source.self).label
          if root != "container" { problems.append("the container read \(root)") }
        } catch {
          problems.append("thread \(index): \(error)")
        }
      }
    }

    #expect(finished, "deadlock")
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
    for (index, request) in requests.enumerated() {
      #expect(try request.resolve(Source.self) == Source(label: "s\(index)-149"))
    }
    try await container.close()
  }

  /// A batch into a closed session (closed itself, or through its container) is refused with a
  /// typed error naming the key, runs no eager factory, and leaves the session's and the
  /// container's registrations as they were.
  @Test(arguments: [false, true])
  func registeringIntoAClosedScopeThrowsATypedErrorAndChangesNothing(closeTheContainer: Bool) throws {
    let made = Counter()
    let container = try Container { registry in registry.register(instance: Source(label: "container")) }
    let session = try container.makeScope(.session) { registry in
      registry.register(instance: EditionA(round: 1))
    }
    if closeTheContainer { try container.close() } else { try session.close() }

    let error = resolutionError {
      try session.register { registry in
        registry.register(Source.self, lifetime: .eagerSingleton) { _ in
          made.increment()
          return Source(label: "late")
        }
        registry.register(instance: EditionA(round: 2))
      }
    }

    #expect(error?.code == .scopeClosed, "\(String(describing: error))")
    #expect(error.map { isPlainKey($0.key, of: Source.self) } == true, "\(String(describing: error?.key))")
    #expect(made.value == 0)
    let reopened = try Container { registry in registry.register(instance: Source(label: "other")) }
    #expect(try reopened.resolve(Source.self) == Source(label: "other"))
    if !closeTheContainer {
      #expect(try container.resolve(Source.self) == Source(label: "container"))
      #expect(throws: ResolutionError.self) { try container.resolve(EditionA.self) }
      try container.close()
    }
    try reopened.close()
  }

  /// A batch holding a disposable eager singleton registered into a session while another thread
  /// closes the session: the register succeeds or throws a `ResolutionError`, and every instance
  /// the eager factory made is disposed exactly once (by the session's close, or at once when the
  /// close won), none left undisposed.
  @Test func anEagerSingletonRegisteredWhileItsScopeClosesIsDisposedExactlyOnce() async throws {
    let made = Collector<TrackedResource>()
    let problems = Collector<String>()
    for round in 0..<150 {
      let container = Container()
      let session = try container.makeScope(.session)
      let start = Barrier(parties: 2)
      let finished = await runOnThreads(2) { index in
        start.arriveAndWait()
        if index == 0 {
          do {
            try session.register { registry in
              registry.register(TrackedResource.self, lifetime: .eagerSingleton) { _ in
                let resource = TrackedResource("eager-\(round)")
                made.append(resource)
                return resource
              }
            }
          } catch is ResolutionError {
          } catch {
            problems.append("round \(round): register threw \(error)")
          }
        } else {
          do { try session.close() } catch { problems.append("round \(round): close threw \(error)") }
        }
      }
      #expect(finished, "deadlock")
      try await container.close()
    }
    let counts = made.elements.map(\.disposeCount)
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
    #expect(counts.allSatisfy { $0 == 1 }, "dispose counts \(counts.filter { $0 != 1 }.prefix(5))")
  }
}
