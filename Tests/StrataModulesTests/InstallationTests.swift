import Dispatch
import Foundation
import Strata
import StrataModules
import Synchronization
import Testing

// Installations that once loaded a module twice, lost one, or returned before it was visible.

/// Two module types whose names read alike (`Feature`).
enum PaymentsFeatures {
  struct Feature: Module {
    func register(in registry: Registrar) {
      registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
    }
  }
}

enum BillingFeatures {
  struct Feature: Module {
    func register(in registry: Registrar) {
      registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
    }
  }
}

/// A module identified by a parameter of any type.
struct ParameterModule<Parameter: Hashable & Sendable>: Module {
  let parameter: Parameter
  var moduleID: ModuleID { ModuleID(ParameterModule<Int>.self, parameter) }
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
  }
}

/// Registers `Clock` and `Database`, and logs its registration and hook.
struct BaseModule: Module {
  let log: EventLog
  func register(in registry: Registrar) {
    log.record("register base")
    registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
    registry.register(Database.self, lifetime: .singleton) { _ in Database() }
  }
  func loaded(in scope: Scope) throws { log.record("loaded base") }
}

struct ClockReplacement: Module {
  var requiresBase: EventLog?
  var requires: [any Module] { requiresBase.map { [BaseModule(log: $0)] } ?? [] }
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
  }
}

struct DatabaseReplacement: Module {
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton) { _ in Database() }
  }
}

struct RequiresBase: Module {
  let log: EventLog
  var requires: [any Module] { [BaseModule(log: log)] }
  func register(in registry: Registrar) {}
}

/// Registers `Mailer`, after waiting at `gate` if it has one.
struct MailerModule: Module {
  let log: EventLog
  var gate: Gate?
  func register(in registry: Registrar) {
    log.record("register mailer")
    gate?.pass()
    registry.register(Mailer.self, lifetime: .singleton) { _ in Mailer() }
  }
}

/// Waits at `gate`, then registers `Mailer` again: a duplicate of ``MailerModule``.
struct BlockingDuplicateModule: Module {
  let gate: Gate
  func register(in registry: Registrar) {
    gate.pass()
    registry.register(Mailer.self) { _ in Mailer() }
  }
}

final class NeedsMailer: Sendable {
  let mailer: Mailer
  init(mailer: Mailer) { self.mailer = mailer }
}

/// Requires ``MailerModule``; its hook resolves what it registered.
struct NeedsMailerModule: Module {
  let log: EventLog
  var requires: [any Module] { [MailerModule(log: log)] }
  func register(in registry: Registrar) {
    registry.register(NeedsMailer.self, NeedsMailer.init)
  }
  func loaded(in scope: Scope) throws { _ = try scope.resolve(NeedsMailer.self) }
}

/// Registers an eager `Database` whose factory fails `failures` times.
struct EagerModule: Module {
  let log: EventLog
  let failures: Failures
  func register(in registry: Registrar) {
    log.record("register eager")
    registry.register(Database.self, lifetime: .eagerSingleton) { _ in
      try failures.next()
      return Database()
    }
  }
}

struct RequiresEager: Module {
  let log: EventLog
  let failures: Failures
  var requires: [any Module] { [EagerModule(log: log, failures: failures)] }
  func register(in registry: Registrar) {}
}

final class Failures: Sendable {
  struct Failure: Error {}
  private let left: Atomic<Int>
  init(_ count: Int) { left = Atomic(count) }
  func next() throws {
    if left.subtract(1, ordering: .relaxed).newValue >= 0 { throw Failure() }
  }
}

/// A point a module's `register` stops at until the test lets it go.
final class Gate: Sendable {
  private let arrival = DispatchSemaphore(value: 0)
  private let release = DispatchSemaphore(value: 0)
  func pass() {
    arrival.signal()
    release.wait()
  }
  func waitForArrival() { arrival.wait() }
  func open() { release.signal() }
}

/// Runs `body` on a thread of its own; the result is read with `wait()`.
///
/// A new `Thread`, not `DispatchQueue.global()`: on Linux that pool is shared with the tasks of
/// the test run, and while every thread of it is busy or blocked (a test waiting at a `Gate` for
/// a body queued behind it) the body may not start for seconds.
final class Background: Sendable {
  private let done = DispatchSemaphore(value: 0)
  private let failure = EventLog()
  init(_ body: @escaping @Sendable () throws -> Void) {
    let thread = Thread { [done, failure] in
      do { try body() } catch { failure.record("\(error)") }
      done.signal()
    }
    thread.start()
  }
  /// Waits (at most 10 s) and returns the error the body threw, if any.
  func wait() -> String? {
    guard done.wait(timeout: .now() + 10) == .success else { return "timed out" }
    return failure.all.first
  }
}

@Suite(.timeLimit(.minutes(1)))
struct InstallationTests {
  @Test func modulesWhoseNamesReadAlikeAreStillTwoModules() throws {
    #expect(PaymentsFeatures.Feature().moduleID != BillingFeatures.Feature().moduleID)
    let error = #expect(throws: ModuleError.self) {
      try Container(modules: [PaymentsFeatures.Feature(), BillingFeatures.Feature()])
    }
    #expect(error?.code == .duplicateRegistration)
    let parameters = #expect(throws: ModuleError.self) {
      try Container(modules: [ParameterModule(parameter: 1), ParameterModule(parameter: UInt8(1))])
    }
    #expect(parameters?.code == .duplicateRegistration)
    #expect(parameters?.modules.count == 2)
  }

  @Test func aCompositionDoesNotLoadAgainABaseInstalledEarlierOrInAnAncestor() throws {
    let log = EventLog()
    let container = try Container(modules: [BaseModule(log: log)])
    let baseClock = try container.resolve(Clock.self)
    try container.install(BaseModule(log: log).overridden(by: ClockReplacement()))
    // The replacement still replaces: the latest `Clock` is its.
    #expect(try container.resolve(Clock.self) !== baseClock)
    #expect(try container.resolveAll(Clock.self).count == 2)
    let session = try container.makeScope(
      .session, modules: [BaseModule(log: log).overridden(by: ClockReplacement())])
    let child = try container.makeScope(.session, modules: [RequiresBase(log: log)])
    #expect(log.all == ["register base", "loaded base"])
    #expect(try container.resolveAll(Database.self).count == 1)
    #expect(try session.resolve(Database.self) === container.resolve(Database.self))
    #expect(try child.resolve(Database.self) === container.resolve(Database.self))
  }

  @Test func aCompositionLoadsItsBaseOnceWhenListedOrRequiredBesideIt() throws {
    let log = EventLog()
    let listed = try Container(modules: [
      BaseModule(log: log), BaseModule(log: log).overridden(by: ClockReplacement()),
    ])
    #expect(try listed.resolveAll(Database.self).count == 1)
    #expect(try listed.resolveAll(Clock.self).count == 1)
    let required = try Container(modules: [
      BaseModule(log: log).overridden(by: ClockReplacement(requiresBase: log))
    ])
    #expect(try required.resolveAll(Database.self).count == 1)
    #expect(log.all.filter { $0 == "register base" }.count == 2)  // once per container
  }

  @Test func aNestedCompositionCountsAsAllItsParts() throws {
    let log = EventLog()
    let container = try Container(modules: [
      BaseModule(log: log).overridden(by: ClockReplacement()).overridden(by: DatabaseReplacement())
    ])
    try container.install(RequiresBase(log: log))
    #expect(log.all.filter { $0 == "register base" }.count == 1)
    let installed = Set(container.installedModules)
    #expect(installed.isSuperset(of: [ModuleID(BaseModule.self), ModuleID(ClockReplacement.self)]))
  }

  @Test func aModuleWhoseEagerSingletonFailedStaysInstalled() throws {
    let log = EventLog()
    let failures = Failures(1)
    let container = Container()
    let error = #expect(throws: ResolutionError.self) {
      try container.install(EagerModule(log: log, failures: failures))
    }
    #expect(error?.underlying is Failures.Failure)
    #expect(container.installedModules == [ModuleID(EagerModule.self)])
    try container.install(RequiresEager(log: log, failures: failures))
    #expect(log.all.filter { $0 == "register eager" }.count == 1)
    #expect(try container.resolveAll(Database.self).count == 1)
  }

  /// One thread is inside a module's `register`; another installs the same module, or one that
  /// requires it: when that returns, the module's services resolve, and its hook saw them.
  @Test func anInstallationReturnsOnlyOnceWhatItNeedsIsPublished() throws {
    for round in 0..<20 {
      let log = EventLog()
      let gate = Gate()
      let container = Container()
      let first = Background { try container.install(MailerModule(log: log, gate: gate)) }
      gate.waitForArrival()
      let second = Background {
        if round.isMultiple(of: 2) {
          try container.install(MailerModule(log: log))
          _ = try container.resolve(Mailer.self)
        } else {
          try container.install(NeedsMailerModule(log: log))  // its hook resolves through Mailer
        }
      }
      gate.open()
      #expect(first.wait() == nil)
      #expect(second.wait() == nil)
      #expect(log.all == ["register mailer"])
    }
  }

  /// An installation that fails must not take down a module another installation needs.
  @Test func aFailedInstallationDoesNotLoseAModuleAnotherNeeds() throws {
    let log = EventLog()
    let gate = Gate()
    let container = Container()
    let failing = Background {
      try container.install(MailerModule(log: log), BlockingDuplicateModule(gate: gate))
    }
    gate.waitForArrival()
    let dependent = Background { try container.install(NeedsMailerModule(log: log)) }
    gate.open()
    #expect(failing.wait()?.contains("duplicateRegistration") == true)
    #expect(dependent.wait() == nil)
    #expect(
      Set(container.installedModules) == [ModuleID(MailerModule.self), ModuleID(NeedsMailerModule.self)])
    _ = try container.resolve(NeedsMailer.self)
  }

  /// A module's `register` that installs modules itself runs on instead of waiting for itself.
  @Test func aModuleMayInstallModulesFromItsRegistration() throws {
    struct Installing: Module {
      let into: Scope
      let log: EventLog
      func register(in registry: Registrar) {
        do { try into.install(MailerModule(log: log)) } catch { log.record("\(error)") }
      }
    }
    let log = EventLog()
    let container = Container()
    let session = try container.makeScope(.session)
    let installing = Background { try container.install(Installing(into: session, log: log)) }
    #expect(installing.wait() == nil)
    #expect(log.all == ["register mailer"])
    _ = try session.resolve(Mailer.self)
  }

  /// Eager singletons are made after the installation is published, without holding up other
  /// installations: one whose factory waits for another thread's installation finishes.
  @Test func anEagerSingletonMayWaitForAnotherThreadsInstallation() throws {
    struct WaitsForAnInstallation: Module {
      let other: Scope
      let log: EventLog
      func register(in registry: Registrar) {
        registry.register(Database.self, lifetime: .eagerSingleton) { [other, log] _ in
          let installing = Background { try other.install(MailerModule(log: log)) }
          if let failure = installing.wait() { log.record(failure) }
          return Database()
        }
      }
    }
    let log = EventLog()
    let container = Container()
    let session = try container.makeScope(.session)
    let installing = Background { try container.install(WaitsForAnInstallation(other: session, log: log)) }
    #expect(installing.wait() == nil)
    #expect(log.all == ["register mailer"])
    _ = try session.resolve(Mailer.self)
  }

  /// A chain of 10,000 modules, each requiring the next, installs each once, deepest first, and
  /// each registers its service. (Each step of the plan once copied the set of modules loaded
  /// before it: this took 18.7 s in a debug build, now 0.1 s.)
  @Test func aLongChainOfRequiredModulesInstallsEachOnceDeepestFirst() throws {
    struct Link: Module {
      let index: Int
      var moduleID: ModuleID { ModuleID(Self.self, index) }
      var requires: [any Module] { index + 1 < 10_000 ? [Link(index: index + 1)] : [] }
      func register(in registry: Registrar) {
        registry.register(Clock.self, name: index, lifetime: .singleton) { _ in Clock() }
      }
    }
    let container = try Container(modules: [Link(index: 0)])
    #expect(container.installedModules.count == 10_000)
    #expect(container.installedModules.first == ModuleID(Link.self, 9_999))
    #expect(container.installedModules.last == ModuleID(Link.self, 0))
    _ = try container.resolve(Clock.self, name: 9_999)
  }
}
