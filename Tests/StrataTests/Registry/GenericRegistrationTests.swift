import Foundation
import Strata
import Testing

/// A service type made of generic wrappers, so that a test can have hundreds of distinct types.
private protocol Shaped: AnyObject, Sendable {
  init()
}

private final class Leaf: Shaped {
  init() {}
}

private final class Left<Inner: Shaped>: Shaped {
  init() {}
}

private final class Right<Inner: Shaped>: Shaped {
  init() {}
}

/// Registrations made by generic code that does not know its types statically (types opened from
/// existentials), which takes the class of each registration from a process-wide table instead of
/// asking the Swift runtime for it: every type must still get a registration of its own class,
/// whichever container, thread or lifetime made it first.
@Suite struct GenericRegistrationTests {
  /// 256 distinct types: `Left<Right<…<Leaf>>>`, eight levels, one per 8-bit number.
  private static let types = shapes(256, bits: 8)

  /// `count` distinct types of `bits` levels, one per number below `count`.
  private static func shapes(_ count: Int, bits: Int) -> [any Shaped.Type] {
    (0..<count).map { shape($0, bits: bits) }
  }

  private static func shape(_ number: Int, bits: Int) -> any Shaped.Type {
    var type: any Shaped.Type = Leaf.self
    for bit in 0..<bits {
      func wrap<Inner: Shaped>(_: Inner.Type) -> any Shaped.Type {
        number & (1 << bit) == 0 ? Left<Inner>.self : Right<Inner>.self
      }
      type = wrap(type)
    }
    return type
  }

  private static func register<Service: Shaped>(
    _: Service.Type, lifetime: Lifetime, in registry: Registrar
  ) {
    registry.register(Service.self, lifetime: lifetime) { _ in Service() }
  }

  /// A container registering every type of `types` through the generic function; every third a
  /// singleton.
  private static func container(of types: [any Shaped.Type] = types) throws -> Container {
    try Container { registry in
      for (index, type) in types.enumerated() {
        func open<Service: Shaped>(_: Service.Type) {
          register(Service.self, lifetime: index % 3 == 0 ? .singleton : .transient, in: registry)
        }
        open(type)
      }
    }
  }

  /// Which types `container` resolved to something that is not an instance of exactly that type,
  /// or whose singleton is not shared.
  private static func mismatches(in container: Container, of types: [any Shaped.Type] = types) -> [String] {
    var found: [String] = []
    for (index, type) in types.enumerated() {
      func check<Service: Shaped>(_: Service.Type) {
        do {
          let first = try container.resolve(Service.self)
          let second = try container.resolve(Service.self)
          if ObjectIdentifier(Swift.type(of: first)) != ObjectIdentifier(Service.self) {
            found.append("\(Service.self) resolved to \(Swift.type(of: first))")
          }
          if (index % 3 == 0) != (first === second) {
            found.append("\(Service.self): singleton \(index % 3 == 0), shared \(first === second)")
          }
        } catch {
          found.append("\(Service.self): \(error)")
        }
      }
      check(type)
    }
    return found
  }

  @Test func everyTypeRegisteredThroughGenericCodeResolvesToItself() throws {
    #expect(Set(Self.types.map { ObjectIdentifier($0) }).count == 256)
    let container = try Self.container()
    #expect(container.registrations.count == 256)
    #expect(Self.mismatches(in: container) == [])
    // Registered again, now that every type's class is known: the same answers.
    #expect(Self.mismatches(in: try Self.container()) == [])
  }

  /// Past 2,048 types the process-wide table of classes may be three quarters full: 4,100 more
  /// types, of 13 levels (none of them one of the 8-level types), each still get their own class.
  @Test func thousandsOfTypesPastTheTablesGrowthEachResolveToThemselves() throws {
    let many = Self.shapes(4_100, bits: 13)
    #expect(Set(many.map { ObjectIdentifier($0) }).count == 4_100)
    let container = try Self.container(of: many)
    #expect(container.registrations.count == 4_100)
    #expect(Self.mismatches(in: container, of: many) == [])
    #expect(Self.mismatches(in: try Self.container(of: many), of: many) == [])
  }

  @Test(.timeLimit(.minutes(1)))
  func containersBuiltOnManyThreadsAtOnceEachResolveEveryType() async {
    let failures = Collector<String>()
    let finished = await runOnThreads(6) { _ in
      do {
        let container = try Self.container()
        for mismatch in Self.mismatches(in: container) { failures.append(mismatch) }
        try container.close()
      } catch {
        failures.append("\(error)")
      }
    }
    #expect(finished)
    #expect(failures.elements == [])
  }
}
