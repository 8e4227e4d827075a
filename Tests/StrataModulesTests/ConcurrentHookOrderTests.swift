import Foundation
import Strata
import StrataModules
import Testing

// Hooks of one module listed by two installations on two threads: whichever runs it, the hooks
// after it wait for it to end, as in one installation.

/// A module that records when its hook starts and ends, and runs `body` in between.
private struct Step: Module {
  let name: String
  var required: [any Module] = []
  let log: EventLog
  let body: @Sendable () throws -> Void
  var moduleID: ModuleID { ModuleID(Self.self, name) }
  var requires: [any Module] { required }
  func register(in registry: Registrar) {}
  func loaded(in scope: Scope) throws {
    log.record("start \(name)")
    defer { log.record("end \(name)") }
    try body()
  }
}

private struct Failure: Error {}

@Suite(.timeLimit(.minutes(1)))
struct ConcurrentHookOrderTests {
  /// Installs `first`, `middle` and `last` (which requires `middle`) on one thread; once the hook
  /// of `first` runs, installs `middle` on a second thread, whose installation takes over its
  /// pending hook; the hook of `first` returns once that one has started.
  private func race(
    log: EventLog, middle: @escaping @Sendable (DispatchSemaphore) throws -> Void
  ) throws -> (first: String?, second: String?) {
    let container = Container()
    let firstStarted = DispatchSemaphore(value: 0)
    let middleStarted = DispatchSemaphore(value: 0)
    let lastStarted = DispatchSemaphore(value: 0)
    let first = Step(name: "first", log: log) {
      firstStarted.signal()
      _ = middleStarted.wait(timeout: .now() + 5)
    }
    let middleStep = Step(name: "middle", log: log) {
      middleStarted.signal()
      try middle(lastStarted)
    }
    let last = Step(name: "last", required: [middleStep], log: log) { lastStarted.signal() }
    let one = Background { try container.install(first, middleStep, last) }
    #expect(firstStarted.wait(timeout: .now() + 5) == .success)
    let two = Background { try container.install(middleStep) }
    return (one.wait(), two.wait())
  }

  @Test func aHookAnotherInstallationRunsEndsBeforeTheHooksAfterItStart() throws {
    let log = EventLog()
    // The middle hook gives the last one 0.3 s to start (which it must not) before it ends.
    let (first, second) = try race(log: log) { lastStarted in
      _ = lastStarted.wait(timeout: .now() + 0.3)
    }
    #expect(first == nil)
    #expect(second == nil)
    let events = log.all
    #expect(events.filter { $0 == "end middle" }.count == 1)
    let middleEnded = try #require(events.firstIndex(of: "end middle"))
    let lastStarted = try #require(events.firstIndex(of: "start last"))
    #expect(middleEnded < lastStarted, "\(events)")
  }

  @Test func aHookThatFailsInAnotherInstallationRunsAgainBeforeTheHooksAfterIt() throws {
    let log = EventLog()
    let runs = FactoryRuns()
    let (first, second) = try race(log: log) { lastStarted in
      runs.tick()
      guard runs.value == 1 else { return }
      _ = lastStarted.wait(timeout: .now() + 0.3)
      throw Failure()
    }
    // The second installation reports the failure; the first runs the hook again, then the last.
    #expect(second?.hasPrefix("loadHookFailed: the loaded(in:) hook of Step(\"middle\") threw") == true)
    #expect(first == nil)
    #expect(runs.value == 2)
    let events = log.all
    #expect(events.filter { $0 == "start last" }.count == 1)
    let middleEnded = try #require(events.lastIndex(of: "end middle"))
    let lastStarted = try #require(events.firstIndex(of: "start last"))
    #expect(middleEnded < lastStarted, "\(events)")
  }

  @Test func aSessionsFeatureWaitsForTheHookOfTheContainersModuleItRequires() throws {
    let log = EventLog()
    let container = Container()
    let sharedStarted = DispatchSemaphore(value: 0)
    let featureStarted = DispatchSemaphore(value: 0)
    // The shared hook gives the feature's 0.3 s to start (which it must not) before it ends.
    let shared = Step(name: "shared", log: log) {
      sharedStarted.signal()
      _ = featureStarted.wait(timeout: .now() + 0.3)
    }
    let feature = Step(name: "feature", required: [shared], log: log) { featureStarted.signal() }
    let one = Background { try container.install(shared) }
    #expect(sharedStarted.wait(timeout: .now() + 5) == .success)
    let two = Background { _ = try container.makeScope(.session, modules: [feature]) }
    #expect(one.wait() == nil)
    #expect(two.wait() == nil)
    #expect(log.all == ["start shared", "end shared", "start feature", "end feature"])
  }

  @Test func aSessionRunsTheFailedHookOfTheContainersModuleItRequiresInTheContainer() throws {
    let log = EventLog()
    let runs = FactoryRuns()
    let container = Container()
    struct Shared: Module {
      let log: EventLog
      let runs: FactoryRuns
      func register(in registry: Registrar) {}
      func loaded(in scope: Scope) throws {
        runs.tick()
        log.record("shared in \(scope)")
        if runs.value == 1 { throw Failure() }
      }
    }
    let shared = Shared(log: log, runs: runs)
    #expect(throws: ModuleError.self) { try container.install(shared) }
    let feature = Step(name: "feature", required: [shared], log: log) {}
    let session = try container.makeScope(.session, name: "s1", modules: [feature])
    #expect(log.all == ["shared in root", "shared in root", "start feature", "end feature"])
    // Run once, it is not run again.
    _ = try container.makeScope(.session, modules: [feature])
    try session.install(shared)
    #expect(runs.value == 2)
  }

  /// Six threads install one chain of modules at once, each until it succeeds, while the middle
  /// hook fails twice: every hook runs to its end once, each after the one it requires.
  @Test(arguments: 0..<5)
  func manyInstallationsOfOneChainRunEachHookOnceInOrder(round: Int) throws {
    let log = EventLog()
    let failures = FactoryRuns()
    let container = Container()
    let a = Step(name: "a", log: log) {}
    let b = Step(name: "b", required: [a], log: log) {
      failures.tick()
      if failures.value <= 2 { throw Failure() }
    }
    let c = Step(name: "c", required: [b], log: log) {}
    let threads = (0..<6).map { _ in
      Background {
        for _ in 0..<4 {
          do {
            try container.install(c)
            return
          } catch let error as ModuleError where error.code == .loadHookFailed {
            continue
          }
        }
        throw Failure()
      }
    }
    for thread in threads { #expect(thread.wait() == nil, "round \(round)") }
    let events = log.all
    #expect(events.filter { $0 == "start a" }.count == 1, "\(events)")
    #expect(events.filter { $0 == "start b" }.count == 3, "\(events)")
    #expect(events.filter { $0 == "start c" }.count == 1, "\(events)")
    let aEnded = try #require(events.firstIndex(of: "end a"))
    let bEnded = try #require(events.lastIndex(of: "end b"))
    let cStarted = try #require(events.firstIndex(of: "start c"))
    #expect(events.indices.filter { events[$0] == "start b" }.allSatisfy { $0 > aEnded }, "\(events)")
    #expect(bEnded < cStarted, "\(events)")
  }

  /// Two hooks on two threads, each installing the other's module while the other runs: neither
  /// waits for the other forever.
  @Test func hooksThatInstallEachOthersModuleDoNotWaitForEachOther() throws {
    let log = EventLog()
    let container = Container()
    let started = (x: DispatchSemaphore(value: 0), y: DispatchSemaphore(value: 0))
    // Each hook installs the other module (a stand-in of the same identity), whose hook the other
    // thread is running.
    let x = Step(name: "x", log: log) {
      started.x.signal()
      _ = started.y.wait(timeout: .now() + 5)
      try container.install(Step(name: "y", log: log) {})
    }
    let y = Step(name: "y", log: log) {
      started.y.signal()
      _ = started.x.wait(timeout: .now() + 5)
      try container.install(Step(name: "x", log: log) {})
    }
    let one = Background { try container.install(x) }
    let two = Background { try container.install(y) }
    #expect(one.wait() == nil)
    #expect(two.wait() == nil)
    #expect(Set(log.all) == ["start x", "end x", "start y", "end y"])
    #expect(log.all.count == 4)
  }
}
