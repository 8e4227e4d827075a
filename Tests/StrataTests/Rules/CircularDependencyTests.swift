import Foundation
import Strata
import Testing

@Suite(.timeLimit(.minutes(1)))
struct CircularDependencyTests {
  // MARK: Detected cycles

  @Test func transientConstructorCycleIsReportedOnce() throws {
    let container = try Container { registry in
      registry.register(CycleA.self, CycleA.init)
      registry.register(CycleB.self, CycleB.init)
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(CycleA.self) }

    #expect(error.code == .cycle)
    #expect(identifiers(error.path) == identifiers(of: CycleA.self, CycleB.self, CycleA.self))
    #expect(error.path.map(\.description) == ["CycleA", "CycleB", "CycleA"])
    let cycle = try #require(error.cycle)
    #expect(identifiers(cycle) == identifiers(of: CycleA.self, CycleB.self, CycleA.self))
    #expect(error.message.contains("CycleA → CycleB → CycleA"))
  }

  @Test func cycleErrorKeyIsWherePathEnds() throws {
    let container = try Container { registry in
      registry.register(CycleA.self, CycleA.init)
      registry.register(CycleB.self, CycleB.init)
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve(CycleA.self) }
    // Documented: the path ends with `key`, the service that closed the cycle.
    #expect(error.path.last == error.key)
    #expect(isPlainKey(error.key, of: CycleA.self))
  }

  @Test func cycleEnteredFromOutsideShowsTheWayIn() throws {
    let container = try Container { registry in
      registry.register(CycleEntry.self, CycleEntry.init)
      registry.register(CycleA.self, CycleA.init)
      registry.register(CycleB.self, CycleB.init)
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(CycleEntry.self) }

    #expect(error.code == .cycle)
    #expect(
      identifiers(error.path) == identifiers(of: CycleEntry.self, CycleA.self, CycleB.self, CycleA.self))
    #expect(identifiers(try #require(error.cycle)) == identifiers(of: CycleA.self, CycleB.self, CycleA.self))
    #expect(error.description.contains("CycleEntry → CycleA → CycleB → CycleA"))
  }

  @Test func singletonSelfCycleThrowsWithoutDeadlock() async throws {
    let container = try Container { registry in
      registry.register(CycleA.self, lifetime: .singleton) { resolver in
        CycleA(b: CycleB(a: try resolver.resolve(CycleA.self)))
      }
    }

    let outcomes = await withDeadline {
      [Outcome { try container.resolve(CycleA.self) }, Outcome { try container.resolve(CycleA.self) }]
    }

    let results = try #require(outcomes, "resolving a singleton that needs itself deadlocked")
    #expect(results.map(\.code) == [.cycle, .cycle], "the guard is released after the first failure")
    let error = try #require(throws: ResolutionError.self) { try container.resolve(CycleA.self) }
    #expect(identifiers(error.path) == identifiers(of: CycleA.self, CycleA.self))
  }

  @Test func singletonCycleThroughTwoSingletonsThrowsWithoutDeadlock() async throws {
    let container = try Container { registry in
      registry.register(CycleA.self, lifetime: .singleton, CycleA.init)
      registry.register(CycleB.self, lifetime: .singleton, CycleB.init)
    }

    let outcome = await withDeadline { Outcome { try container.resolve(CycleB.self) } }

    let result = try #require(outcome, "resolving a singleton cycle deadlocked")
    #expect(result.code == .cycle)
    let error = try #require(throws: ResolutionError.self) { try container.resolve(CycleB.self) }
    #expect(identifiers(error.path) == identifiers(of: CycleB.self, CycleA.self, CycleB.self))
  }

  @Test func graphCycleWithoutActivationHookIsDetectedAtOnce() throws {
    let container = try Container { registry in
      registry.register(CycleA.self, lifetime: .graph, CycleA.init)
      registry.register(CycleB.self, lifetime: .graph, CycleB.init)
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve(CycleA.self) }
    #expect(error.code == .cycle)
    #expect(identifiers(error.path) == identifiers(of: CycleA.self, CycleB.self, CycleA.self))
  }

  @Test func transientCycleThroughALazyReadDuringConstructionIsAnErrorNotACrash() async {
    // `EagerReader` reads its `Lazy` in `init`, so every `Lazy.value` starts a fresh top-level
    // resolve of the same cycle. Run in a child process: a stack overflow must not take the whole
    // test run down with it.
    await #expect(processExitsWith: .success) {
      // If the child hangs instead (ThreadSanitizer's runtime can deadlock while handling a stack
      // overflow), the kernel ends it after 10 s and the test fails rather than waiting forever.
      alarm(10)
      let container = try Container { registry in
        registry.register(EagerReaderOwner.self, EagerReaderOwner.init)
        registry.register(EagerReader.self, EagerReader.init)
      }
      do {
        _ = try container.resolve(EagerReaderOwner.self)
      } catch let error as ResolutionError where error.code == .cycle {
        return
      }
      Issue.record("expected a cycle error")
      exit(1)
    }
  }

  // MARK: Broken cycles

  @Test func cycleBrokenWithLazy() throws {
    let container = try Container { registry in
      registry.register(LazyParent.self, lifetime: .singleton, LazyParent.init)
      registry.register(LazyChild.self, LazyChild.init)
    }

    let parent = try container.resolve(LazyParent.self)

    #expect(!parent.child.parent.isResolved)
    #expect(try parent.child.parent.value === parent)
    #expect(parent.child.parent.isResolved)
  }

  @Test func cycleBrokenWithGraphAndActivationHook() throws {
    let container = try Container { registry in
      registry.register(Parent.self, lifetime: .graph) { _ in Parent() }
        .onActivated { resolver, parent in parent.child = try resolver.resolve(Child.self) }
      registry.register(Child.self, lifetime: .graph) { resolver in
        Child(parent: try resolver.resolve(Parent.self))
      }
    }

    let parent = try container.resolve(Parent.self)
    defer { parent.child = nil }
    let child = try #require(parent.child)
    #expect(child.parent === parent)

    let other = try container.resolve(Parent.self)
    defer { other.child = nil }
    #expect(other !== parent)
    #expect(other.child?.parent === other)
    #expect(other.child !== child)
  }

  @Test func cycleBrokenWithSingletonAndActivationHook() throws {
    let runs = Counter()
    let container = try Container { registry in
      // `Parent` is not Sendable on purpose: its activation hook sets `child` after it is made.
      // This test resolves on one thread, so sharing it unchecked is safe here.
      registry.register(Parent.self, lifetime: .unchecked(.singleton)) { _ in
        runs.increment()
        return Parent()
      }
      .onActivated { resolver, parent in parent.child = try resolver.resolve(Child.self) }
      registry.register(Child.self, lifetime: .unchecked(.singleton)) { resolver in
        Child(parent: try resolver.resolve(Parent.self))
      }
    }

    let parent = try container.resolve(Parent.self)
    defer { parent.child = nil }

    #expect(parent.child?.parent === parent)
    #expect(try container.resolve(Child.self) === parent.child)
    #expect(try container.resolve(Parent.self) === parent)
    #expect(runs.value == 1)
  }
}

// MARK: - Fixtures

final class CycleA: Sendable {
  let b: CycleB

  init(b: CycleB) {
    self.b = b
  }
}

final class CycleB: Sendable {
  let a: CycleA

  init(a: CycleA) {
    self.a = a
  }
}

final class CycleEntry: Sendable {
  let a: CycleA

  init(a: CycleA) {
    self.a = a
  }
}

final class LazyParent: Sendable {
  let child: LazyChild

  init(child: LazyChild) {
    self.child = child
  }
}

final class LazyChild: Sendable {
  let parent: Lazy<LazyParent>

  init(parent: Lazy<LazyParent>) {
    self.parent = parent
  }
}

final class EagerReaderOwner {
  let reader: EagerReader

  init(reader: EagerReader) {
    self.reader = reader
  }
}

final class EagerReader {
  let owner: Lazy<EagerReaderOwner>

  init(owner: Lazy<EagerReaderOwner>) throws {
    self.owner = owner
    _ = try owner.value
  }
}

final class Parent {
  var child: Child?

  init() {}
}

final class Child {
  let parent: Parent

  init(parent: Parent) {
    self.parent = parent
  }
}
