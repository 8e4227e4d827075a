import Strata
import StrataTesting
import Testing

/// A placeholder fails every resolve that reaches it with a typed error naming it, however many
/// tasks resolve at once and whatever lifetime sits above it, and never caches the failure; a
/// child scope's real registration replaces it there only; a placeholder of `Int?` is not one of
/// `Int`.
@Suite struct AssaultUnimplementedTests {
  /// 64 tasks resolving, half a singleton over the placeholder and half a request-scoped service
  /// over it: every one fails with the placeholder's `UnimplementedError` (no failure is cached as
  /// a different error); a child registering the real gateway resolves it, the container still
  /// fails. 8 runs.
  @Test(arguments: 0..<8)
  func aPlaceholderUnderASingletonFailsTypedForEveryParallelTaskAndNeverCachesAFailure(_ run: Int)
    async throws
  {
    let container = try Container { registry in
      registry.registerUnimplemented((any Gateway).self)
      registry.register(Billing.self, lifetime: .singleton, Billing.init)
      registry.register(Billing.self, name: "scoped", lifetime: .scoped(.request)) { resolver in
        Billing(gateway: try resolver.resolve((any Gateway).self))
      }
    }
    let outcomes = OutcomeLog()
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<64 {
        group.addTask {
          do {
            if index % 2 == 0 {
              _ = try container.resolve(Billing.self)
            } else {
              let request = try container.makeScope(.request)
              defer { try? closeSynchronously(request) }
              _ = try request.resolve(Billing.self, name: "scoped")
            }
            outcomes.append("resolved")
          } catch let error as ResolutionError {
            outcomes.append(error.underlying is UnimplementedError ? "unimplemented" : "\(error.code)")
          } catch {
            outcomes.append("other \(error)")
          }
        }
      }
    }
    #expect(outcomes.all == Array(repeating: "unimplemented", count: 64), "run \(run): \(Set(outcomes.all))")
    // A child scope that provides the real thing resolves; the container still fails.
    let child = try container.makeScope(.session) { registry in
      registry.register((any Gateway).self) { _ in RealGateway() }
    }
    #expect(try child.resolve((any Gateway).self) is RealGateway)
    #expect(throws: ResolutionError.self) { try container.resolve((any Gateway).self) }
    try await child.close()
    try await container.close()
  }

  /// A placeholder of `Int?` beside a real `Int`: `Int` resolves; `Int?` fails with an
  /// `UnimplementedError` that names `Optional<Int>` and this file.
  @Test func aPlaceholderOfAnOptionalStaysDistinctFromTheNonOptionalService() throws {
    let container = try Container { registry in
      registry.registerUnimplemented(Int?.self)
      registry.register(Int.self) { _ in 7 }
    }
    #expect(try container.resolve(Int.self) == 7)
    let error = try #require(throws: ResolutionError.self) { try container.resolve(Int?.self) }
    let unimplemented = try #require(error.underlying as? UnimplementedError)
    #expect(unimplemented.service == "Optional<Int>")
    #expect(unimplemented.description.contains("AssaultUnimplementedTests.swift"))
  }
}
