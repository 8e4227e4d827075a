import Foundation
import Strata
import Synchronization
import Testing

// The world of the chaos run (ChaosStressTests): its services, the ledger that checks every
// creation, hand-out and disposal, and the fault plan each thread draws from.

/// The names of the chaos run's registrations, all of type ``StressInstance``.
enum StressName: Hashable, Sendable, CustomStringConvertible {
  case rootSingleton
  case sessionResource
  case sessionAsync
  case requestResource
  case requestPlain
  case requestAsync
  case transient
  case slow
  /// A registration added during the run by a `register` batch.
  case extra(Int)

  var description: String {
    switch self {
    case .rootSingleton: "root.singleton"
    case .sessionResource: "session.resource"
    case .sessionAsync: "session.async"
    case .requestResource: "request.resource"
    case .requestPlain: "request.plain"
    case .requestAsync: "request.async"
    case .transient: "transient"
    case .slow: "slow"
    case .extra(let number): "extra\(number)"
    }
  }
}

/// What a thread or task of the chaos run draws its faults from: whether a factory throws or
/// sleeps, whether an instance's disposer will throw. Bound to the thread or task with
/// ``current``, so that a factory runs the plan of the thread that runs it.
///
/// `@unchecked Sendable`: `random` is used only under `lock`.
final class StressFaults: @unchecked Sendable {
  @TaskLocal static var current: StressFaults?

  private let lock = NSLock()
  private var random: StressRandom
  private let ledger: StressLedger

  init(seed: UInt64, ledger: StressLedger) {
    random = StressRandom(seed: seed)
    self.ledger = ledger
  }

  private func draw<Result>(_ body: (inout StressRandom) -> Result) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return body(&random)
  }

  /// Runs at the start of a factory: throws (4 %) or sleeps briefly (5 %).
  func factoryStep(_ site: String) throws {
    let (fails, sleep) = draw { random in
      (random.chance(4), random.chance(5) ? UInt32(20 + random.below(180)) : 0)
    }
    if fails {
      ledger.count("factory faults")
      throw StressInjectedFault(site: site)
    }
    if sleep > 0 {
      ledger.count("factory sleeps")
      usleep(sleep)
    }
  }

  /// Whether a new instance's disposer throws (5 %).
  func disposerFails() -> Bool { draw { $0.chance(5) } }

  /// A number in `0 ..< bound`.
  func below(_ bound: Int) -> Int { draw { $0.below(bound) } }
}

/// An instance made by the chaos run. It knows which registration made it for which owner, and
/// checks its own disposal.
///
/// `@unchecked Sendable`: immutable `let`s (`owner` is a `weak let`, safe to load anywhere) and an
/// atomic counter.
class StressInstance: @unchecked Sendable {
  /// `owner/label` for a shared instance, `transient/label` otherwise.
  let key: String
  let serial: Int
  let isShared: Bool
  let dependencies: [StressInstance]
  weak let owner: Scope?
  let failsDisposal: Bool
  let ledger: StressLedger
  private let disposals = Atomic<Int>(0)

  required init(
    key: String, serial: Int, isShared: Bool, dependencies: [StressInstance], owner: Scope,
    failsDisposal: Bool, ledger: StressLedger
  ) {
    self.key = key
    self.serial = serial
    self.isShared = isShared
    self.dependencies = dependencies
    self.owner = owner
    self.failsDisposal = failsDisposal
    self.ledger = ledger
  }

  var isDisposed: Bool { disposals.load(ordering: .sequentiallyConsistent) > 0 }

  /// Whether scopes dispose instances of this type.
  class var isDisposable: Bool { false }

  /// Counts a disposal; a second one, or one while the owner is open, is a violation.
  func recordDisposal() throws {
    let count = disposals.add(1, ordering: .sequentiallyConsistent).newValue
    let ownerOpen = owner.map { !$0.isClosed } ?? false
    ledger.disposed(self, count: count, ownerOpen: ownerOpen)
    if failsDisposal { throw StressDisposalFault(label: key) }
  }
}

/// A synchronously disposable chaos instance.
final class StressResource: StressInstance, Disposable, @unchecked Sendable {
  override class var isDisposable: Bool { true }
  func dispose() throws { try recordDisposal() }
}

/// An asynchronously disposable chaos instance (its disposer suspends, but ignores cancellation).
final class StressAsyncResource: StressInstance, AsyncDisposable, @unchecked Sendable {
  override class var isDisposable: Bool { true }
  func dispose() async throws {
    await Task.yield()
    try recordDisposal()
  }
}

/// A chaos instance that needs no disposal.
final class StressPlain: StressInstance, @unchecked Sendable {}

/// Everything the chaos run observed, checked at the end.
///
/// `@unchecked Sendable`: all state is in `state`, behind its lock.
final class StressLedger: @unchecked Sendable {
  struct State {
    var serial = 0
    /// Creations per `owner/label` whose factory finished while the owner was open.
    var createdWhileOpen: [String: Int] = [:]
    /// Serials of every instance handed out per `owner/label` (shared instances only).
    var handedOut: [String: Set<Int>] = [:]
    /// Shared instances of a disposable type: serial → key.
    var sharedDisposables: [Int: String] = [:]
    /// Transient instances of a disposable type.
    var transientDisposables: Set<Int> = []
    /// Disposals per serial.
    var disposals: [Int: Int] = [:]
    var violations: [String] = []
    var unexpectedErrors: [String] = []
    var expectedErrors: [String: Int] = [:]
    var counts: [String: Int] = [:]
    var weakReferences: [StressWeak] = []
  }

  let state = Locked(State())

  func count(_ what: String, _ amount: Int = 1) {
    state.withLock { $0.counts[what, default: 0] += amount }
  }

  func violation(_ message: String) {
    state.withLock { $0.violations.append(message) }
  }

  /// Counts an error under its name, or keeps it as unexpected.
  func caught(_ error: any Error, during operation: String) {
    if let name = stressExpectedErrorName(error) {
      state.withLock { $0.expectedErrors[name, default: 0] += 1 }
    } else {
      let text = "\(operation): \(String(reflecting: error))"
      state.withLock { $0.unexpectedErrors.append(text) }
    }
  }

  func track(_ object: AnyObject, _ label: String) {
    state.withLock { $0.weakReferences.append(StressWeak(object, label)) }
  }

  /// Makes an instance for a factory, after drawing the factory's faults.
  func make(
    _ type: StressInstance.Type, _ label: String, shared: Bool, in scope: Scope,
    dependencies: [StressInstance] = []
  ) throws -> StressInstance {
    let faults = StressFaults.current
    try faults?.factoryStep(label)
    let ownerName = scope.name ?? "root"
    let key = shared ? "\(ownerName)/\(label)" : "transient/\(label)"
    let openNow = !scope.isClosed
    let serial = state.withLock { state -> Int in
      state.serial += 1
      if shared && openNow { state.createdWhileOpen[key, default: 0] += 1 }
      if type.isDisposable {
        if shared {
          state.sharedDisposables[state.serial] = key
        } else {
          state.transientDisposables.insert(state.serial)
        }
      }
      return state.serial
    }
    let instance = type.init(
      key: key, serial: serial, isShared: shared, dependencies: dependencies, owner: scope,
      failsDisposal: faults?.disposerFails() ?? false, ledger: self)
    track(instance, key)
    return instance
  }

  /// Checks an instance a resolve from `scope` returned: disposed (or with a disposed dependency)
  /// only if `scope` is closed by now; one instance per shared key.
  func handedOut(_ instance: StressInstance, from scope: Scope) {
    // Disposal happens after the owner (an ancestor or `scope` itself) starts closing, so
    // seeing the disposal first means seeing the close too.
    var disposed: [StressInstance] = []
    var pending = [instance]
    while let next = pending.popLast() {
      if next.isDisposed { disposed.append(next) }
      pending += next.dependencies
    }
    if !disposed.isEmpty && !scope.isClosed {
      violation(
        "open scope \(scope) handed out \(instance.key)#\(instance.serial), which holds disposed "
          + disposed.map { "\($0.key)#\($0.serial)" }.joined(separator: ", "))
    }
    guard instance.isShared else { return }
    _ = state.withLock { $0.handedOut[instance.key, default: []].insert(instance.serial) }
  }

  func disposed(_ instance: StressInstance, count: Int, ownerOpen: Bool) {
    state.withLock { state in
      state.disposals[instance.serial, default: 0] += 1
      if count > 1 { state.violations.append("\(instance.key)#\(instance.serial) disposed \(count) times") }
      if ownerOpen {
        state.violations.append("\(instance.key)#\(instance.serial) disposed while its owner was open")
      }
      if !instance.isShared {
        state.violations.append("transient \(instance.key)#\(instance.serial) disposed by a scope")
      }
    }
  }

  /// Shared disposables not yet disposed (background disposals may still be running).
  var undisposedCount: Int {
    state.withLock { state in state.sharedDisposables.keys.filter { state.disposals[$0] == nil }.count }
  }

  /// Every invariant the end state must satisfy, as messages; empty if all hold.
  func endStateFailures() -> [String] {
    state.withLock { state in
      var failures = state.violations
      failures += state.unexpectedErrors.map { "unexpected error: \($0)" }
      for (key, count) in state.createdWhileOpen where count > 1 {
        failures.append("\(key) created \(count) times while its owner was open")
      }
      for (key, serials) in state.handedOut where serials.count > 1 {
        failures.append("\(key) handed out \(serials.count) different instances: \(serials.sorted())")
      }
      for (serial, key) in state.sharedDisposables.sorted(by: { $0.key < $1.key }) {
        let count = state.disposals[serial] ?? 0
        if count != 1 {
          let handedOut = state.handedOut[key]?.contains(serial) == true
          failures.append(
            "\(key)#\(serial) disposed \(count) times, not once (\(handedOut ? "" : "never ")handed out)")
        }
      }
      return failures
    }
  }

  /// Labels of tracked scopes and instances that are still alive.
  func survivors() -> [String] {
    let references = state.withLock { $0.weakReferences }
    return references.filter { $0.object != nil }.map(\.label)
  }
}
