import Strata
import Testing

/// What an argument-taking factory made from its arguments.
private struct Order: Sendable, Equatable {
  let customer: String
  let quantity: Int
  let line: OrderLine
}

/// Made by a nested argument resolve inside `Order`'s factory.
private final class OrderLine: Sendable, Equatable {
  let text: String
  init(text: String) { self.text = text }
  static func == (lhs: OrderLine, rhs: OrderLine) -> Bool { lhs.text == rhs.text }
}

/// A shared-lifetime candidate that takes an argument.
private final class Tenant: Sendable {
  let id: Int
  init(id: Int) { self.id = id }
}

/// Runtime arguments under pressure: many threads resolving argument-taking registrations with
/// their own values (nested and `graph`), shared lifetimes given arguments, and argument
/// registrations overridden in one child scope while its siblings resolve.
@Suite struct Attack3ArgumentTests {
  /// Four threads resolve a two-argument transient 2,000 times each with values of their own; its
  /// factory resolves a `graph` registration with a derived argument through its resolver. Every
  /// result carries exactly the arguments its own resolve passed: nothing crosses between threads
  /// or between resolves, and every `graph` instance with arguments is made per resolve.
  @Test func argumentResolvesOnManyThreadsKeepTheirOwnValues() async throws {
    let lines = Counter()
    let container = try Container { registry in
      registry.register(OrderLine.self, lifetime: .graph) { (_, text: String) in
        lines.increment()
        return OrderLine(text: text)
      }
      registry.register(Order.self) { (resolver, customer: String, quantity: Int) in
        let line = try resolver.resolve(OrderLine.self, arguments: "\(customer)×\(quantity)")
        return Order(customer: customer, quantity: quantity, line: line)
      }
    }
    let problems = Collector<String>()

    let finished = await runOnThreads(4) { thread in
      for round in 0..<2_000 {
        let customer = "c\(thread)"
        let quantity = thread * 10_000 + round
        do {
          let order = try container.resolve(Order.self, arguments: customer, quantity)
          let expected = Order(
            customer: customer, quantity: quantity, line: OrderLine(text: "\(customer)×\(quantity)"))
          if order != expected { problems.append("thread \(thread) got \(order)") }
        } catch {
          problems.append("thread \(thread): \(error)")
        }
      }
    }

    #expect(finished, "deadlock")
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
    #expect(lines.value == 8_000)
    try await container.close()
  }

  /// A shared lifetime given a runtime argument is refused with `invalidRegistration` naming the
  /// key with its argument type, whichever shared lifetime it is and whether the batch builds a
  /// container or is added to a live session; nothing else of the refused batch is published, and
  /// no factory runs.
  @Test(arguments: [Lifetime.singleton, .eagerSingleton, .weak, .scoped, .scoped(.request)])
  func aSharedLifetimeWithAnArgumentIsRefusedClearlyAndPublishesNothing(lifetime: Lifetime) throws {
    let made = Counter()
    let build: (Registrar) -> Void = { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Tenant.self, lifetime: lifetime) { (_, id: Int) in
        made.increment()
        return Tenant(id: id)
      }
    }

    let atBuild = resolutionError { _ = try Container(build) }
    let container = Container()
    let session = try container.makeScope(.session)
    let later = resolutionError { try session.register(build) }

    for error in [atBuild, later] {
      #expect(error?.code == .invalidRegistration, "\(lifetime): \(String(describing: error))")
      #expect(error.map { ObjectIdentifier($0.key.serviceType) } == ObjectIdentifier(Tenant.self))
      #expect(error.map { ObjectIdentifier($0.key.argumentTypes) } == ObjectIdentifier(Int.self))
      #expect(error?.description.contains("cannot take runtime arguments") == true)
    }
    #expect(made.value == 0)
    #expect(throws: ResolutionError.self) { try session.resolve(Widget.self) }
    #expect(throws: ResolutionError.self) { try session.resolve(Tenant.self, arguments: 1) }
    try container.close()
  }

  /// Wrong arity and wrong types, from the top and from inside a factory of a child scope that
  /// overrides the registration: a `notRegistered` error naming the service and the argument
  /// types asked for, never another registration's instance.
  @Test func wrongArgumentsThroughAnOverridingChildNameTheKeyAskedFor() throws {
    let container = try Container { registry in
      registry.register(Order.self) { (_, customer: String, quantity: Int) in
        Order(customer: customer, quantity: quantity, line: OrderLine(text: "container"))
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Order.self) { (_, customer: String, quantity: Int) in
        Order(customer: customer, quantity: quantity, line: OrderLine(text: "session"))
      }
      registry.register(Widget.self) { resolver in
        _ = try resolver.resolve(Order.self, arguments: "x")
        return Widget(id: 0)
      }
    }

    let tooFew = resolutionError { _ = try session.resolve(Order.self, arguments: "x") }
    let swapped = resolutionError { _ = try session.resolve(Order.self, arguments: 1, "x") }
    let inside = resolutionError { _ = try session.resolve(Widget.self) }

    #expect(tooFew?.code == .notRegistered)
    #expect(tooFew.map { ObjectIdentifier($0.key.argumentTypes) } == ObjectIdentifier(String.self))
    #expect(swapped?.code == .notRegistered)
    #expect(swapped.map { ObjectIdentifier($0.key.argumentTypes) } == ObjectIdentifier((Int, String).self))
    #expect(inside.map { ObjectIdentifier($0.key.serviceType) } == ObjectIdentifier(Order.self))
    #expect(
      inside?.path.map(\.serviceType).map(ObjectIdentifier.init) == identifiers(of: Widget.self, Order.self))
    #expect(try session.resolve(Order.self, arguments: "a", 1).line.text == "session")
    #expect(try container.resolve(Order.self, arguments: "a", 1).line.text == "container")
    try container.close()
  }

  /// One session re-registers an argument-taking service 200 times from one thread while three
  /// other threads resolve it with their own arguments from that session's request and from a
  /// sibling session: the overriding session's resolves see one of its editions (the latest its
  /// own thread published, on that thread), the sibling always the container's.
  @Test func argumentOverridesPublishedIntoOneSessionStayThere() async throws {
    let container = try Container { registry in
      registry.register(Order.self) { (_, customer: String, quantity: Int) in
        Order(customer: customer, quantity: quantity, line: OrderLine(text: "container"))
      }
    }
    let overriding = try container.makeScope(.session)
    let sibling = try container.makeScope(.session)
    let request = try overriding.makeScope(.request)
    let problems = Collector<String>()
    let done = Flag()

    let finished = await runOnThreads(4) { thread in
      if thread == 0 {
        for edition in 0..<200 {
          do {
            try overriding.register { registry in
              registry.register(Order.self) { (_, customer: String, quantity: Int) in
                Order(customer: customer, quantity: quantity, line: OrderLine(text: "edition \(edition)"))
              }
            }
            let seen = try request.resolve(Order.self, arguments: "own", edition).line.text
            if seen != "edition \(edition)" { problems.append("published \(edition), read \(seen)") }
          } catch {
            problems.append("publisher: \(error)")
          }
        }
        done.raise()
        return
      }
      var round = 0
      while !done.isRaised || round < 50 {
        round += 1
        do {
          let fromSibling = try sibling.resolve(Order.self, arguments: "t\(thread)", round)
          if fromSibling.line.text != "container" || fromSibling.quantity != round {
            problems.append("the sibling read \(fromSibling)")
          }
          let fromRequest = try request.resolve(Order.self, arguments: "t\(thread)", round)
          if fromRequest.customer != "t\(thread)" || fromRequest.quantity != round {
            problems.append("the request read \(fromRequest)")
          }
        } catch {
          problems.append("thread \(thread): \(error)")
        }
      }
    }

    #expect(finished, "deadlock")
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
    #expect(try request.resolve(Order.self, arguments: "z", 0).line.text == "edition 199")
    #expect(try container.resolve(Order.self, arguments: "z", 0).line.text == "container")
    try await container.close()
  }
}
