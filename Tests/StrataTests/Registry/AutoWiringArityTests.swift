import Strata
import Testing

/// Auto-wiring has a generated form for each number of parameters from 0 to 10 (so that every
/// resolve is specialised for its type) and a variadic form beyond. Each must pass every parameter
/// in order, record the parameter types, keep the lifetime, and report a missing parameter
/// without running the initializer.
@Suite struct AutoWiringArityTests {
  @Test(arguments: 0...11) func aSendableServiceGetsEachParameterInOrder(arity: Int) throws {
    let container = try Container { registry in
      registerParts(in: registry)
      registerMade(arity: arity, in: registry)
    }

    let made = try container.resolve(Made.self, name: arity)

    #expect(made.parts.map(ObjectIdentifier.init) == Array(try partIdentities(in: container).prefix(arity)))
    #expect(made !== (try container.resolve(Made.self, name: arity)), "transient by default")
    let registration = try #require(
      container.registrations.first { ObjectIdentifier($0.key.serviceType) == ObjectIdentifier(Made.self) })
    #expect(registration.lifetime == .transient)
    #expect(registration.key.nameDescription == "\(arity)")
    #expect(
      registration.dependencies.map(identifiers) == partTypes.prefix(arity).map { ObjectIdentifier($0) })
  }

  @Test(arguments: 0...11) func aServiceThatIsNotSendableGetsEachParameterInOrder(arity: Int) throws {
    let container = try Container { registry in
      registerParts(in: registry)
      registerUnsharedMade(arity: arity, in: registry)
    }

    let made = try container.resolve(UnsharedMade.self, name: arity)

    #expect(made.parts.map(ObjectIdentifier.init) == Array(try partIdentities(in: container).prefix(arity)))
    let registration = try #require(
      container.registrations.first {
        ObjectIdentifier($0.key.serviceType) == ObjectIdentifier(UnsharedMade.self)
      })
    #expect(registration.lifetime == .graph)
    #expect(
      registration.dependencies.map(identifiers) == partTypes.prefix(arity).map { ObjectIdentifier($0) })
  }

  @Test(arguments: 1...11) func aMissingLastParameterIsReportedWithoutRunningTheInitializer(arity: Int) throws
  {
    let runs = Counter()
    let container = try Container { registry in
      registerParts(in: registry, except: arity)
      registerCountedMade(arity: arity, runs: runs, in: registry)
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(Made.self, name: arity) }

    #expect(error.code == .notRegistered)
    #expect(ObjectIdentifier(error.key.serviceType) == ObjectIdentifier(partTypes[arity - 1]))
    #expect(error.path.first.map { ObjectIdentifier($0.serviceType) } == ObjectIdentifier(Made.self))
    #expect(runs.value == 0)
  }

  /// The initializer's parameters are `consuming` (a resolved dependency is handed over without a
  /// copy): a closure literal with typed parameters and a function value of the plain type are
  /// still accepted, and each dependency reaches the service, alive, exactly once.
  @Test func closureLiteralsAndFunctionValuesAreAcceptedAsInitializers() throws {
    let make: @Sendable (Part1, Part2) -> Made = { Made([$0, $1]) }
    let container = try Container { registry in
      registerParts(in: registry)
      registry.register(Made.self, name: "literal") { (first: Part1, second: Part2) in Made([first, second]) }
      registry.register(Made.self, name: "function", make)
    }
    weak var released: Made?
    for name in ["literal", "function"] {
      let made = try container.resolve(Made.self, name: name)
      #expect(made.parts.map(ObjectIdentifier.init) == Array(try partIdentities(in: container).prefix(2)))
      released = made
    }
    #expect(released == nil, "the service, holding what it was given, is freed with its last holder")
  }
}

// MARK: - Registrations of each arity

private func registerParts(in registry: Registrar, except missing: Int? = nil) {
  if missing != 1 { registry.register(Part1.self, lifetime: .singleton, Part1.init) }
  if missing != 2 { registry.register(Part2.self, lifetime: .singleton, Part2.init) }
  if missing != 3 { registry.register(Part3.self, lifetime: .singleton, Part3.init) }
  if missing != 4 { registry.register(Part4.self, lifetime: .singleton, Part4.init) }
  if missing != 5 { registry.register(Part5.self, lifetime: .singleton, Part5.init) }
  if missing != 6 { registry.register(Part6.self, lifetime: .singleton, Part6.init) }
  if missing != 7 { registry.register(Part7.self, lifetime: .singleton, Part7.init) }
  if missing != 8 { registry.register(Part8.self, lifetime: .singleton, Part8.init) }
  if missing != 9 { registry.register(Part9.self, lifetime: .singleton, Part9.init) }
  if missing != 10 { registry.register(Part10.self, lifetime: .singleton, Part10.init) }
  if missing != 11 { registry.register(Part11.self, lifetime: .singleton, Part11.init) }
}

private func partIdentities(in container: Container) throws -> [ObjectIdentifier] {
  [
    ObjectIdentifier(try container.resolve(Part1.self)),
    ObjectIdentifier(try container.resolve(Part2.self)),
    ObjectIdentifier(try container.resolve(Part3.self)),
    ObjectIdentifier(try container.resolve(Part4.self)),
    ObjectIdentifier(try container.resolve(Part5.self)),
    ObjectIdentifier(try container.resolve(Part6.self)),
    ObjectIdentifier(try container.resolve(Part7.self)),
    ObjectIdentifier(try container.resolve(Part8.self)),
    ObjectIdentifier(try container.resolve(Part9.self)),
    ObjectIdentifier(try container.resolve(Part10.self)),
    ObjectIdentifier(try container.resolve(Part11.self)),
  ]
}

/// The parts, in the order the initializers take them.
private let partTypes: [Any.Type] = [
  Part1.self, Part2.self, Part3.self, Part4.self, Part5.self, Part6.self, Part7.self, Part8.self, Part9.self,
  Part10.self, Part11.self,
]

private func registerMade(arity: Int, in registry: Registrar) {
  switch arity {
  case 0: registry.register(Made.self, name: 0, { () in Made([]) })
  case 1: registry.register(Made.self, name: 1, { (p1: Part1) in Made([p1]) })
  case 2: registry.register(Made.self, name: 2, { (p1: Part1, p2: Part2) in Made([p1, p2]) })
  case 3: registry.register(Made.self, name: 3, { (p1: Part1, p2: Part2, p3: Part3) in Made([p1, p2, p3]) })
  case 4:
    registry.register(
      Made.self, name: 4, { (p1: Part1, p2: Part2, p3: Part3, p4: Part4) in Made([p1, p2, p3, p4]) })
  case 5:
    registry.register(
      Made.self, name: 5,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5) in Made([p1, p2, p3, p4, p5]) })
  case 6:
    registry.register(
      Made.self, name: 6,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6) in Made([p1, p2, p3, p4, p5, p6]) }
    )
  case 7:
    registry.register(
      Made.self, name: 7,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7) in
        Made([p1, p2, p3, p4, p5, p6, p7])
      })
  case 8:
    registry.register(
      Made.self, name: 8,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8) in
        Made([p1, p2, p3, p4, p5, p6, p7, p8])
      })
  case 9:
    registry.register(
      Made.self, name: 9,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9) in
        Made([p1, p2, p3, p4, p5, p6, p7, p8, p9])
      })
  case 10:
    registry.register(
      Made.self, name: 10,
      {
        (
          p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9,
          p10: Part10
        ) in Made([p1, p2, p3, p4, p5, p6, p7, p8, p9, p10])
      })
  case 11:
    registry.register(
      Made.self, name: 11,
      {
        (
          p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9,
          p10: Part10, p11: Part11
        ) in Made([p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11])
      })
  default: Issue.record("no form for \(arity) parameters")
  }
}

private func registerUnsharedMade(arity: Int, in registry: Registrar) {
  switch arity {
  case 0: registry.register(UnsharedMade.self, name: 0, lifetime: .graph, { () in UnsharedMade([]) })
  case 1:
    registry.register(UnsharedMade.self, name: 1, lifetime: .graph, { (p1: Part1) in UnsharedMade([p1]) })
  case 2:
    registry.register(
      UnsharedMade.self, name: 2, lifetime: .graph, { (p1: Part1, p2: Part2) in UnsharedMade([p1, p2]) })
  case 3:
    registry.register(
      UnsharedMade.self, name: 3, lifetime: .graph,
      { (p1: Part1, p2: Part2, p3: Part3) in UnsharedMade([p1, p2, p3]) })
  case 4:
    registry.register(
      UnsharedMade.self, name: 4, lifetime: .graph,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4) in UnsharedMade([p1, p2, p3, p4]) })
  case 5:
    registry.register(
      UnsharedMade.self, name: 5, lifetime: .graph,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5) in UnsharedMade([p1, p2, p3, p4, p5]) })
  case 6:
    registry.register(
      UnsharedMade.self, name: 6, lifetime: .graph,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6) in
        UnsharedMade([p1, p2, p3, p4, p5, p6])
      })
  case 7:
    registry.register(
      UnsharedMade.self, name: 7, lifetime: .graph,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7) in
        UnsharedMade([p1, p2, p3, p4, p5, p6, p7])
      })
  case 8:
    registry.register(
      UnsharedMade.self, name: 8, lifetime: .graph,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8) in
        UnsharedMade([p1, p2, p3, p4, p5, p6, p7, p8])
      })
  case 9:
    registry.register(
      UnsharedMade.self, name: 9, lifetime: .graph,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9) in
        UnsharedMade([p1, p2, p3, p4, p5, p6, p7, p8, p9])
      })
  case 10:
    registry.register(
      UnsharedMade.self, name: 10, lifetime: .graph,
      {
        (
          p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9,
          p10: Part10
        ) in UnsharedMade([p1, p2, p3, p4, p5, p6, p7, p8, p9, p10])
      })
  case 11:
    registry.register(
      UnsharedMade.self, name: 11, lifetime: .graph,
      {
        (
          p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9,
          p10: Part10, p11: Part11
        ) in UnsharedMade([p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11])
      })
  default: Issue.record("no form for \(arity) parameters")
  }
}

private func registerCountedMade(arity: Int, runs: Counter, in registry: Registrar) {
  switch arity {
  case 1:
    registry.register(
      Made.self, name: 1, lifetime: .singleton,
      { (p1: Part1) in
        runs.increment()
        return Made([p1])
      })
  case 2:
    registry.register(
      Made.self, name: 2, lifetime: .singleton,
      { (p1: Part1, p2: Part2) in
        runs.increment()
        return Made([p1, p2])
      })
  case 3:
    registry.register(
      Made.self, name: 3, lifetime: .singleton,
      { (p1: Part1, p2: Part2, p3: Part3) in
        runs.increment()
        return Made([p1, p2, p3])
      })
  case 4:
    registry.register(
      Made.self, name: 4, lifetime: .singleton,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4) in
        runs.increment()
        return Made([p1, p2, p3, p4])
      })
  case 5:
    registry.register(
      Made.self, name: 5, lifetime: .singleton,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5) in
        runs.increment()
        return Made([p1, p2, p3, p4, p5])
      })
  case 6:
    registry.register(
      Made.self, name: 6, lifetime: .singleton,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6) in
        runs.increment()
        return Made([p1, p2, p3, p4, p5, p6])
      })
  case 7:
    registry.register(
      Made.self, name: 7, lifetime: .singleton,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7) in
        runs.increment()
        return Made([p1, p2, p3, p4, p5, p6, p7])
      })
  case 8:
    registry.register(
      Made.self, name: 8, lifetime: .singleton,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8) in
        runs.increment()
        return Made([p1, p2, p3, p4, p5, p6, p7, p8])
      })
  case 9:
    registry.register(
      Made.self, name: 9, lifetime: .singleton,
      { (p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9) in
        runs.increment()
        return Made([p1, p2, p3, p4, p5, p6, p7, p8, p9])
      })
  case 10:
    registry.register(
      Made.self, name: 10, lifetime: .singleton,
      {
        (
          p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9,
          p10: Part10
        ) in
        runs.increment()
        return Made([p1, p2, p3, p4, p5, p6, p7, p8, p9, p10])
      })
  case 11:
    registry.register(
      Made.self, name: 11, lifetime: .singleton,
      {
        (
          p1: Part1, p2: Part2, p3: Part3, p4: Part4, p5: Part5, p6: Part6, p7: Part7, p8: Part8, p9: Part9,
          p10: Part10, p11: Part11
        ) in
        runs.increment()
        return Made([p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11])
      })
  default: Issue.record("no form for \(arity) parameters")
  }
}

private final class Part1: Sendable {}
private final class Part2: Sendable {}
private final class Part3: Sendable {}
private final class Part4: Sendable {}
private final class Part5: Sendable {}
private final class Part6: Sendable {}
private final class Part7: Sendable {}
private final class Part8: Sendable {}
private final class Part9: Sendable {}
private final class Part10: Sendable {}
private final class Part11: Sendable {}

/// Made from any number of parts, by auto-wiring.
private final class Made: Sendable {
  let parts: [any AnyObject & Sendable]
  init(_ parts: [any AnyObject & Sendable]) { self.parts = parts }
}

/// ``Made``, for a service that is not `Sendable`.
private final class UnsharedMade {
  let parts: [AnyObject]
  init(_ parts: [AnyObject]) { self.parts = parts }
}
