import Strata
import Testing

/// The resolves with one, two or three runtime arguments hand them to the factory through a
/// closure rather than a pack. They must be indistinguishable from the variadic resolve that a
/// caller with four or more arguments, or a caller generic over a pack, reaches: the same
/// registrations, instances, errors, hooks and lifetimes, and no argument kept alive.
@Suite struct HeldArgumentTests {
  /// The variadic overload, forced: code generic over a pack can only call that one.
  static func viaPack<Service, each Argument>(
    _ scope: Scope, _ type: Service.Type, name: String? = nil, _ arguments: repeat each Argument
  ) throws -> Service {
    guard let name else { return try scope.resolve(Service.self, arguments: repeat each arguments) }
    return try scope.resolve(Service.self, name: name, arguments: repeat each arguments)
  }

  /// ``viaPack(_:_:name:_:)`` from inside a factory.
  static func viaPack<Service, each Argument>(
    _ resolver: borrowing Resolver, _ type: Service.Type, _ arguments: repeat each Argument
  ) throws -> Service {
    try resolver.resolve(Service.self, arguments: repeat each arguments)
  }

  /// One registration per arity and name, each saying which it is and what it received.
  static func container() throws -> Container {
    try Container { registry in
      registry.register(Greeting.self) { (_, a: String) in Greeting(text: "1 \(a)") }
      registry.register(Greeting.self) { (_, a: String, b: Int) in Greeting(text: "2 \(a) \(b)") }
      registry.register(Greeting.self) { (_, a: String, b: Int, c: Bool) in Greeting(text: "3 \(a) \(b) \(c)")
      }
      registry.register(Greeting.self) { (_, a: String, b: Int, c: Bool, d: Double) in
        Greeting(text: "4 \(a) \(b) \(c) \(d)")
      }
      registry.register(Greeting.self, name: "n") { (_, a: String) in Greeting(text: "n1 \(a)") }
      registry.register(Greeting.self, name: "n") { (_, a: String, b: Int) in Greeting(text: "n2 \(a) \(b)") }
      registry.register(Greeting.self, name: "n") { (_, a: String, b: Int, c: Bool) in
        Greeting(text: "n3 \(a) \(b) \(c)")
      }
    }
  }

  @Test func everyArityAndNameFindsWhatTheVariadicResolveFinds() throws {
    let container = try Self.container()
    let request = try container.makeScope(.request)
    for scope in [container, request] {
      let held = [
        try scope.resolve(Greeting.self, arguments: "a"),
        try scope.resolve(Greeting.self, arguments: "a", 2),
        try scope.resolve(Greeting.self, arguments: "a", 2, true),
        try scope.resolve(Greeting.self, name: "n", arguments: "a"),
        try scope.resolve(Greeting.self, name: "n", arguments: "a", 2),
        try scope.resolve(Greeting.self, name: "n", arguments: "a", 2, true),
      ]
      let packed = [
        try Self.viaPack(scope, Greeting.self, "a"),
        try Self.viaPack(scope, Greeting.self, "a", 2),
        try Self.viaPack(scope, Greeting.self, "a", 2, true),
        try Self.viaPack(scope, Greeting.self, name: "n", "a"),
        try Self.viaPack(scope, Greeting.self, name: "n", "a", 2),
        try Self.viaPack(scope, Greeting.self, name: "n", "a", 2, true),
      ]
      #expect(held.map(\.text) == ["1 a", "2 a 2", "3 a 2 true", "n1 a", "n2 a 2", "n3 a 2 true"])
      #expect(held == packed)
    }
    #expect(try container.resolve(Greeting.self, arguments: "a", 2, true, 0.5).text == "4 a 2 true 0.5")
  }

  @Test func aFactoryResolvesWithArgumentsThroughItsResolverAtEveryArity() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, a: String) in Greeting(text: "1 \(a)") }
      registry.register(Greeting.self) { (_, a: String, b: Int) in Greeting(text: "2 \(a) \(b)") }
      registry.register(Greeting.self) { (_, a: String, b: Int, c: Bool) in Greeting(text: "3 \(a) \(b) \(c)")
      }
      registry.register(Greeting.self, name: "n") { (_, a: String) in Greeting(text: "n1 \(a)") }
      registry.register(Greeting.self, name: "n") { (_, a: String, b: Int) in Greeting(text: "n2 \(a) \(b)") }
      registry.register(Greeting.self, name: "n") { (_, a: String, b: Int, c: Bool) in
        Greeting(text: "n3 \(a) \(b) \(c)")
      }
      registry.register([Greeting].self) { resolver in
        [
          try resolver.resolve(Greeting.self, arguments: "x"),
          try resolver.resolve(Greeting.self, arguments: "x", 1),
          try resolver.resolve(Greeting.self, arguments: "x", 1, false),
          try resolver.resolve(Greeting.self, name: "n", arguments: "x"),
          try resolver.resolve(Greeting.self, name: "n", arguments: "x", 1),
          try resolver.resolve(Greeting.self, name: "n", arguments: "x", 1, true),
          try Self.viaPack(resolver, Greeting.self, "x", 1),
        ]
      }
    }
    let made = try container.resolve([Greeting].self).map(\.text)
    #expect(made == ["1 x", "2 x 1", "3 x 1 false", "n1 x", "n2 x 1", "n3 x 1 true", "2 x 1"])
  }

  @Test func wrongArgumentTypesFailWithTheVariadicResolvesErrorAtTheTopAndInsideAFactory() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, a: String, b: Int) in Greeting(text: "\(a)\(b)") }
      registry.register(Widget.self) { resolver in
        _ = try resolver.resolve(Greeting.self, arguments: 1, "swapped")
        return Widget(id: 1)
      }
    }
    let held = resolutionError { _ = try container.resolve(Greeting.self, arguments: 1, "swapped") }
    let packed = resolutionError { _ = try Self.viaPack(container, Greeting.self, 1, "swapped") }
    #expect(held?.code == .notRegistered)
    #expect(held.map { "\($0)" } == packed.map { "\($0)" })
    #expect(held?.hint?.contains("(String, Int)") == true)

    let nested = resolutionError { _ = try container.resolve(Widget.self) }
    #expect(nested?.code == .notRegistered)
    #expect(nested.map { "\($0.key)" } == held.map { "\($0.key)" })
  }

  @Test func aClosedScopeRefusesEveryArity() throws {
    let container = try Self.container()
    let request = try container.makeScope(.request)
    try request.close()
    let errors = [
      resolutionError { _ = try request.resolve(Greeting.self, arguments: "a") },
      resolutionError { _ = try request.resolve(Greeting.self, arguments: "a", 2) },
      resolutionError { _ = try request.resolve(Greeting.self, name: "n", arguments: "a", 2, true) },
    ]
    #expect(errors.map { $0?.code } == [.scopeClosed, .scopeClosed, .scopeClosed])
    let packed = resolutionError { _ = try Self.viaPack(request, Greeting.self, "a", 2) }
    #expect(errors[1].map { "\($0)" } == packed.map { "\($0)" })
  }

  struct Refused: Error, Equatable { let argument: String }

  @Test func aFactoryErrorCarriesTheSamePathOnBothRoutes() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, a: String, b: Int) -> Greeting in throw Refused(argument: a) }
      registry.register(Widget.self) { resolver in
        _ = try resolver.resolve(Greeting.self, arguments: "inner", 1)
        return Widget(id: 1)
      }
    }
    let held = resolutionError { _ = try container.resolve(Greeting.self, arguments: "top", 1) }
    let packed = resolutionError { _ = try Self.viaPack(container, Greeting.self, "top", 1) }
    #expect(held?.code == .factoryFailed)
    #expect(held?.underlying as? Refused == Refused(argument: "top"))
    #expect(held.map { "\($0)" } == packed.map { "\($0)" })

    let nested = resolutionError { _ = try container.resolve(Widget.self) }
    #expect(nested?.code == .factoryFailed)
    #expect(nested?.path.count == 2, "Widget, then the Greeting it resolved: \(String(describing: nested))")
  }

  final class Tracked: Disposable, @unchecked Sendable {
    let name: String
    var disposed = false
    init(_ name: String) { self.name = name }
    func dispose() { disposed = true }
  }

  struct Rejected: Error {}

  @Test func theActivationHookRunsAndAFailingHookDisposesTheInstance() throws {
    let seen = Counter()
    let rejected = Locked<Tracked?>(nil)
    let container = try Container { registry in
      registry.register(Tracked.self) { (_, name: String) in Tracked(name) }
        .onActivated { _, instance in
          seen.increment()
          if instance.name == "reject" {
            rejected.withLock { $0 = instance }
            throw Rejected()
          }
        }
    }
    #expect(try container.resolve(Tracked.self, arguments: "keep").name == "keep")
    #expect(seen.value == 1)
    let error = resolutionError { _ = try container.resolve(Tracked.self, arguments: "reject") }
    #expect(error?.code == .activationFailed)
    #expect(seen.value == 2)
    #expect(
      rejected.withLock { $0 }?.disposed == true, "nobody received it, so the failed activation disposed it")
  }

  @Test func aGraphRegistrationWithArgumentsMakesAnInstancePerResolve() throws {
    let made = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .graph) { (_, id: Int) in
        made.increment()
        return Widget(id: id)
      }
    }
    let first = try container.resolve(Widget.self, arguments: 1)
    let second = try container.resolve(Widget.self, arguments: 2)
    #expect([first.id, second.id] == [1, 2])
    #expect(first !== second)
    #expect(made.value == 2)
  }

  final class Payload: Sendable {}

  struct Holder: Sendable {
    let payload: Payload?
  }

  @Test func noArgumentOutlivesTheResolveUnlessTheInstanceKeepsIt() throws {
    let container = try Container { registry in
      registry.register(Holder.self) { (_, payload: Payload, keep: Bool) in
        Holder(payload: keep ? payload : nil)
      }
      registry.register(Holder.self) { (_, payload: Payload, fail: Bool, _: Int) -> Holder in
        if fail { throw Refused(argument: "fail") }
        return Holder(payload: payload)
      }
    }
    weak var dropped: Payload?
    weak var failed: Payload?
    weak var kept: Payload?
    var holder: Holder?
    do {
      let payload = Payload()
      dropped = payload
      _ = try container.resolve(Holder.self, arguments: payload, false)
    }
    do {
      let payload = Payload()
      failed = payload
      _ = resolutionError { _ = try container.resolve(Holder.self, arguments: payload, true, 0) }
    }
    do {
      let payload = Payload()
      kept = payload
      holder = try container.resolve(Holder.self, arguments: payload, true)
    }
    #expect(dropped == nil)
    #expect(failed == nil)
    #expect(kept != nil, "the instance holds it")
    holder = nil
    #expect(kept == nil)
    _ = holder
  }

  /// A factory that resolves its own key with a new argument each time, without end.
  final class Countdown: Sendable {}

  @Test func anEndlessChainOfArgumentsStopsWithATypedError() async throws {
    let code = await onThread(stackSize: 512 * 1024) { () -> String in
      do {
        let container = try Container { registry in
          registry.register(Countdown.self) { (resolver, step: Int) in
            _ = try resolver.resolve(Countdown.self, arguments: step + 1)
            return Countdown()
          }
        }
        _ = try container.resolve(Countdown.self, arguments: 0)
        return "no error"
      } catch let error as ResolutionError {
        return "\(error.code)"
      } catch {
        return "\(error)"
      }
    }
    #expect(["cycle", "depthLimitExceeded"].contains(code), "\(code)")
  }

  /// Resolves with arguments on three threads while a fourth publishes batches into the container
  /// and the request scope, then closes the scope: every resolve returns what one of the published
  /// registrations makes, or fails with `scopeClosed` once the close began; nothing else. The
  /// readers stop at the close, and each must have seen it.
  @Test func argumentResolvesRaceWithPublicationAndCloseSafely() async throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, a: String, b: Int) in Greeting(text: "root \(a) \(b)") }
      registry.register(Widget.self, lifetime: .graph) { (_, id: Int) in Widget(id: id) }
    }
    let request = try container.makeScope(.request)
    let start = Barrier(parties: 4)
    let wrong = Collector<String>()
    let closedSeen = Counter()
    let finished = await runOnThreads(4) { index in
      start.arriveAndWait()
      if index == 0 {
        for round in 0..<12 {
          do {
            try container.register { registry in
              registry.register(Widget.self, name: round) { _ in Widget(id: round) }
            }
          } catch {
            wrong.append("publishing: \(error)")
          }
          pause(microseconds: 200)  // the readers run throughout
          if round == 6 {
            do {
              try request.register { registry in
                registry.register(Greeting.self) { (_, a: String, b: Int) in Greeting(text: "child \(a) \(b)")
                }
              }
            } catch {
              wrong.append("publishing in the scope: \(error)")
            }
          }
        }
        do { try request.close() } catch { wrong.append("closing: \(error)") }
        return
      }
      // Until the close stops them (bounded, in case it never comes).
      for round in 0..<50_000 {
        let name = String(repeating: "n", count: 20 + index)
        do {
          let greeting = try request.resolve(Greeting.self, arguments: name, round)
          if greeting.text != "root \(name) \(round)" && greeting.text != "child \(name) \(round)" {
            wrong.append(greeting.text)
          }
          let widget = try request.resolve(Widget.self, arguments: round)
          if widget.id != round { wrong.append("widget \(widget.id) for \(round)") }
        } catch let error as ResolutionError where error.code == .scopeClosed {
          closedSeen.increment()
          break
        } catch {
          wrong.append("\(error)")
        }
      }
    }
    #expect(finished)
    #expect(closedSeen.value == 3, "every reader ran until the close")
    #expect(wrong.elements.isEmpty, "\(wrong.elements.prefix(3))")
    #expect(request.isClosed)
    let after = resolutionError { _ = try request.resolve(Greeting.self, arguments: "late", 0) }
    #expect(after?.code == .scopeClosed)
  }
  /// Arguments whose representation differs between a plain generic parameter and a pack element
  /// (a tuple, a function, an optional, a metatype, an existential): the factory gets them intact.
  /// (A tuple or a function is passed alone: a factory taking one beside other arguments crashes
  /// the Swift 6.3.1 compiler while it re-abstracts the closure for the pack-generic factory type.)
  @Test func tupleOptionalMetatypeAndExistentialArgumentsArriveIntact() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, pair: (Int, String)) in Greeting(text: "\(pair.0) \(pair.1)") }
      registry.register(Greeting.self) { (_, make: @escaping @Sendable () -> String) in
        Greeting(text: make() + " " + make())
      }
      registry.register(Greeting.self) { (_, maybe: Int?, type: Any.Type, value: any Sendable) in
        Greeting(text: "\(maybe.map(String.init) ?? "nil") \(type) \(value)")
      }
    }
    let first = try container.resolve(Greeting.self, arguments: (7, "seven"))
    #expect(first.text == "7 seven")
    #expect(try Self.viaPack(container, Greeting.self, (7, "seven")) == first)
    let made = Counter()
    let make: @Sendable () -> String = {
      made.increment()
      return "made"
    }
    #expect(try container.resolve(Greeting.self, arguments: make).text == "made made")
    #expect(made.value == 2)
    #expect(try Self.viaPack(container, Greeting.self, make).text == "made made")

    let none: Int? = nil
    let type: Any.Type = Widget.self
    let value: any Sendable = 42
    let second = try container.resolve(Greeting.self, arguments: none, type, value)
    #expect(second.text == "nil Widget 42")
    #expect(try Self.viaPack(container, Greeting.self, Optional(3), type, value).text == "3 Widget 42")
  }
  protocol Channel: Sendable { var label: String { get } }
  struct Email: Channel { var label: String { "email" } }

  /// An argument declared as an existential keys on the existential, as with the variadic resolve:
  /// Swift opens an existential passed to a plain generic parameter (it would look up `Email`), and
  /// the trailing `StaticArgumentTypes` parameter is what stops it.
  @Test func anExistentialArgumentKeysOnItsStaticTypeNotOnTheValueInside() throws {
    let container = try Container { registry in
      registry.register(Greeting.self) { (_, channel: any Channel) in Greeting(text: "any \(channel.label)") }
      registry.register(Greeting.self) { (_, channel: Email) in Greeting(text: "concrete \(channel.label)") }
      registry.register(Greeting.self) { (_, channel: any Channel, value: Any, type: Any.Type) in
        Greeting(text: "three \(channel.label) \(value) \(type)")
      }
    }
    let channel: any Channel = Email()
    let value: Any = 7
    let type: Any.Type = Widget.self
    #expect(try container.resolve(Greeting.self, arguments: channel).text == "any email")
    #expect(try container.resolve(Greeting.self, arguments: Email()).text == "concrete email")
    #expect(
      try container.resolve(Greeting.self, arguments: channel, value, type).text == "three email 7 Widget")
    #expect(try Self.viaPack(container, Greeting.self, channel).text == "any email")
    let request = try container.makeScope(.request)
    #expect(try request.resolve(Greeting.self, arguments: channel).text == "any email")
    let nested = try Container { registry in
      registry.register(Greeting.self) { (_, channel: any Channel) in Greeting(text: "any \(channel.label)") }
      registry.register([Greeting].self) { resolver in
        [try resolver.resolve(Greeting.self, arguments: channel as any Channel)]
      }
    }
    #expect(try nested.resolve([Greeting].self).map(\.text) == ["any email"])
  }
}
