import Foundation
import Strata
import StrataModules
import Testing

/// Validation and graph export work on any scope tree and say the same thing each time: on empty
/// and closed containers, a 2,000-module chain, cycles through names, child overrides, odd names,
/// and while other threads install; a module that registers something invalid or whose hook
/// fails leaves its scope usable and is installed once it succeeds.
@Suite struct AssaultModulesTests {
  /// An empty container validates, and each export is the same twice; after the container
  /// closed, a session and a request made before still report and export, the same each time, and
  /// installing into the session fails with a `ModuleError`.
  @Test func anEmptyContainerAndAClosedOneValidateAndExportWithoutTrouble() async throws {
    let container = try Container(modules: [])
    #expect(try container.validate().isValid)
    for format in [GraphFormat.text, .dot, .mermaid] {
      #expect(container.exportGraph(as: format) == container.exportGraph(as: format))
    }
    let session = try container.makeScope(.session, modules: [AppClockModule()])
    let request = try session.makeScope(.request)
    try await container.close()
    // Closed scopes: no crash, and the reports and exports are still deterministic.
    #expect(request.validationReport().description == request.validationReport().description)
    let expecting = session.validationReport(expecting: [.request]).description
    #expect(session.validationReport(expecting: [.request]).description == expecting)
    for scope in [container, session, request] {
      for format in [GraphFormat.text, .dot, .mermaid] {
        #expect(scope.exportGraph(as: format) == scope.exportGraph(as: format))
      }
    }
    #expect(throws: ModuleError.self) { try session.install(FakeClockOverrideModule()) }
  }

  /// A chain of 2,000 modules, each requiring the next: all are installed, the container
  /// validates, the exports show the chain's end, and resolving its head succeeds or stops at the
  /// depth limit with a typed error (not a crash). On a thread with an 8 MiB stack.
  @Test func aTwoThousandModuleChainInstallsValidatesExportsAndResolves() async throws {
    let length = 2_000
    let outcome = EventLog()
    let finished = await runOnThreads(1, stackSize: 8 << 20, timeout: .seconds(60)) { _ in
      outcome.record(chainOutcome(length: length))
    }
    #expect(finished, "the chain hung")
    #expect(outcome.all == ["ok"] || outcome.all == ["resolve: depthLimitExceeded"], "\(outcome.all)")
  }

  /// A cycle `x` → `y` → `z` → `x` through names: validation reports cycles only among those
  /// registrations (and the consumer leading into them), not the `Gear` pair a `.deferred` edge
  /// breaks; resolving `x` fails with a typed `cycle`.
  @Test func aCycleThroughNamedRegistrationsIsReportedAndALazyEdgeBreaksOne() throws {
    let container = try Container(modules: [NamedCycleModule()])
    let report = container.validationReport()
    let cycles = report.problems.filter { $0.code == .cycle }
    let cycleTypes = [ObjectIdentifier(ChainNode.self), ObjectIdentifier(CycleConsumer.self)]
    #expect(!cycles.isEmpty)
    #expect(
      cycles.allSatisfy { $0.path.allSatisfy { cycleTypes.contains(ObjectIdentifier($0.serviceType)) } },
      "\(cycles)")
    #expect(!report.problems.contains { ObjectIdentifier($0.key.serviceType) == ObjectIdentifier(Gear.self) })
    // The run-time behaviour agrees: a typed cycle, no overflow.
    #expect(resolutionError { _ = try container.resolve(ChainNode.self, name: "x") }?.code == .cycle)
  }

  /// An overriding module installed in a session: the session resolves the override, the
  /// container its own; the session's report has no duplicate, its export marks the override,
  /// and a second session built alike exports the same text and DOT.
  @Test func anOverrideInAChildScopeWinsThereOnlyAndIsNotADuplicate() throws {
    let container = try Container(modules: [AppClockModule()])
    let session = try container.makeScope(.session, modules: [FakeClockOverrideModule()])
    #expect(try session.resolve(Clockwork.self).label == "fake")
    #expect(try container.resolve(Clockwork.self).label == "app")
    let report = session.validationReport(expecting: [.request])
    #expect(!report.problems.contains { $0.code == .duplicateRegistration }, "\(report)")
    let text = session.exportGraph(as: .text)
    #expect(text.contains("override"))
    let other = try container.makeScope(.session, modules: [FakeClockOverrideModule()])
    #expect(other.exportGraph(as: .text) == text)
    #expect(other.exportGraph(as: .dot) == session.exportGraph(as: .dot))
  }

  /// A module that registers a singleton with a runtime argument: building a container with it
  /// throws; installing it (after a valid module, in one call) throws a `ResolutionError` or a
  /// `ModuleError` and installs neither module; the container then installs the valid one.
  @Test func aModuleRegisteringSomethingInvalidFailsTypedAndRegistersNothing() throws {
    #expect(throws: (any Error).self) {
      _ = try Container(modules: [AppClockModule(), ArgumentSingletonModule()])
    }
    let container = Container()
    do {
      try container.install(AppClockModule(), ArgumentSingletonModule())
      Issue.record("an invalid registration was accepted")
    } catch is ResolutionError {
      // Refused as a registration.
    } catch is ModuleError {
      // Refused as a module.
    } catch {
      Issue.record("an untyped error: \(error)")
    }
    #expect(container.installedModules.isEmpty)
    #expect(resolutionError { _ = try container.resolve(Clockwork.self) }?.code == .notRegistered)
    // The scope is still usable.
    try container.install(AppClockModule())
    #expect(try container.resolve(Clockwork.self).label == "app")
  }

  /// A module whose hook fails the first time: that installation throws a `ModuleError`; the
  /// next runs the hook again and succeeds; a third is skipped (the hook does not run); the
  /// container validates.
  @Test func aFailingHookIsRetriedOnceAndValidationStillSeesItsRegistrations() throws {
    let runs = HookRuns()
    let container = Container()
    #expect(throws: ModuleError.self) { try container.install(FailingOnceHookModule(runs: runs)) }
    try container.install(FailingOnceHookModule(runs: runs))
    #expect(runs.value == 2)
    try container.install(FailingOnceHookModule(runs: runs))
    #expect(runs.value == 2)
    #expect(try container.validate().isValid)
  }

  /// Two containers built alike, with names that print alike, a huge name and a name with line
  /// breaks, quotes and markup: every export and report is the same twice and across the two; no
  /// DOT statement is broken over lines; no export keeps a line separator; and the two names that
  /// print alike are two DOT nodes.
  @Test func exportsAreDeterministicAcrossContainersBuiltAlikeWithOddNames() throws {
    func build() throws -> (Container, Scope) {
      let container = try Container(modules: [
        ObjectNamesModule(first: ObjectName("same"), second: ObjectName("same")), AppClockModule(),
      ])
      let session = try container.makeScope(
        .session, modules: [NamedCycleModule(), FakeClockOverrideModule()])
      return (container, session)
    }
    let (firstContainer, first) = try build()
    let (secondContainer, second) = try build()
    for format in [GraphFormat.text, .dot, .mermaid] {
      let text = first.exportGraph(as: format)
      #expect(text == first.exportGraph(as: format))
      #expect(text == second.exportGraph(as: format), "\(format) export differs between alike containers")
    }
    #expect(first.validationReport().description == second.validationReport().description)
    // Every line break is neutralised: each DOT statement is one line.
    let dot = first.exportGraph(as: .dot)
    for line in dot.split(separator: "\n", omittingEmptySubsequences: false) {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      #expect(
        trimmed.hasSuffix(";") || trimmed.hasSuffix("{") || trimmed == "}" || trimmed.isEmpty,
        "a DOT line is broken: \(trimmed.prefix(80))")
    }
    #expect(!first.exportGraph(as: .text).contains("\u{2028}"))
    #expect(!first.exportGraph(as: .mermaid).contains("\u{2028}"))
    // Two registrations whose names print alike are two nodes.
    let nodes = dot.split(separator: "\n").filter { $0.contains("[label=\"Clockwork named same") }
    #expect(nodes.count == 2)
    withExtendedLifetime((firstContainer, secondContainer)) {}
  }

  /// Six threads exporting, validating and making sessions that install module chains, 30 rounds
  /// each, at once: no deadlock or crash, every report valid, every session made.
  @Test func validationAndExportRaceWithInstallationsWithoutCrashing() async throws {
    let container = try Container(modules: [AppClockModule()])
    let problems = EventLog()
    let finished = await runOnThreads(6) { index in
      for round in 0..<30 {
        switch index % 3 {
        case 0:
          _ = container.exportGraph(as: .dot)
        case 1:
          let report = container.validationReport()
          if !report.isValid { problems.record("invalid: \(report)") }
        default:
          do {
            _ = try container.makeScope(.session, modules: [ChainModule(index: round, length: round + 3)])
          } catch {
            problems.record("makeScope: \(error)")
          }
        }
      }
    }
    #expect(finished, "deadlock")
    #expect(problems.all.isEmpty, "\(problems.all.prefix(3))")
  }
}

/// Installs a chain of `length` modules, validates and exports it and resolves its head: `"ok"`,
/// `"resolve: <code>"` for a resolve that failed typed, or what went wrong.
private func chainOutcome(length: Int) -> String {
  do {
    let container = try Container(modules: [ChainModule(index: 0, length: length)])
    guard container.installedModules.count == length else {
      return "installed \(container.installedModules.count)"
    }
    let report = container.validationReport()
    guard report.isValid else { return "invalid: \(report.problems.prefix(2))" }
    let text = container.exportGraph(as: .text)
    _ = container.exportGraph(as: .dot)
    _ = container.exportGraph(as: .mermaid)
    guard text.contains("ChainNode named \(length - 1)") else { return "export lacks the end of the chain" }
    do {
      _ = try container.resolve(ChainNode.self, name: 0)
    } catch let error as ResolutionError {
      // A typed limit is acceptable; a crash is not.
      return "resolve: \(error.code)"
    }
    return "ok"
  } catch {
    return "threw \(error)"
  }
}
