import Foundation
import Strata
import StrataModules
import Synchronization
import Testing

// The services, modules and helpers of the second attack suite on modules
// (`AssaultModulesTests`), where `Fixtures.swift` and `Support/` have no equivalent.

// MARK: - Services

/// A plain service, registered under many names.
final class ChainNode: Sendable {
  init() {}
}

/// A service that says which module made it.
final class Clockwork: Sendable {
  let label: String

  init(_ label: String) {
    self.label = label
  }
}

/// A service that depends on ``Clockwork``.
final class ClockConsumer: Sendable {
  init() {}
}

/// A service whose registration's dependency on the `x` → `y` → `z` → `x` cycle of
/// ``NamedCycleModule`` leads into it.
final class CycleConsumer: Sendable {
  init() {}
}

/// A service whose registrations depend on each other through a name and a `.deferred` edge:
/// no cycle.
final class Gear: Sendable {
  init() {}
}

/// A service that depends on the second of two registrations whose names print alike.
final class NameConsumer: Sendable {
  init() {}
}

/// A name compared by identity that prints as `text`: two instances with one text are two names
/// that print alike.
final class ObjectName: Hashable, Sendable, CustomStringConvertible {
  let text: String

  init(_ text: String) {
    self.text = text
  }

  static func == (lhs: ObjectName, rhs: ObjectName) -> Bool { lhs === rhs }

  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

  var description: String { text }
}

/// A name with associated values.
enum NodeChannel: Hashable, Sendable {
  case tenant(String, Int)
  case plain
}

/// The error ``FailingOnceHookModule``'s first hook run throws.
struct FirstHookFailure: Error {}

/// Counts hook runs; safe to share between threads.
final class HookRuns: Sendable {
  private let count = Atomic<Int>(0)

  init() {}

  /// Adds one and returns the new count.
  func tick() -> Int { count.add(1, ordering: .sequentiallyConsistent).newValue }

  var value: Int { count.load(ordering: .sequentiallyConsistent) }
}

// MARK: - Modules

/// Module `index` of a chain of `length`: requires module `index + 1`, and registers
/// `ChainNode` named `index`, which depends on (and resolves) the one named `index + 1`.
struct ChainModule: Module {
  let index: Int
  let length: Int

  var moduleID: ModuleID { ModuleID(Self.self, index) }

  var requires: [any Module] { index + 1 < length ? [ChainModule(index: index + 1, length: length)] : [] }

  func register(in registry: Registrar) {
    let next = index + 1
    let length = length
    registry.register(
      ChainNode.self, name: index, dependsOn: next < length ? [.service(ChainNode.self, name: next)] : []
    ) { resolver in
      if next < length { _ = try resolver.resolve(ChainNode.self, name: next) }
      return ChainNode()
    }
  }
}

/// A cycle through names, `ChainNode` `x` → `y` → `z` → `x`, which ``CycleConsumer`` leads into;
/// and `Gear` → `Gear` named `.plain` → `Gear` again through a `.deferred` edge, which breaks
/// that cycle.
struct NamedCycleModule: Module {
  func register(in registry: Registrar) {
    registry.register(ChainNode.self, name: "x", dependsOn: [.service(ChainNode.self, name: "y")]) {
      resolver in
      _ = try resolver.resolve(ChainNode.self, name: "y")
      return ChainNode()
    }
    registry.register(ChainNode.self, name: "y", dependsOn: [.service(ChainNode.self, name: "z")]) {
      resolver in
      _ = try resolver.resolve(ChainNode.self, name: "z")
      return ChainNode()
    }
    registry.register(ChainNode.self, name: "z", dependsOn: [.service(ChainNode.self, name: "x")]) {
      resolver in
      _ = try resolver.resolve(ChainNode.self, name: "x")
      return ChainNode()
    }
    registry.register(CycleConsumer.self, dependsOn: [.service(ChainNode.self, name: "x")]) { _ in
      CycleConsumer()
    }
    registry.register(Gear.self, dependsOn: [.service(Gear.self, name: NodeChannel.plain)]) { _ in Gear() }
    registry.register(Gear.self, name: NodeChannel.plain, dependsOn: [.deferred(Gear.self)]) { _ in Gear() }
  }
}

/// The application's `Clockwork` singleton (labelled `app`) and a ``ClockConsumer`` of it.
struct AppClockModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clockwork.self, lifetime: .singleton, dependsOn: []) { _ in Clockwork("app") }
    registry.register(ClockConsumer.self, dependsOn: [.service(Clockwork.self)]) { _ in ClockConsumer() }
  }
}

/// An override of the `Clockwork` singleton, labelled `fake`.
struct FakeClockOverrideModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clockwork.self, lifetime: .singleton, dependsOn: []) { _ in Clockwork("fake") }
      .overriding()
  }
}

/// A module that registers something invalid: a shared lifetime with a runtime argument.
struct ArgumentSingletonModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clockwork.self, lifetime: .singleton) { (_, label: String) in Clockwork(label) }
  }
}

/// A module whose `loaded` hook throws ``FirstHookFailure`` the first time `runs` counts it.
struct FailingOnceHookModule: Module {
  let runs: HookRuns

  func register(in registry: Registrar) {
    registry.register(ChainNode.self, name: "hooked", dependsOn: []) { _ in ChainNode() }
  }

  func loaded(in scope: Scope) throws {
    if runs.tick() == 1 { throw FirstHookFailure() }
  }
}

/// Registrations with odd names: two `ObjectName`s (which may print alike), a 10,000-character
/// associated value, and a name with a line break, a line separator, a quote and markup.
struct ObjectNamesModule: Module {
  let first: ObjectName
  let second: ObjectName

  func register(in registry: Registrar) {
    registry.register(Clockwork.self, name: first, dependsOn: []) { _ in Clockwork("first") }
    registry.register(Clockwork.self, name: second, dependsOn: [.service(ChainNode.self)]) { _ in
      Clockwork("second")
    }
    registry.register(NameConsumer.self, dependsOn: [.service(Clockwork.self, name: second)]) { _ in
      NameConsumer()
    }
    let long = NodeChannel.tenant(String(repeating: "n", count: 10_000), 1)
    registry.register(ChainNode.self, name: long, dependsOn: []) { _ in ChainNode() }
    registry.register(ChainNode.self, name: "line\nbreak\u{2028}and\"quote]#<b>", dependsOn: []) { _ in
      ChainNode()
    }
  }
}

// MARK: - Helpers

/// Counts finished threads; safe to share between threads.
private final class FinishedThreads: Sendable {
  private let count = Atomic<Int>(0)

  func finish() { count.add(1, ordering: .sequentiallyConsistent) }

  var value: Int { count.load(ordering: .sequentiallyConsistent) }
}

/// Runs `body(index)` for `index` in `0..<count`, each on a new thread (with a `stackSize`-byte
/// stack, if given), and waits for them without blocking the caller's thread; as
/// `runOnThreads` of the `StrataTests` support, which this target cannot import.
///
/// - Returns: `true` if all threads finished within `timeout`; `false` if any did not (a
///   deadlock: the stuck threads are abandoned, so the test fails instead of hanging).
func runOnThreads(
  _ count: Int, stackSize: Int? = nil, timeout: Duration = .seconds(30),
  _ body: @escaping @Sendable (Int) -> Void
) async -> Bool {
  let finished = FinishedThreads()
  for index in 0..<count {
    let thread = Thread {
      body(index)
      finished.finish()
    }
    if let stackSize { thread.stackSize = stackSize }
    thread.start()
  }
  let deadline = ContinuousClock.now + timeout
  while finished.value < count {
    if ContinuousClock.now >= deadline { return false }
    try? await Task.sleep(for: .milliseconds(2))
  }
  return true
}

/// The ``ResolutionError`` that `body` throws; records an issue and returns `nil` if it throws
/// nothing or another error. As `resolutionError` of the `StrataTests` support.
func resolutionError(
  sourceLocation: Testing.SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> ResolutionError? {
  do {
    try body()
    Issue.record("expected a ResolutionError, but nothing was thrown", sourceLocation: sourceLocation)
  } catch let error as ResolutionError {
    return error
  } catch {
    Issue.record("expected a ResolutionError, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}
