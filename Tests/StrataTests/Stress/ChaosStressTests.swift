import Foundation
import Strata
import Synchronization
import Testing

/// Threads and tasks that, for a fixed number of operations each, resolve, register batches,
/// open and close scopes (synchronously and with `await`), with factories and disposers failing at
/// random depths, factories that sleep, and tasks cancelled mid-resolve. At the end every
/// invariant of creation, disposal and freeing must hold, and every error must be an expected one.
///
/// Each thread draws from its own seeded generator; a failure names the seed, and
/// `STRATA_STRESS_SEED=<seed>` replays the same operations (the interleaving may differ).
/// `STRATA_STRESS_OPERATIONS` changes the operations per thread (default 8,000).
@Suite struct ChaosStressTests {
  static let threads = 4
  static let asyncWorkers = 2
  static var operationsPerThread: Int {
    ProcessInfo.processInfo.environment["STRATA_STRESS_OPERATIONS"].flatMap { Int($0) } ?? 8000
  }
  static var operationsPerAsyncWorker: Int { max(1, operationsPerThread / 12) }

  @Test(.timeLimit(.minutes(3)))
  func threadsAndTasksResolvingRegisteringAndClosingUnderFaultsKeepEveryInvariant() async throws {
    let seed = StressSeed.master()
    let replay = StressSeed.replay(seed, filter: "ChaosStressTests")
    let ledger = StressLedger()
    let watchdog = StressWatchdog(seconds: 400, "the chaos run did not finish; \(replay)")
    defer { watchdog.disarm() }

    let outcome = await Self.run(seed: seed, ledger: ledger)
    guard outcome.finished else {
      Issue.record("workers did not finish within \(outcome.seconds) s (deadlock?); \(replay)")
      return
    }

    // Synchronous closes hand async disposers to background tasks: let them finish.
    let allDisposed = await stressWait(seconds: 20) { ledger.undisposedCount == 0 }
    if !allDisposed { Issue.record("\(ledger.undisposedCount) shared disposables never disposed; \(replay)") }

    let failures = ledger.endStateFailures()
    #expect(failures.isEmpty, "\(failures.count) failure(s), first: \(failures.prefix(8)); \(replay)")

    // Everything is closed and every reference dropped: every scope and instance must be freed.
    let freed = await stressWait(seconds: 20) { ledger.survivors().isEmpty }
    let survivors = ledger.survivors()
    #expect(freed, "\(survivors.count) still alive: \(survivors.prefix(8)); \(replay)")

    let summary = ledger.state.withLock { state in
      "\(state.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); "
        + "errors \(state.expectedErrors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
    }
    print("chaos (\(outcome.seconds) s): \(summary); \(replay)")
  }

  /// Runs the workers and closes everything; returns whether they finished in time. Every strong
  /// reference to the container, scopes and instances is gone when it returns.
  private static func run(seed: UInt64, ledger: StressLedger) async -> (finished: Bool, seconds: Double) {
    let started = ContinuousClock.now
    let world: StressWorld
    do {
      world = try StressWorld(ledger: ledger)
    } catch {
      Issue.record("setting up failed: \(error)")
      return (true, 0)
    }
    let operations = operationsPerThread
    // The window only tells a deadlock from a slow run: the run takes about 25 s under
    // ThreadSanitizer here, and CI machines of this kind have run the tests 3× slower.
    async let threadsDone = stressRunThreads(threads, seconds: 110) { index in
      let faults = StressFaults(seed: StressRandom.derive(seed, 1000 + index), ledger: ledger)
      StressFaults.$current.withValue(faults) {
        var random = StressRandom(seed: StressRandom.derive(seed, index))
        for _ in 0..<operations { world.step(&random) }
      }
      ledger.count("thread operations", operations)
    }
    let asyncOperations = operationsPerAsyncWorker
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<asyncWorkers {
        group.addTask {
          let faults = StressFaults(seed: StressRandom.derive(seed, 2000 + index), ledger: ledger)
          await StressFaults.$current.withValue(faults) {
            var random = StressRandom(seed: StressRandom.derive(seed, 100 + index))
            for _ in 0..<asyncOperations { await world.asyncStep(&random) }
          }
          ledger.count("task operations", asyncOperations)
        }
      }
    }
    let finished = await threadsDone
    let seconds = (ContinuousClock.now - started) / .seconds(1)
    guard finished else { return (false, seconds) }
    var random = StressRandom(seed: StressRandom.derive(seed, 3000))
    await world.closeEverything(&random)
    world.clear()
    return (true, (ContinuousClock.now - started) / .seconds(1))
  }
}

/// The shared state of a chaos run: the container, the open scopes, the registrations added.
///
/// `@unchecked Sendable`: the mutable lists are used only under `lock`; the container and scopes
/// are `Sendable`.
final class StressWorld: @unchecked Sendable {
  let ledger: StressLedger
  private let lock = NSLock()
  private var container: Container?
  private var sessions: [Scope] = []
  private var requests: [Scope] = []
  /// Recently closed scopes, to close again or resolve from.
  private var closed: [Scope] = []
  /// Every scope made with `makeScope`, to close at the end.
  private var every: [Scope] = []
  /// Extra registrations per scope name ("root" for the container).
  private var extras: [String: [Int]] = [:]
  private var nextNumber = 0

  init(ledger: StressLedger) throws {
    self.ledger = ledger
    let container = try Container { registry in StressWorld.registerBase(registry, ledger: ledger) }
    ledger.track(container, "container")
    self.container = container
  }

  private func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }

  /// The registrations every run starts with: a chain request → session → root with every
  /// lifetime, sync and async disposers, and a slow factory that notices cancellation.
  private static func registerBase(_ registry: Registrar, ledger: StressLedger) {
    registry.register(StressInstance.self, name: StressName.rootSingleton, lifetime: .singleton) { r in
      try ledger.make(StressResource.self, "root.singleton", shared: true, in: r.currentScope)
    }
    registry.register(StressInstance.self, name: StressName.sessionResource, lifetime: .scoped(.session)) {
      r in
      let root = try r.resolve(StressInstance.self, name: StressName.rootSingleton)
      return try ledger.make(
        StressResource.self, "session.resource", shared: true, in: r.currentScope, dependencies: [root])
    }
    registry.register(StressInstance.self, name: StressName.sessionAsync, lifetime: .scoped(.session)) { r in
      try ledger.make(StressAsyncResource.self, "session.async", shared: true, in: r.currentScope)
    }
    registry.register(StressInstance.self, name: StressName.requestResource, lifetime: .scoped(.request)) {
      r in
      let session = try r.resolve(StressInstance.self, name: StressName.sessionResource)
      let root = try r.resolve(StressInstance.self, name: StressName.rootSingleton)
      return try ledger.make(
        StressResource.self, "request.resource", shared: true, in: r.currentScope,
        dependencies: [session, root])
    }
    registry.register(StressInstance.self, name: StressName.requestPlain, lifetime: .scoped(.request)) { r in
      let resource = try r.resolve(StressInstance.self, name: StressName.requestResource)
      return try ledger.make(
        StressPlain.self, "request.plain", shared: true, in: r.currentScope, dependencies: [resource])
    }
    registry.register(StressInstance.self, name: StressName.requestAsync, lifetime: .scoped(.request)) { r in
      let session = try r.resolve(StressInstance.self, name: StressName.sessionAsync)
      return try ledger.make(
        StressAsyncResource.self, "request.async", shared: true, in: r.currentScope, dependencies: [session])
    }
    registry.register(StressInstance.self, name: StressName.transient) { r in
      let root = try r.resolve(StressInstance.self, name: StressName.rootSingleton)
      return try ledger.make(
        StressResource.self, "transient", shared: false, in: r.currentScope, dependencies: [root])
    }
    registry.register(StressInstance.self, name: StressName.slow) { r in
      usleep(300)
      if Task.isCancelled {
        ledger.count("cancellations seen by factories")
        throw CancellationError()
      }
      return try ledger.make(StressPlain.self, "slow", shared: false, in: r.currentScope)
    }
  }

  // MARK: Operations

  /// One random operation of a thread.
  func step(_ random: inout StressRandom) {
    let roll = random.below(100)
    switch roll {
    case 0..<6: makeSession()
    case 6..<20: makeRequest(&random)
    case 20..<62: resolveSomething(&random)
    case 62..<68: registerBatch(&random)
    case 68..<80: closeRequest(&random)
    case 80..<83: closeSession(&random)
    case 83..<86: closeAgain(&random)
    case 86..<95: withRequestScope(&random)
    default: resolveFromClosed(&random)
    }
  }

  /// One operation of an async task: a request in `withScope` that resolves a slow service and
  /// suspends, in a task that is cancelled at a random moment half of the time.
  func asyncStep(_ random: inout StressRandom) async {
    guard let session = pick(&random, from: \.sessions) else {
      makeSession()
      return
    }
    let name = newName("w")
    let cancelAfter = random.chance(50) ? random.below(500) : nil
    let ledger = self.ledger
    let task = Task {
      try await session.withScope(.request, name: name) { request in
        ledger.track(request, "scope \(name)")
        try self.resolve(.requestAsync, from: request)
        try self.resolve(.slow, from: request)
        try await Task.sleep(for: .microseconds(200))
        try self.resolve(.requestResource, from: request)
      }
    }
    if let cancelAfter {
      try? await Task.sleep(for: .microseconds(cancelAfter))
      task.cancel()
      ledger.count("tasks cancelled")
    }
    do {
      try await task.value
    } catch {
      ledger.caught(error, during: "withScope in a task")
    }
    ledger.count("async withScope")
  }

  private func newNumber() -> Int {
    locked {
      nextNumber += 1
      return nextNumber
    }
  }

  private func newName(_ prefix: String) -> String { "\(prefix)\(newNumber())" }

  private func pick(_ random: inout StressRandom, from list: KeyPath<StressWorld, [Scope]>) -> Scope? {
    let scopes = locked { self[keyPath: list] }
    return scopes.isEmpty ? nil : scopes[random.below(scopes.count)]
  }

  private func makeSession() {
    guard let container = locked({ sessions.count < 6 ? container : nil }) else { return }
    let name = newName("s")
    do {
      let session = try container.makeScope(.session, name: name)
      ledger.track(session, "scope \(name)")
      locked {
        sessions.append(session)
        every.append(session)
      }
      ledger.count("scopes made")
    } catch {
      ledger.caught(error, during: "makeScope(.session)")
    }
  }

  private func makeRequest(_ random: inout StressRandom) {
    guard locked({ requests.count < 24 }), let session = pick(&random, from: \.sessions) else { return }
    let name = newName("r")
    do {
      let request = try session.makeScope(.request, name: name)
      ledger.track(request, "scope \(name)")
      locked {
        requests.append(request)
        every.append(request)
      }
      ledger.count("scopes made")
    } catch {
      ledger.caught(error, during: "makeScope(.request) from \(session)")
    }
  }

  /// An open (or just closed) scope of a random kind.
  private func anyScope(_ random: inout StressRandom) -> Scope? {
    switch random.below(10) {
    case 0..<2: locked { container }
    case 2..<5: pick(&random, from: \.sessions)
    default: pick(&random, from: \.requests)
    }
  }

  /// The names resolvable from `scope`: by its kind, plus the extras of its chain.
  private func names(visibleFrom scope: Scope) -> [StressName] {
    var names: [StressName] = [.rootSingleton, .transient]
    if scope.tag == .session || scope.tag == .request { names += [.sessionResource, .sessionAsync] }
    if scope.tag == .request { names += [.requestResource, .requestPlain, .requestAsync, .slow] }
    var current: Scope? = scope
    while let next = current {
      names += locked { extras[next.name ?? "root"] ?? [] }.map(StressName.extra)
      current = next.parent
    }
    return names
  }

  /// Resolves `name` from `scope` and checks what comes back.
  func resolve(_ name: StressName, from scope: Scope) throws {
    let instance = try scope.resolve(StressInstance.self, name: name)
    ledger.handedOut(instance, from: scope)
  }

  private func resolveSomething(_ random: inout StressRandom) {
    guard let scope = anyScope(&random) else { return }
    let names = names(visibleFrom: scope)
    let name = names[random.below(names.count)]
    ledger.count("resolves")
    do {
      try resolve(name, from: scope)
    } catch {
      ledger.caught(error, during: "resolve \(name) from \(scope)")
    }
  }

  private func resolveFromClosed(_ random: inout StressRandom) {
    guard let scope = pick(&random, from: \.closed) else { return resolveSomething(&random) }
    ledger.count("resolves from closed scopes")
    do {
      try resolve(.rootSingleton, from: scope)
      ledger.violation("a resolve from closed \(scope) succeeded")
    } catch {
      ledger.caught(error, during: "resolve from closed \(scope)")
    }
  }

  private func registerBatch(_ random: inout StressRandom) {
    guard let scope = anyScope(&random) else { return }
    let count = 1 + random.below(4)
    var added: [(number: Int, lifetime: Lifetime)] = []
    for _ in 0..<count {
      let lifetime = [Lifetime.singleton, .scoped, .transient][random.below(3)]
      added.append((newNumber(), lifetime))
    }
    let dependsOnRoot = random.chance(50)
    let ledger = self.ledger
    do {
      try scope.register { registry in
        for (number, lifetime) in added {
          registry.register(StressInstance.self, name: StressName.extra(number), lifetime: lifetime) { r in
            let root =
              dependsOnRoot ? [try r.resolve(StressInstance.self, name: StressName.rootSingleton)] : []
            // The concrete type is drawn per instance: a registration that makes a disposable
            // instance after an undisposable one must still dispose it.
            let types: [StressInstance.Type] = [
              StressResource.self, StressAsyncResource.self, StressPlain.self,
            ]
            let type = types[StressFaults.current?.below(3) ?? 0]
            return try ledger.make(
              type, "extra\(number)", shared: lifetime != .transient, in: r.currentScope, dependencies: root)
          }
        }
      }
      let scopeName = scope.name ?? "root"
      locked { extras[scopeName, default: []] += added.map(\.number) }
      ledger.count("registrations", count)
    } catch {
      ledger.caught(error, during: "register into \(scope)")
    }
  }

  private func close(_ scope: Scope, _ random: inout StressRandom, what: String) {
    ledger.count("closes")
    if random.chance(50) {
      do {
        try scope.close()
      } catch {
        ledger.caught(error, during: "close() \(what)")
      }
    } else {
      let ledger = self.ledger
      stressBlockOn {
        do {
          try await scope.close()
        } catch {
          ledger.caught(error, during: "await close() \(what)")
        }
      }
    }
  }

  private func remember(closed scope: Scope) {
    locked {
      closed.append(scope)
      if closed.count > 16 { closed.removeFirst() }
    }
  }

  private func closeRequest(_ random: inout StressRandom) {
    let request = locked { requests.isEmpty ? nil : requests.remove(at: random.below(requests.count)) }
    guard let request else { return }
    close(request, &random, what: "request")
    remember(closed: request)
  }

  private func closeSession(_ random: inout StressRandom) {
    let session = locked { sessions.isEmpty ? nil : sessions.remove(at: random.below(sessions.count)) }
    guard let session else { return }
    locked { requests.removeAll { $0.parent === session } }
    close(session, &random, what: "session")
    remember(closed: session)
  }

  private func closeAgain(_ random: inout StressRandom) {
    guard let scope = pick(&random, from: \.closed) else { return }
    close(scope, &random, what: "again")
  }

  private func withRequestScope(_ random: inout StressRandom) {
    guard let session = pick(&random, from: \.sessions) else { return }
    let name = newName("w")
    let fails = random.chance(20)
    let ledger = self.ledger
    ledger.count("sync withScope")
    do {
      try session.withScope(.request, name: name) { request in
        ledger.track(request, "scope \(name)")
        try resolve(.requestResource, from: request)
        try resolve(.requestPlain, from: request)
        if fails { throw StressBodyFault() }
      }
    } catch {
      ledger.caught(error, during: "withScope on \(session)")
    }
  }

  // MARK: End

  /// Closes every scope made, in a random order and either way, then the container.
  func closeEverything(_ random: inout StressRandom) async {
    var scopes = locked { every }
    scopes.shuffle(using: &random)
    for scope in scopes {
      if random.chance(50) {
        do { try closeSynchronously(scope) } catch { ledger.caught(error, during: "final close()") }
      } else {
        do { try await scope.close() } catch { ledger.caught(error, during: "final await close()") }
      }
    }
    guard let container = locked({ container }) else { return }
    do { try await container.close() } catch { ledger.caught(error, during: "closing the container") }
    #expect(container.isClosed)
  }

  /// Drops every reference the world holds.
  func clear() {
    locked {
      container = nil
      sessions = []
      requests = []
      closed = []
      every = []
    }
  }
}
