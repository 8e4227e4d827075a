import Foundation
import Strata
import Synchronization
import Testing

/// A request-scoped service holding a `Provider` and a `Lazy` of its own scope's services.
final class StressLazyHolder: Sendable {
  let provider: Provider<StressNode>
  let lazy: Lazy<StressNode>

  init(provider: Provider<StressNode>, lazy: Lazy<StressNode>) {
    self.provider = provider
    self.lazy = lazy
  }
}

/// Nothing keeps its owner alive, however many threads churn through scopes.
@Suite struct FreeingStressTests {
  /// Request scopes made, used and closed from four threads, whose scoped services hold a
  /// `Provider` and a touched `Lazy` (auto-wired, and from a factory's resolver): once closed and
  /// dropped, every scope, service and the container are freed.
  @Test(.timeLimit(.minutes(1)))
  func requestScopesWhoseServicesHoldLazyAndProviderAreFreed() async throws {
    let tracked = Locked<[StressWeak]>([])
    let failures = Locked<[String]>([])
    let finished = try await {
      let container = try Container { registry in
        registry.register(StressNode.self, lifetime: .scoped(.request)) { _ in StressNode("node") }
        registry.register(StressLazyHolder.self, lifetime: .scoped(.request), StressLazyHolder.init)
        registry.register(StressLazyHolder.self, name: "factory", lifetime: .scoped(.request)) { resolver in
          StressLazyHolder(provider: resolver.provider(StressNode.self), lazy: resolver.lazy(StressNode.self))
        }
      }
      tracked.withLock { $0.append(StressWeak(container, "container")) }
      return await stressRunThreads(4, seconds: 30) { thread in
        for index in 0..<250 {
          do {
            let request = try container.makeScope(.request)
            let holder =
              index % 2 == 0
              ? try request.resolve(StressLazyHolder.self)
              : try request.resolve(StressLazyHolder.self, name: "factory")
            let node = try holder.lazy.value
            if try holder.provider() !== node { failures.withLock { $0.append("two scoped nodes") } }
            tracked.withLock {
              $0 += [StressWeak(request, "request"), StressWeak(holder, "holder"), StressWeak(node, "node")]
            }
            if (index + thread) % 3 == 0 {
              stressBlockOn { try? await request.close() }
            } else {
              try request.close()
            }
          } catch {
            failures.withLock { $0.append("thread \(thread), scope \(index): \(error)") }
          }
        }
      }
    }()
    #expect(finished)
    #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
    let freed = await stressWait(seconds: 20) { tracked.withLock { $0.allSatisfy { $0.object == nil } } }
    let alive = tracked.withLock { references in references.filter { $0.object != nil }.map(\.label) }
    #expect(freed, "\(alive.count) of \(tracked.withLock { $0.count }) still alive: \(Set(alive))")
  }
}
