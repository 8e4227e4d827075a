import Strata
import Synchronization
import Testing

/// Races the container from many tasks and threads. Every test here is meant to pass under
/// `swift test --sanitize=thread` and to finish in well under two seconds; a deadlock makes a test
/// fail after its deadline instead of hanging the run.
@Suite(.timeLimit(.minutes(1)))
struct ConcurrencyTests {
  @Test func threadsStartingTogetherOnOneSingletonGetOneInstance() async throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in
        pause(microseconds: 1_000)
        return Widget(id: runs.increment())
      }
    }
    let barrier = Barrier(parties: 8)
    let outcomes = Collector<Outcome>()

    let finished = await runOnThreads(8) { _ in
      barrier.arriveAndWait()
      for _ in 0..<50 { outcomes.append(Outcome { try container.resolve(Widget.self) }) }
    }

    #expect(finished, "deadlock")
    let results = outcomes.elements
    #expect(results.count == 400)
    let expected = Outcome.success(ObjectIdentifier(try container.resolve(Widget.self)))
    #expect(results.allSatisfy { $0 == expected })
    #expect(runs.value == 1)
  }

  @Test func resolvesRaceWithRegistrations() async throws {
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: -1) }
    }
    let latest = Latest()
    let writerDone = Flag()
    let failures = Collector<String>()
    let reads = Counter()

    let finished = await runOnThreads(4) { thread in
      if thread == 0 {
        for batch in 0..<200 {
          do {
            try container.register { registry in
              registry.register(Widget.self, name: batch) { _ in Widget(id: batch) }
            }
            let widget = try container.resolve(Widget.self, name: batch)
            if widget.id != batch { failures.append("batch \(batch) resolved \(widget.id)") }
          } catch {
            failures.append("batch \(batch): \(error)")
          }
          latest.publish(batch)
        }
        writerDone.raise()
      } else {
        while !writerDone.isRaised || reads.value < 100 {
          do {
            let existing = try container.resolve(Widget.self)
            if existing.id != -1 { failures.append("existing key resolved \(existing.id)") }
            let batch = latest.value
            if batch >= 0 {
              let widget = try container.resolve(Widget.self, name: batch)
              if widget.id != batch { failures.append("batch \(batch) read as \(widget.id)") }
            }
            reads.increment()
          } catch {
            failures.append("reader: \(error)")
            return
          }
        }
      }
    }

    #expect(finished, "deadlock")
    #expect(failures.elements.isEmpty, "\(failures.elements.prefix(5))")
    #expect(reads.value >= 100)
    #expect(container.registrations.count == 201)
    let named = (0..<200).filter { (batch: Int) in
      (try? container.resolve(Widget.self, name: batch).id) != batch
    }
    #expect(named.isEmpty)
  }

  @Test func threadsRacingOnAWeakRegistrationShareTheLiveInstance() async throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .weak) { _ in
        pause(microseconds: 500)
        return Widget(id: runs.increment())
      }
    }
    weak var released: Widget?

    do {
      let barrier = Barrier(parties: 8)
      let holders = Collector<Widget>()
      let failures = Counter()
      let finished = await runOnThreads(8) { _ in
        barrier.arriveAndWait()
        for _ in 0..<50 {
          // Every instance stays held by `holders`, so the weak instance never dies meanwhile.
          if let widget = try? container.resolve(Widget.self) {
            holders.append(widget)
          } else {
            failures.increment()
          }
        }
      }

      #expect(finished, "deadlock")
      #expect(failures.value == 0)
      let widgets = holders.elements
      #expect(widgets.count == 400)
      let first = try #require(widgets.first)
      #expect(widgets.allSatisfy { $0 === first })
      #expect(runs.value == 1)
      released = first
      holders.removeAll()
    }

    #expect(released == nil)
    #expect(try container.resolve(Widget.self).id == 2)
  }

  @Test func threadsReleasingAndResolvingAWeakRegistrationNeverGetADeadInstance() async throws {
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .weak) { _ in Widget(id: 0) }
    }
    let failures = Counter()

    let finished = await runOnThreads(4) { _ in
      for _ in 0..<2_000 {
        // Resolve and drop at once: instances die while other threads ask for them.
        if (try? container.resolve(Widget.self))?.id != 0 { failures.increment() }
      }
    }

    #expect(finished, "deadlock")
    #expect(failures.value == 0)
  }

  @Test func threadsReadingOneLazyResolveOnce() async throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in
        pause(microseconds: 1_000)
        return Widget(id: runs.increment())
      }
    }
    let lazy = container.lazy(Widget.self)
    let barrier = Barrier(parties: 8)
    let outcomes = Collector<Outcome>()

    let finished = await runOnThreads(8) { _ in
      barrier.arriveAndWait()
      for _ in 0..<20 { outcomes.append(Outcome { try lazy.value }) }
    }

    #expect(finished, "deadlock")
    let expected = Outcome.success(ObjectIdentifier(try lazy.value))
    #expect(outcomes.elements.count == 160)
    #expect(outcomes.elements.allSatisfy { $0 == expected })
    #expect(runs.value == 1)
  }

  @Test func tasksReadingOneLazyResolveOnce() async throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in
        pause(microseconds: 1_000)
        return Widget(id: runs.increment())
      }
    }
    let lazy = container.lazy(Widget.self)

    let ids = await withTaskGroup(of: Int?.self) { group in
      for _ in 0..<200 { group.addTask { try? lazy.value.id } }
      var ids: [Int?] = []
      for await id in group { ids.append(id) }
      return ids
    }

    #expect(ids.count == 200)
    #expect(ids.allSatisfy { $0 == 1 })
    #expect(runs.value == 1)
  }

  @Test func singletonCycleAcrossTwoThreadsIsAnErrorNotADeadlock() async throws {
    let barrier = Barrier(parties: 2)
    let barrierMet = Collector<Bool>()
    let container = try Container { registry in
      registry.register(CrossA.self, lifetime: .singleton) { resolver in
        barrierMet.append(barrier.arriveAndWait())  // both factories are running now
        return CrossA(b: try resolver.resolve(CrossB.self))
      }
      registry.register(CrossB.self, lifetime: .singleton) { resolver in
        barrierMet.append(barrier.arriveAndWait())
        return CrossB(a: try resolver.resolve(CrossA.self))
      }
    }
    let outcomes = Collector<Outcome>()

    let finished = await runOnThreads(2) { thread in
      if thread == 0 {
        outcomes.append(Outcome { try container.resolve(CrossA.self) })
      } else {
        outcomes.append(Outcome { try container.resolve(CrossB.self) })
      }
    }

    #expect(finished, "two threads creating singletons that need each other deadlocked")
    #expect(barrierMet.elements.prefix(2).allSatisfy { $0 }, "both factories must have run together")
    let results = outcomes.elements
    #expect(results.count == 2)
    #expect(results.contains { $0.code == .cycle })
    #expect(results.allSatisfy { $0.code == .cycle }, "\(results)")
  }

  @Test func lazyReadAndSingletonCreationAcrossTwoThreadsIsAnErrorNotADeadlock() async throws {
    // Thread 0 reads a Lazy<CrossA> (CrossA needs the singleton CrossB); thread 1 creates the
    // singleton CrossB, whose factory reads the same Lazy. A genuine cycle, so `.cycle` is fine;
    // waiting forever is not.
    let barrier = Barrier(parties: 2)
    let barrierMet = Collector<Bool>()
    let sharedLazy = Slot<Lazy<CrossA>>()
    let container = try Container { registry in
      registry.register(CrossA.self) { resolver in
        barrierMet.append(barrier.arriveAndWait())
        return CrossA(b: try resolver.resolve(CrossB.self))
      }
      registry.register(CrossB.self, lifetime: .singleton) { _ in
        barrierMet.append(barrier.arriveAndWait())
        guard let lazy = sharedLazy.value else { throw FixtureError(code: 0) }
        return CrossB(a: try lazy.value)
      }
    }
    let lazy = container.lazy(CrossA.self)
    sharedLazy.value = lazy
    let outcomes = Collector<Outcome>()

    let finished = await runOnThreads(2, timeout: .seconds(5)) { thread in
      if thread == 0 {
        outcomes.append(Outcome { try lazy.value })
      } else {
        outcomes.append(Outcome { try container.resolve(CrossB.self) })
      }
    }

    #expect(finished, "a Lazy read and a singleton creation that need each other deadlocked")
    #expect(barrierMet.elements.prefix(2).allSatisfy { $0 })
    let results = outcomes.elements
    #expect(results.count == 2)
    #expect(results.allSatisfy { $0.code == .cycle }, "\(results)")
  }
}

// MARK: - Fixtures

/// The highest batch number a writer has published, for readers to check.
private final class Latest: Sendable {
  private let storage = Atomic<Int>(-1)

  func publish(_ value: Int) { storage.store(value, ordering: .releasing) }

  var value: Int { storage.load(ordering: .acquiring) }
}

final class CrossA: Sendable {
  let b: CrossB

  init(b: CrossB) {
    self.b = b
  }
}

final class CrossB: Sendable {
  let a: CrossA

  init(a: CrossA) {
    self.a = a
  }
}
