import Strata
import Synchronization
import Testing

/// A disposable whose activation hook records that it ran; `activated` is set by the hook before
/// the instance is handed to anyone but its own hook's resolves.
private final class Activated: Disposable, Sendable {
  private let state = Atomic<Int>(0)
  private let disposals = Atomic<Int>(0)

  init() {}

  func activate() { state.store(1, ordering: .sequentiallyConsistent) }
  var isActivated: Bool { state.load(ordering: .sequentiallyConsistent) == 1 }
  func dispose() throws { disposals.add(1, ordering: .sequentiallyConsistent) }
  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }
}

/// Two services that refer to each other once their hooks ran.
private final class Left: @unchecked Sendable {
  // `@unchecked Sendable`: `right` is written only by the activation hook, before sharing.
  var right: Right?
  init() {}
}

private final class Right: @unchecked Sendable {
  // `@unchecked Sendable`: `left` is written only by the activation hook, before sharing.
  var left: Left?
  init() {}
}

/// Eager singletons that depend on each other.
private final class EagerHead: Sendable {
  let tail: EagerTail
  init(tail: EagerTail) { self.tail = tail }
}

private final class EagerTail: Sendable {}

/// Activation hooks under pressure (other threads racing the instance being activated, hooks that
/// throw, close their scope or resolve each other), eager singletons that fail or resolve each
/// other, and the graph lifetime across threads.
@Suite struct Attack3LifetimeTests {
  /// A singleton's hook takes its time (and resolves the singleton again, getting the instance
  /// being activated) while three other threads resolve it: every thread gets the one instance,
  /// and none gets it before its hook finished.
  @Test func otherThreadsNeverSeeASingletonBeforeItsHookFinished() async throws {
    let problems = Collector<String>()
    for round in 0..<40 {
      let made = Counter()
      let container = try Container { registry in
        registry.register(Activated.self, lifetime: .singleton) { _ in
          made.increment()
          return Activated()
        }
        .onActivated { resolver, instance in
          pause(microseconds: 300)
          if try resolver.resolve(Activated.self) !== instance {
            problems.append("the hook got another instance")
          }
          instance.activate()
        }
      }
      let start = Barrier(parties: 4)
      let seen = Collector<Activated>()
      let finished = await runOnThreads(4) { _ in
        start.arriveAndWait()
        do {
          let instance = try container.resolve(Activated.self)
          if !instance.isActivated { problems.append("round \(round): got the instance before its hook ran") }
          seen.append(instance)
        } catch {
          problems.append("round \(round): \(error)")
        }
      }
      #expect(finished, "deadlock")
      #expect(made.value == 1)
      #expect(Set(seen.elements.map(ObjectIdentifier.init)).count == 1)
      try await container.close()
      #expect(seen.elements.first?.disposeCount == 1)
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
  }

  /// A disposable singleton whose hook throws for its first two instances, resolved by four
  /// threads at once: each resolve gets the one activated instance or `activationFailed`; every
  /// instance whose hook threw is disposed at once, exactly once, and the one that stayed is
  /// disposed once, by the container's close.
  @Test func aSingletonWhoseHookThrowsTwiceUnderARaceDisposesEveryDiscardedInstanceOnce() async throws {
    let problems = Collector<String>()
    for round in 0..<40 {
      let made = Collector<Activated>()
      let hookRuns = Counter()
      let container = try Container { registry in
        registry.register(Activated.self, lifetime: .singleton) { _ in
          let instance = Activated()
          made.append(instance)
          return instance
        }
        .onActivated { _, instance in
          if hookRuns.increment() <= 2 { throw FixtureError(code: 7) }
          instance.activate()
        }
      }
      let start = Barrier(parties: 4)
      let results = Collector<ObjectIdentifier>()
      let finished = await runOnThreads(4) { _ in
        start.arriveAndWait()
        for _ in 0..<3 {
          do {
            let instance = try container.resolve(Activated.self)
            if !instance.isActivated { problems.append("round \(round): an unactivated instance") }
            results.append(ObjectIdentifier(instance))
          } catch let error as ResolutionError where error.code == .activationFailed {
          } catch {
            problems.append("round \(round): \(error)")
          }
        }
      }
      #expect(finished, "deadlock")
      let survivor = try container.resolve(Activated.self)
      #expect(Set(results.elements).isSubset(of: [ObjectIdentifier(survivor)]))
      #expect(made.elements.count == 3, "made \(made.elements.count)")
      let discarded = made.elements.filter { $0 !== survivor }
      #expect(discarded.allSatisfy { $0.disposeCount == 1 }, "\(discarded.map(\.disposeCount))")
      #expect(survivor.disposeCount == 0)
      try await container.close()
      #expect(survivor.disposeCount == 1)
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
  }

  /// A request-scoped service whose hook closes the request it is being made in: the resolve
  /// ends (no deadlock) with a `ResolutionError`, the instance is disposed exactly once, and the
  /// request refuses later resolves.
  @Test func aScopedHookThatClosesItsOwnRequestEndsInATypedErrorAndOneDisposal() async throws {
    let made = Collector<Activated>()
    let container = try Container { registry in
      registry.register(Activated.self, lifetime: .scoped(.request)) { _ in
        let instance = Activated()
        made.append(instance)
        return instance
      }
      .onActivated { resolver, _ in try resolver.currentScope.close() }
    }
    let request = try container.makeScope(.request)

    let outcome = await withDeadline { Outcome { try request.resolve(Activated.self) } }

    #expect(outcome != nil, "deadlock")
    #expect(outcome?.code != nil, "\(String(describing: outcome))")
    #expect(request.isClosed)
    #expect(made.elements.count == 1)
    #expect(made.elements.map(\.disposeCount) == [1])
    #expect(throws: ResolutionError.self) { try request.resolve(Activated.self) }
    try await container.close()
    #expect(made.elements.map(\.disposeCount) == [1])
  }

  /// Eager singletons in one batch that resolve each other out of registration order: the head,
  /// registered first, makes the tail while it is made; the tail's own eager creation then finds
  /// it. Each is made exactly once, and both are the instances later resolves return.
  @Test func eagerSingletonsThatResolveEachOtherAreEachMadeOnce() throws {
    let heads = Counter()
    let tails = Counter()
    let container = try Container { registry in
      registry.register(EagerHead.self, lifetime: .eagerSingleton) { resolver in
        heads.increment()
        return EagerHead(tail: try resolver.resolve(EagerTail.self))
      }
      registry.register(EagerTail.self, lifetime: .eagerSingleton) { _ in
        tails.increment()
        return EagerTail()
      }
    }
    #expect(heads.value == 1)
    #expect(tails.value == 1)
    #expect(try container.resolve(EagerHead.self).tail === container.resolve(EagerTail.self))
    #expect(heads.value == 1 && tails.value == 1)
  }

  /// One thread registers `EagerTail` and then `EagerHead` (which needs it) as eager singletons,
  /// in two batches, while another thread resolves both as soon as they are registered: each is
  /// made exactly once, and the head holds the tail everyone else gets.
  @Test func eagerSingletonsResolvedByAnotherThreadAsTheyArePublishedAreMadeOnce() async throws {
    let problems = Collector<String>()
    for round in 0..<100 {
      let heads = Counter()
      let tails = Counter()
      let container = Container()
      let seenHead = Slot<EagerHead>()
      let seenTail = Slot<EagerTail>()
      let finished = await runOnThreads(2) { index in
        if index == 0 {
          do {
            try container.register { registry in
              registry.register(EagerTail.self, lifetime: .eagerSingleton) { _ in
                tails.increment()
                pause(microseconds: 50)
                return EagerTail()
              }
            }
            try container.register { registry in
              registry.register(EagerHead.self, lifetime: .eagerSingleton) { resolver in
                heads.increment()
                return EagerHead(tail: try resolver.resolve(EagerTail.self))
              }
            }
          } catch {
            problems.append("round \(round): register threw \(error)")
          }
          return
        }
        var spins = 0
        while seenHead.value == nil && spins < 200_000 {
          spins += 1
          if seenTail.value == nil {
            seenTail.value = try? container.resolveIfRegistered(EagerTail.self) ?? nil
          }
          seenHead.value = try? container.resolveIfRegistered(EagerHead.self) ?? nil
        }
      }
      #expect(finished, "deadlock")
      #expect(
        heads.value == 1 && tails.value == 1, "round \(round): heads \(heads.value), tails \(tails.value)")
      let tail = try container.resolve(EagerTail.self)
      #expect(try container.resolve(EagerHead.self).tail === tail)
      #expect(seenHead.value.map { $0.tail === tail } != false)
      #expect(seenTail.value.map { $0 === tail } != false)
      try await container.close()
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
  }

  /// A request caches the container's `scoped(.request)` instance; then its session overrides
  /// the registration. The request's next resolves give one new instance of the override (the
  /// latest registration wins), a sibling request keeps the container's, and closing the request
  /// disposes both of its instances, each exactly once.
  @Test func aScopedOverrideAddedAfterARequestCachedAnInstanceIsUsedAndBothAreDisposedOnce() async throws {
    let made = Collector<Activated>()
    let register: @Sendable (Registrar) -> Void = { registry in
      registry.register(Activated.self, lifetime: .scoped(.request)) { _ in
        let instance = Activated()
        made.append(instance)
        return instance
      }
    }
    let container = try Container(register)
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let sibling = try container.makeScope(.request)
    let before = try request.resolve(Activated.self)
    let siblings = try sibling.resolve(Activated.self)

    try session.register(register)
    let after = try request.resolve(Activated.self)

    #expect(after !== before)
    #expect(try request.resolve(Activated.self) === after)
    #expect(try sibling.resolve(Activated.self) === siblings)
    #expect(made.elements.count == 3)
    try await request.close()
    #expect(before.disposeCount == 1 && after.disposeCount == 1 && siblings.disposeCount == 0)
    try await container.close()
    #expect(made.elements.map(\.disposeCount) == [1, 1, 1])
  }

  /// A session made with a batch of two eager singletons, the first disposable and the second
  /// throwing: `makeScope` throws the factory's error, typed, and the first instance (whose
  /// session nobody can reach) is disposed exactly once, by the time the container has closed.
  @Test func aSessionWhoseEagerSingletonThrowsAtBuildLeaksNothing() async throws {
    let made = Collector<Activated>()
    let container = Container()

    let error = resolutionError {
      _ = try container.makeScope(.session, name: "doomed") { registry in
        registry.register(Activated.self, lifetime: .eagerSingleton) { _ in
          let instance = Activated()
          made.append(instance)
          return instance
        }
        registry.register(Widget.self, lifetime: .eagerSingleton) { _ in throw FixtureError(code: 9) }
      }
    }

    #expect(error?.code == .factoryFailed, "\(String(describing: error))")
    #expect(error.map { isPlainKey($0.key, of: Widget.self) } == true)
    #expect(error?.underlying as? FixtureError == FixtureError(code: 9))
    try await container.close()
    #expect(made.elements.count == 1)
    #expect(made.elements.map(\.disposeCount) == [1], "the first eager singleton's disposals")
  }

  /// Two singletons whose hooks resolve each other: on one thread the pair links up (each hook
  /// gets the other's provisional instance). Two threads starting one each at once must not
  /// deadlock; each ends with a typed error or an instance that, once both threads are done, is
  /// one half of the linked pair that later resolves return.
  ///
  /// (Only once both are done: while one thread is still in `Right`'s hook, the `Left` that hook
  /// made is already published, and another thread can read the unfinished `Right` through it.)
  @Test func singletonsWhoseHooksResolveEachOtherOnTwoThreadsNeverDeadlock() async throws {
    let problems = Collector<String>()
    for round in 0..<150 {
      let container = try Container { registry in
        registry.register(Left.self, lifetime: .unchecked(.singleton)) { _ in Left() }
          .onActivated { resolver, left in
            pause(microseconds: 200)
            left.right = try resolver.resolve(Right.self)
          }
        registry.register(Right.self, lifetime: .unchecked(.singleton)) { _ in Right() }
          .onActivated { resolver, right in
            pause(microseconds: 200)
            right.left = try resolver.resolve(Left.self)
          }
      }
      let start = Barrier(parties: 2)
      let gotLeft = Slot<Left>()
      let gotRight = Slot<Right>()
      let finished = await runOnThreads(2, timeout: .seconds(20)) { index in
        start.arriveAndWait()
        do {
          if index == 0 {
            gotLeft.value = try container.resolve(Left.self)
          } else {
            gotRight.value = try container.resolve(Right.self)
          }
        } catch is ResolutionError {
        } catch {
          problems.append("round \(round): \(error)")
        }
      }
      #expect(finished, "deadlock in round \(round)")
      guard finished else { return }
      let left = try container.resolve(Left.self)
      let right = try container.resolve(Right.self)
      #expect(left.right === right && right.left === left, "round \(round): not one linked pair")
      if let got = gotLeft.value, got !== left { problems.append("round \(round): \(Self.link(got))") }
      if let got = gotRight.value, got !== right { problems.append("round \(round): \(Self.link(got))") }
      try await container.close()
    }
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
  }

  /// How a left's link reads: no right, a right without a left, or a right that names another left.
  private static func link(_ left: Left) -> String {
    guard let right = left.right else { return "no right" }
    guard let back = right.left else { return "its right has no left" }
    return back === left ? "linked" : "its right names another left"
  }

  private static func link(_ right: Right) -> String {
    guard let left = right.left else { return "no left" }
    guard let back = left.right else { return "its left has no right" }
    return back === right ? "linked" : "its left names another right"
  }

  /// The documented circular pair through `graph` and a hook, resolved on four threads at once,
  /// 500 times each: every resolve gets its own linked pair, never one shared with another resolve.
  @Test func graphPairsLinkedByAHookAreOnePerResolveOnEveryThread() async throws {
    let container = try Container { registry in
      registry.register(Left.self, lifetime: .unchecked(.graph)) { _ in Left() }
        .onActivated { resolver, left in left.right = try resolver.resolve(Right.self) }
      registry.register(Right.self, lifetime: .unchecked(.graph)) { resolver in
        let right = Right()
        right.left = try resolver.resolve(Left.self)
        return right
      }
    }
    let problems = Collector<String>()
    let lefts = Collector<Left>()

    let finished = await runOnThreads(4) { _ in
      var kept: [Left] = []
      for _ in 0..<500 {
        do {
          let left = try container.resolve(Left.self)
          if left.right?.left !== left { problems.append("a pair not linked to itself") }
          kept.append(left)
        } catch {
          problems.append("\(error)")
        }
      }
      for left in kept { lefts.append(left) }
    }

    #expect(finished, "deadlock")
    #expect(problems.elements.isEmpty, "\(problems.elements.prefix(3))")
    // Every pair is still held, so no two of them can share an address.
    #expect(Set(lefts.elements.map(ObjectIdentifier.init)).count == 2_000, "pairs shared between resolves")
    for left in lefts.elements { left.right = nil }
    try await container.close()
  }
}
