import Strata
import Testing

private struct Config: Sendable, Equatable { let source: String }
private struct Feature: Sendable, Equatable { let number: Int }

/// A scope without registrations of its own finds the nearest scope above it that has some
/// through a link it keeps itself, cached for one registry version of the tree. These attack that
/// cache: the link is made with the scope, so every change of the tree after that must be seen
/// through it.
@Suite struct OwnSkipLinkTests {
  /// The session had no registrations when the request was made (the request's link named the
  /// container); the session's first batch must be seen from the request.
  @Test func aRequestSeesItsSessionsFirstRegistrationsMadeAfterIt() throws {
    let container = try Container { registry in
      registry.register(instance: Config(source: "container"))
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    #expect(try request.resolve(Config.self) == Config(source: "container"))

    try session.register { registry in registry.register(instance: Config(source: "session")) }

    #expect(try request.resolve(Config.self) == Config(source: "session"))
    #expect(try request.makeScope(.request).resolve(Config.self) == Config(source: "session"))
  }

  /// A registration published in the container after the request was made is found from it,
  /// at the top level and from a factory running in the request.
  @Test func aRequestSeesTheContainersLaterRegistrations() throws {
    let container = try Container { registry in
      registry.register(Feature.self) { resolver in
        Feature(number: (try resolver.resolveIfRegistered(Config.self)) == nil ? 0 : 1)
      }
    }
    let request = try container.makeScope(.request)
    #expect(try request.resolve(Feature.self) == Feature(number: 0))
    #expect(throws: ResolutionError.self) { try request.resolve(Config.self) }

    try container.register { registry in registry.register(instance: Config(source: "late")) }

    #expect(try request.resolve(Config.self) == Config(source: "late"))
    #expect(try request.resolve(Feature.self) == Feature(number: 1))
  }

  /// The request gets registrations of its own after it resolved through its link: its own key
  /// and its ancestors' keys are both found, and an override in it wins.
  @Test func aRequestThatGetsItsOwnRegistrationsStillSeesItsAncestors() throws {
    let container = try Container { registry in
      registry.register(instance: Config(source: "container"))
      registry.register(instance: Feature(number: 1))
    }
    let request = try container.makeScope(.request)
    #expect(try request.resolve(Config.self) == Config(source: "container"))

    try request.register { registry in registry.register(instance: Config(source: "request")) }

    #expect(try request.resolve(Config.self) == Config(source: "request"))
    #expect(try request.resolve(Feature.self) == Feature(number: 1))
    #expect(try container.resolve(Config.self) == Config(source: "container"))
  }

  /// A factory running in the request gives the request its first registrations, then resolves
  /// through it: it sees what it registered and what the container has.
  @Test func aFactoryGivingItsRequestItsFirstRegistrationsSeesThemAndTheContainer() throws {
    let container = try Container { registry in
      registry.register(instance: Config(source: "container"))
      registry.register(Feature.self) { resolver in
        try resolver.currentScope.register { registry in registry.register(instance: Feature(number: 7)) }
        let own = try resolver.resolve(Feature.self)
        _ = try resolver.resolve(Config.self)
        return Feature(number: own.number + 1)
      }
    }
    let request = try container.makeScope(.request)
    #expect(try request.resolve(Feature.self) == Feature(number: 8))
    #expect(try request.resolve(Feature.self) == Feature(number: 7))
  }

  /// Requests made before and after a publish, resolving on several threads while batches are
  /// published into the container and into their session: every resolve finds the container's
  /// key, and, once a thread has seen the session's batch, it keeps seeing it.
  @Test func resolvesFromRequestsRacingPublishesNeverMissAKey() async throws {
    let container = try Container { registry in
      registry.register(instance: Config(source: "container"))
    }
    let session = try container.makeScope(.session)
    let requests = try (0..<3).map { _ in try session.makeScope(.request) }
    let failures = Collector<String>()
    let published = Flag()
    let finished = await runOnThreads(4) { index in
      if index == 3 {
        for round in 0..<300 {
          try? container.register { registry in registry.register(instance: Feature(number: round)) }
        }
        try? session.register { registry in registry.register(instance: Config(source: "session")) }
        published.raise()
        return
      }
      let request = requests[index]
      var sawSession = false
      var rounds = 0
      while rounds < 20_000 && (!published.isRaised || rounds < 200) {
        rounds += 1
        do {
          let config = try request.resolve(Config.self)
          if config.source == "session" {
            sawSession = true
          } else if sawSession {
            failures.append("thread \(index) saw the container's Config after the session's")
          }
          _ = try request.resolveIfRegistered(Feature.self)
        } catch {
          failures.append("thread \(index): \(error)")
        }
      }
    }
    #expect(finished)
    #expect(failures.elements.isEmpty, "\(failures.elements.prefix(3))")
    for request in requests {
      #expect(try request.resolve(Config.self) == Config(source: "session"))
      #expect(try request.resolve(Feature.self) == Feature(number: 299))
    }
  }

  /// A miss from a container without any registration, and from a request below it, is the
  /// `notRegistered` error, before and after the container's first batch.
  @Test func missesFromAnEmptyTreeAreNotRegisteredErrors() throws {
    let container = try Container { _ in }
    let request = try container.makeScope(.request)
    for scope in [container, request] {
      #expect {
        try scope.resolve(Config.self)
      } throws: { error in
        (error as? ResolutionError)?.code == .notRegistered
      }
    }
    try container.register { registry in registry.register(instance: Feature(number: 1)) }
    #expect(try request.resolve(Feature.self) == Feature(number: 1))
    #expect {
      try request.resolve(Config.self)
    } throws: { error in
      (error as? ResolutionError)?.code == .notRegistered
    }
  }
}
