import Foundation
import Strata
import Testing

/// A key is its service type, its name by equality, and the exact types of its runtime
/// arguments: names compared by identity or with (recursive) associated values select exactly
/// their registration, a 100 KB name fails fast with a typed error, optionality and argument count
/// tell registrations apart, and twelve arguments (not all `Sendable`) arrive intact on every
/// thread.
@Suite struct AssaultKeyTests {
  /// Names that are class instances compared by identity, and enum cases with associated values
  /// (one nested twice): each resolves its own registration; an equal-looking other instance or a
  /// shallower nesting is `notRegistered`.
  @Test func classInstanceAndAssociatedValueNamesSelectExactlyTheirRegistration() throws {
    let first = IdentityName()
    let second = IdentityName()
    let container = try Container { registry in
      registry.register(LabeledService.self, name: first) { _ in LabeledService("first") }
      registry.register(LabeledService.self, name: ShardName.tenant(id: "a", shard: 1)) { _ in
        LabeledService("a1")
      }
      registry.register(LabeledService.self, name: ShardName.tenant(id: "a", shard: 2)) { _ in
        LabeledService("a2")
      }
      registry.register(LabeledService.self, name: ShardName.nested(.nested(.global))) { _ in
        LabeledService("nested")
      }
    }
    #expect(try container.resolve(LabeledService.self, name: first).label == "first")
    #expect(
      resolutionError { _ = try container.resolve(LabeledService.self, name: second) }?.code == .notRegistered
    )
    #expect(
      try container.resolve(LabeledService.self, name: ShardName.tenant(id: "a", shard: 2)).label == "a2")
    #expect(
      try container.resolve(LabeledService.self, name: ShardName.tenant(id: "a", shard: 1)).label == "a1")
    #expect(
      try container.resolve(LabeledService.self, name: ShardName.nested(.nested(.global))).label == "nested")
    let shallower = resolutionError {
      _ = try container.resolve(LabeledService.self, name: ShardName.nested(.global))
    }
    #expect(shallower?.code == .notRegistered)
  }

  /// A 100,000-character name among 200 registrations whose names extend it: it and a sibling
  /// resolve; a missing sibling fails with `notRegistered`, and the failure and its description
  /// (with whatever hint it makes) take under 3 s. (At 2,000,000 characters the 201 names held
  /// 400 MB, which broke the resident-memory bound of the tests running beside this one.)
  @Test func aHugeNameResolvesAndItsMissingSiblingFailsQuicklyWithATypedError() throws {
    let huge = String(repeating: "x", count: 100_000)
    let container = try Container { registry in
      registry.register(LabeledService.self, name: huge) { _ in LabeledService("huge") }
      for index in 0..<200 {
        registry.register(LabeledService.self, name: huge + "\(index)") { _ in LabeledService("\(index)") }
      }
    }
    #expect(try container.resolve(LabeledService.self, name: huge).label == "huge")
    #expect(try container.resolve(LabeledService.self, name: huge + "7").label == "7")
    let elapsed = ContinuousClock().measure {
      let error = resolutionError { _ = try container.resolve(LabeledService.self, name: huge + "y") }
      #expect(error?.code == .notRegistered)
      #expect(error?.description.isEmpty == false)
    }
    #expect(elapsed < .seconds(3), "a failed resolve of a huge name took \(elapsed)")
  }

  /// Registrations taking `Int`, `Int?` and `Int??`: each argument type resolves its own, `nil`
  /// included; with only the `Int?` one registered, an `Int` argument is `notRegistered`.
  @Test func argumentsThatDifferOnlyByOptionalityAreDifferentKeys() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { (_, value: Int) in LabeledService("int \(value)") }
      registry.register(LabeledService.self) { (_, value: Int?) in
        LabeledService("optional \(String(describing: value))")
      }
      registry.register(LabeledService.self) { (_, _: Int??) in LabeledService("double") }
    }
    #expect(try container.resolve(LabeledService.self, arguments: 1).label == "int 1")
    #expect(
      try container.resolve(LabeledService.self, arguments: Int?.some(1)).label == "optional Optional(1)")
    #expect(try container.resolve(LabeledService.self, arguments: Int?.none).label == "optional nil")
    #expect(try container.resolve(LabeledService.self, arguments: Int??.some(nil)).label == "double")
    // And only the optional one is registered: the plain Int is a mismatch, not a crash.
    let only = try Container { registry in
      registry.register(LabeledService.self) { (_, _: Int?) in LabeledService("optional") }
    }
    #expect(
      resolutionError { _ = try only.resolve(LabeledService.self, arguments: 1) }?.code == .notRegistered)
  }

  /// Twelve runtime arguments, three of them a non-`Sendable` value type (one optional): each
  /// arrives as given, the references inside them included; eleven arguments are `notRegistered`.
  ///
  /// No parameter is a tuple or a metatype: a 12-argument closure with an `(Int, Int)` and an
  /// `Any.Type` parameter crashed swift-frontend 6.3.1 (signal 11).
  @Test func twelveArgumentsIncludingNonSendableValueTypesArriveIntact() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) {
        (
          _, a: Int, b: String, c: MutableHandle, d: [Int], e: Int?, f: Int, g: Int8,
          h: MutableHandle?, i: Double, j: Set<String>, k: [String: Int], l: MutableHandle
        ) -> LabeledService in
        c.storage.add("c")
        l.storage.add("l")
        let optionals = "\(String(describing: e)) \(h == nil ? 42 : 0)"
        return LabeledService("\(a) \(b) \(d) \(optionals) \(f) \(g) \(i) \(j.count) \(k["k"] ?? 0)")
      }
    }
    let shared = NSMutableArray()
    let service = try container.resolve(
      LabeledService.self,
      arguments: 1, "b", MutableHandle(storage: shared), [4], Int?.none, 5, Int8(7), MutableHandle?.none,
      0.5, Set(["x", "y"]), ["k": 9], MutableHandle(storage: shared))
    #expect(service.label == "1 b [4] nil 42 5 7 0.5 2 9")
    #expect(shared.count == 2)
    // One argument fewer is a typed mismatch.
    let error = resolutionError {
      _ = try container.resolve(
        LabeledService.self,
        arguments: 1, "b", MutableHandle(storage: shared), [4], Int?.none, 5, Int8(7), MutableHandle?.none,
        0.5, Set(["x", "y"]), ["k": 9])
    }
    #expect(error?.code == .notRegistered)
  }

  /// Eight threads each resolving a named, two-argument registration 2,000 times with their own
  /// arguments: every resolve gets exactly its own arguments.
  @Test func namedArgumentResolvesFromManyThreadsGetTheirOwnArguments() async throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, name: ShardName.global) { (_, value: Int, text: String) in
        LabeledService("\(value)-\(text)")
      }
    }
    let wrong = Counter()
    let finished = await runOnThreads(8) { thread in
      for index in 0..<2_000 {
        let service = try? container.resolve(
          LabeledService.self, name: ShardName.global, arguments: index, "\(thread)")
        if service?.label != "\(index)-\(thread)" { wrong.increment() }
      }
    }
    #expect(finished)
    #expect(wrong.value == 0)
  }
}
