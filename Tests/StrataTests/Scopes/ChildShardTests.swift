import Foundation
import Strata
import Testing

/// The container's list of children to close is split into shards by the thread that made each
/// child. These tests attack what the split could break: children made on many threads must all
/// close before the container disposes its own instances, a child made, linked and closed on three
/// different threads must leave its shard cleanly, and two threads linking one child at once must
/// link it once.
@Suite struct ChildShardTests {
  /// A container with a disposable singleton (`"pool"`) and two request-scoped disposables
  /// (`"a"`, `"b"`), all logging their disposal into `log` and counting into `disposed`; `created`
  /// counts the instances of `"a"` made.
  private static func container(
    log: Collector<String>, disposed: Counter, created: Counter = Counter()
  ) throws -> Container {
    try Container { registry in
      registry.register(TrackedResource.self, name: "pool", lifetime: .singleton) { _ in
        TrackedResource("pool", log: log)
      }
      registry.register(TrackedResource.self, name: "a", lifetime: .scoped(.request)) { _ in
        created.increment()
        return TrackedResource("a", log: log, disposed: disposed)
      }
      registry.register(TrackedResource.self, name: "b", lifetime: .scoped(.request)) { _ in
        TrackedResource("b", log: log, disposed: disposed)
      }
    }
  }

  @Test(.timeLimit(.minutes(1)))
  func childrenMadeOnManyThreadsAllCloseBeforeTheContainerDisposesItsOwn() async throws {
    let log = Collector<String>()
    let disposed = Counter()
    let container = try Self.container(log: log, disposed: disposed)
    _ = try container.resolve(TrackedResource.self, name: "pool")
    let kept = Collector<Scope>()
    let dropped = Collector<WeakBox<Scope>>()
    let threads = 8
    let perThread = 40

    let finished = await runOnThreads(threads) { _ in
      for index in 0..<perThread {
        guard let request = try? container.makeScope(.request),
          (try? request.resolve(TrackedResource.self, name: "a")) != nil
        else { continue }
        // Half stay open and held; half are dropped unclosed: the container's list keeps those.
        if index.isMultiple(of: 2) { kept.append(request) } else { dropped.append(WeakBox(request)) }
      }
    }
    #expect(finished)
    #expect(disposed.value == 0)
    #expect(dropped.elements.allSatisfy { $0.object != nil }, "an unclosed child with a disposable was freed")

    try closeSynchronously(container)

    #expect(disposed.value == threads * perThread)
    #expect(log.elements.last == "dispose pool")
    #expect(log.elements.filter { $0 == "dispose pool" }.count == 1)
    #expect(kept.elements.allSatisfy { $0.isClosed })
    #expect(dropped.elements.allSatisfy { $0.object == nil }, "a closed child stayed alive")
  }

  @Test(.timeLimit(.minutes(1)))
  func aChildMadeLinkedAndClosedOnThreeThreadsLeavesItsShard() async throws {
    let log = Collector<String>()
    let disposed = Counter()
    let container = try Self.container(log: log, disposed: disposed)

    for _ in 0..<50 {
      // The threads reach the request through `held`, never by capturing it: a finished thread's
      // closure may be freed after `runOnThreads` returns, and would keep the request alive.
      let held = Slot<Scope>()
      #expect(await runOnThreads(1) { _ in held.value = try? container.makeScope(.request) })
      let weak = WeakBox(held.value)
      #expect(await runOnThreads(1) { _ in _ = try? held.value?.resolve(TrackedResource.self, name: "a") })
      #expect(await runOnThreads(1) { _ in try? held.value?.close() })
      #expect(held.value?.isClosed == true)
      held.value = nil
      #expect(weak.object == nil, "the closed child is still held by its parent's list")
    }
    #expect(disposed.value == 50)

    try closeSynchronously(container)
    #expect(disposed.value == 50, "the container's close disposed an already closed child again")
  }

  @Test(.timeLimit(.minutes(1)))
  func twoThreadsTakingARequestsFirstDisposablesAtOnceLinkItOnce() async throws {
    let log = Collector<String>()
    let disposed = Counter()
    let container = try Self.container(log: log, disposed: disposed)
    let rounds = 200

    for _ in 0..<rounds {
      // Reached through `held`, not captured (see the test above).
      let held = Slot<Scope>()
      held.value = try container.makeScope(.request)
      let weak = WeakBox(held.value)
      let barrier = Barrier(parties: 2)
      let finished = await runOnThreads(2) { index in
        barrier.arriveAndWait()
        _ = try? held.value?.resolve(TrackedResource.self, name: index == 0 ? "a" : "b")
      }
      #expect(finished)
      if let request = held.value { try closeSynchronously(request) }
      held.value = nil
      #expect(weak.object == nil, "the request was linked twice: its parent's list still holds it")
    }
    #expect(disposed.value == 2 * rounds)

    try closeSynchronously(container)
    #expect(disposed.value == 2 * rounds)
  }

  @Test(.timeLimit(.minutes(1)))
  func aContainerClosingWhileThreadsLinkChildrenDisposesEachInstanceOnce() async throws {
    for _ in 0..<20 {
      let log = Collector<String>()
      let disposed = Counter()
      let made = Counter()
      let container = try Self.container(log: log, disposed: disposed, created: made)
      let started = Barrier(parties: 5)

      // Plain threads all, the closer too: a test that blocks a thread of the task pool starves
      // the other suites' asynchronous closes.
      let finished = await runOnThreads(5) { index in
        started.arriveAndWait()
        guard index < 4 else {
          usleep(2_000)
          try? container.close()
          return
        }
        while let request = try? container.makeScope(.request) {
          // An instance made while the container closes is disposed, and its resolve throws.
          _ = try? request.resolve(TrackedResource.self, name: "a")
          if made.value.isMultiple(of: 3) { try? request.close() }
        }
      }
      #expect(finished)

      #expect(container.isClosed)
      #expect(made.value == disposed.value, "made \(made.value), disposed \(disposed.value)")
    }
  }
}
