import Strata
import Testing

// Keys at their edges: an empty name, a dozen runtime arguments of mixed types, recursion through
// one key with different arguments, and a name object mutated after it was registered.

private final class Tree: Sendable {
  let child: Tree?
  init(child: Tree?) { self.child = child }
  var depth: Int { child.map { $0.depth + 1 } ?? 0 }
}

/// A name whose hash changes when it is mutated: a broken name, which must not break the registry.
private final class MutableName: Hashable, @unchecked Sendable {  // mutated by one test thread
  var id: Int
  init(_ id: Int) { self.id = id }
  static func == (lhs: MutableName, rhs: MutableName) -> Bool { lhs.id == rhs.id }
  func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

@Suite struct OddKeyTests {
  @Test func anEmptyStringIsANameNotTheUnnamedKey() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, name: "") { _ in LabeledService("empty") }
    }
    #expect(try container.resolve(LabeledService.self, name: "").label == "empty")
    let error = resolutionError { _ = try container.resolve(LabeledService.self) }
    #expect(error?.code == .notRegistered)
    #expect(error?.hint == "a registration named `\"\"` exists; resolve it with `name: \"\"`")
    #expect(try container.resolveIfRegistered(LabeledService.self) == nil)
    #expect(try container.resolveAll(LabeledService.self).isEmpty)
    #expect(try container.resolveAll(LabeledService.self, name: "").count == 1)
  }

  @Test func twelveRuntimeArgumentsOfMixedTypesArePassedInOrder() throws {
    let container = try Container { registry in
      registry.register(String.self) {
        (
          _, a: Int, b: String, c: Double?, d: [Int], e: Int8, f: Bool, g: UInt8, h: Character,
          i: Set<Int>, j: [String: Int], k: Int?, l: Float
        ) in
        "\(a)\(b)\(c ?? 0)\(d)\(e)\(f)\(g)\(h)\(i.count)\(j.count)\(k ?? -1)\(l)"
      }
    }
    let text = try container.resolve(
      String.self,
      arguments: 1, "b", Double?.none, [2], Int8(3), true, UInt8(5), Character("h"), Set([1]), ["x": 1],
      Int?.some(9), Float(1.5))
    #expect(text == "1b0.0[2]3true5h1191.5")
    let error = resolutionError { _ = try container.resolve(String.self, arguments: 1, "b") }
    #expect(error?.code == .notRegistered)
  }

  /// One key resolved inside its own factory with other arguments is recursion, not a cycle, as
  /// long as it ends; `graph` with arguments makes an instance per resolve, so it recurses too.
  @Test(arguments: [Lifetime.transient, .graph])
  func aFactoryResolvingItsOwnKeyWithOtherArgumentsRecurses(lifetime: Lifetime) throws {
    let container = try Container { registry in
      registry.register(Tree.self, lifetime: lifetime) { (resolver, depth: Int) in
        Tree(child: depth == 0 ? nil : try resolver.resolve(Tree.self, arguments: depth - 1))
      }
    }
    #expect(try container.resolve(Tree.self, arguments: 50).depth == 50)
  }

  @Test(arguments: [3, 20])
  func aNameMutatedAfterRegistrationBreaksOnlyItsOwnLookup(count: Int) throws {
    let names = (0..<count).map { MutableName($0) }
    let container = try Container { registry in
      for name in names { registry.register(Widget.self, name: name) { _ in Widget(id: name.id) } }
    }
    names[1].id = 100
    _ = try? container.resolve(Widget.self, name: MutableName(100))
    _ = try? container.resolve(Widget.self, name: MutableName(1))
    #expect(try container.resolve(Widget.self, name: MutableName(2)).id == 2)
    #expect(try container.resolveAll(Widget.self, name: MutableName(0)).count == 1)
  }
}
