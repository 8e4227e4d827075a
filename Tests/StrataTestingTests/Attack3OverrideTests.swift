import Foundation
import Strata
import StrataTesting
import Synchronization
import Testing

/// The gateway one parallel test provides, by its number.
private struct NumberedGateway: Gateway {
  let number: Int
}

/// A key the base container adds while the tests run.
private struct Addition: Sendable {
  let round: Int
}

/// How many tests have started.
private final class StartCount: Sendable {
  private let count = Atomic<Int>(0)
  func increment() { count.add(1, ordering: .sequentiallyConsistent) }
  var value: Int { count.load(ordering: .sequentiallyConsistent) }
}

/// The scopes the tests made, collected from several tasks.
///
/// `@unchecked Sendable`: `scopes` is read and written only while `lock` is held (an `NSLock`,
/// which ThreadSanitizer sees).
private final class ScopeList: @unchecked Sendable {
  private let lock = NSLock()
  private var scopes: [Scope] = []

  func append(_ scope: Scope) { lock.withLock { scopes.append(scope) } }
  var all: [Scope] { lock.withLock { scopes } }
}

/// Per-test override scopes over a container whose gateway is an `unimplemented` placeholder:
/// 100 parallel tasks, each with its own child scope providing its own gateway, while the base
/// container keeps publishing batches (a fresh placeholder among them) or closes.
@Suite struct Attack3OverrideTests {
  /// The application: the gateway a placeholder, `Billing` a transient built from it.
  private static func application() throws -> Container {
    try Container { registry in
      registry.registerUnimplemented((any Gateway).self)
      registry.register(Billing.self) { resolver in Billing(gateway: try resolver.resolve((any Gateway).self))
      }
    }
  }

  /// One test's work: 20 rounds of resolving `Billing` from its scope and from a request below
  /// it, yielding between rounds. Each round's outcome: "own", "closed" (a `scopeClosed` error),
  /// or what went wrong.
  private static func runTest(_ number: Int, in container: Container) async -> [String] {
    let scope: Scope
    do {
      scope = try container.makeScope(.session, name: "test-\(number)") { registry in
        registry.register((any Gateway).self) { _ in NumberedGateway(number: number) }
      }
    } catch let error as ResolutionError where error.code == .scopeClosed {
      return ["closed"]
    } catch {
      return ["makeScope threw \(error)"]
    }
    var outcomes: [String] = []
    for _ in 0..<20 {
      do {
        let billing = try scope.resolve(Billing.self)
        let request = try scope.makeScope(.request)
        let fromRequest = try request.resolve(Billing.self)
        try await request.close()
        let seen = [billing, fromRequest].map { ($0.gateway as? NumberedGateway)?.number }
        outcomes.append(seen == [number, number] ? "own" : "test \(number) saw \(seen)")
      } catch let error as ResolutionError where error.code == .scopeClosed {
        outcomes.append("closed")
      } catch {
        outcomes.append("test \(number): \(error)")
      }
      await Task.yield()
    }
    try? await scope.close()
    return outcomes
  }

  /// Whether resolving `Billing` from the container fails with the placeholder's error.
  private static func containerStillFailsWithThePlaceholder(_ container: Container) -> Bool {
    do {
      _ = try container.resolve(Billing.self)
      return false
    } catch let error as ResolutionError {
      return error.underlying is UnimplementedError
    } catch {
      return false
    }
  }

  /// 100 tests in parallel while the base container publishes 100 batches, each with a new key
  /// and a fresh placeholder for the gateway (the nearest registration still wins: every test sees
  /// its own gateway, in its scope and in a request below it), and the container itself keeps
  /// failing with the placeholder's `UnimplementedError`.
  @Test func parallelOverridesStayIsolatedWhileTheBaseContainerRegisters() async throws {
    let container = try Self.application()
    let outcomes = try await withThrowingTaskGroup(of: [String].self) { group in
      group.addTask {
        for round in 0..<100 {
          try container.register { registry in
            registry.registerUnimplemented((any Gateway).self)
            registry.register(instance: Addition(round: round))
          }
          await Task.yield()
        }
        return []
      }
      for number in 0..<100 {
        group.addTask { await Self.runTest(number, in: container) }
      }
      var all: [String] = []
      for try await found in group { all += found }
      return all
    }

    #expect(outcomes.count == 2_000)
    #expect(outcomes.allSatisfy { $0 == "own" }, "\(Set(outcomes).subtracting(["own"]).prefix(5))")
    #expect(Self.containerStillFailsWithThePlaceholder(container))
    #expect(try container.resolve(Addition.self).round == 99)
    try await container.close()
  }

  /// The same 100 tests while the base container closes after a few of them ran: every round ends
  /// with the test's own gateway or a `scopeClosed` error, never another test's gateway, the
  /// placeholder's error or a hang; and once the close returned, every test's scope is closed.
  @Test func parallelOverridesEndCleanlyWhenTheBaseContainerCloses() async throws {
    let container = try Self.application()
    let started = StartCount()
    let scopes = ScopeList()
    let outcomes = try await withThrowingTaskGroup(of: [String].self) { group in
      group.addTask {
        while started.value < 10 { await Task.yield() }
        try await container.close()
        return []
      }
      for number in 0..<100 {
        group.addTask {
          started.increment()
          if let scope = try? container.makeScope(.request) { scopes.append(scope) }
          return await Self.runTest(number, in: container)
        }
      }
      var all: [String] = []
      for try await found in group { all += found }
      return all
    }

    let unexpected = Set(outcomes).subtracting(["own", "closed"])
    #expect(unexpected.isEmpty, "\(unexpected.prefix(5))")
    #expect(outcomes.contains("closed"))
    #expect(container.isClosed)
    #expect(scopes.all.allSatisfy { $0.isClosed })
    #expect(throws: ResolutionError.self) { try container.resolve(Billing.self) }
  }
}
