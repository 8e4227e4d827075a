import Foundation
import Strata
import Synchronization
import Testing

/// A request's connection, opened slowly, counted when made and when disposed.
private final class SlowConnection: Disposable, Sendable {
  private let disposals = Atomic<Int>(0)
  init(made: Counter) {
    made.increment()
    usleep(300)
  }
  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }
  func dispose() throws { disposals.add(1, ordering: .sequentiallyConsistent) }
}

/// A request-scoped holder of deferred access to the connection.
private final class Repository: Sendable {
  let connection: Lazy<SlowConnection>
  let connections: Provider<SlowConnection>
  init(connection: Lazy<SlowConnection>, connections: Provider<SlowConnection>) {
    self.connection = connection
    self.connections = connections
  }
}

/// An object a framework makes inside a request, with an injected connection.
private final class Screen: @unchecked Sendable {
  // `@unchecked`: the wrapper's storage is thread-safe (read once under its guard).
  @Injected var connection: SlowConnection
  init(scope: Scope) { _connection = Injected(from: scope) }
}

private func makeContainer(made: Counter, connections: Collector<WeakBox<SlowConnection>>) throws -> Container
{
  try Container { registry in
    registry.register(SlowConnection.self, lifetime: .scoped(.request)) { _ in
      let connection = SlowConnection(made: made)
      connections.append(WeakBox(connection))
      return connection
    }
    registry.register(Repository.self, lifetime: .scoped(.request), Repository.init)
  }
}

/// `Lazy`, `Provider` and `@Injected` used from other threads and tasks while their request closes,
/// and after it closed or was freed: each use gets the request's one instance or a typed
/// `scopeClosed`; whatever was made is disposed once and freed.
@Suite struct DeferredAfterCloseAttackTests {
  /// Six threads read one `Lazy` (and call the `Provider`) while a seventh closes the request,
  /// synchronously or awaited, many rounds. (Threads, not tasks: a reader waiting for the
  /// connection being made spins, and must not hold one of the task pool's few threads.)
  @Test(.timeLimit(.minutes(1)), arguments: [false, true])
  func readersRacingTheCloseGetTheOneInstanceOrScopeClosed(awaited: Bool) async throws {
    let made = Counter()
    let connections = Collector<WeakBox<SlowConnection>>()
    let container = try makeContainer(made: made, connections: connections)
    var failures: [String] = []
    // Fewer rounds under ThreadSanitizer, which the full run shares with every other suite.
    for round in 0..<(Sanitizers.threadSanitizerIsActive ? 3 : 24) {
      let request = try container.makeScope(.request)
      let repository = try request.resolve(Repository.self)
      let seen = Collector<ObjectIdentifier>()
      let unexpected = Collector<String>()
      let start = StressBarrier(7)
      let finished = await stressRunThreads(7) { index in
        start.arriveAndWait()
        if index == 6 {
          for _ in 0..<(round % 4) * 50 { sched_yield() }
          if awaited {
            stressBlockOn { try? await request.close() }
          } else {
            try? request.close()
          }
          return
        }
        do {
          let connection = try index % 3 == 0 ? repository.connections() : repository.connection.value
          seen.append(ObjectIdentifier(connection))
        } catch let error as ResolutionError where error.code == .scopeClosed {
          // Lost the race: allowed.
        } catch {
          unexpected.append("\(error)")
        }
      }
      if !finished { failures.append("round \(round): a reader or the close hung") }
      if Set(seen.elements).count > 1 { failures.append("round \(round): two connections in one request") }
      failures += unexpected.elements.map { "round \(round): \($0)" }
    }
    #expect(failures.isEmpty, "\(failures.prefix(6))")
    try await container.close()
    #expect(await eventually(timeout: .seconds(20)) { connections.elements.allSatisfy { $0.object == nil } })
    #expect(made.value == connections.elements.count)
  }

  /// After the close, and after the request is freed, every kind of deferred access throws
  /// `scopeClosed`; a `Lazy` read before the close keeps its instance.
  @Test func deferredAccessAfterTheCloseIsScopeClosed() async throws {
    let made = Counter()
    let connections = Collector<WeakBox<SlowConnection>>()
    let container = try makeContainer(made: made, connections: connections)
    var request: Scope? = try container.makeScope(.request)
    let read = try #require(request).resolve(Repository.self)
    let early = try read.connection.value
    let screen = Screen(scope: try #require(request))
    let lazy = try #require(request).lazy(SlowConnection.self)
    try await request?.close()
    #expect(early.disposeCount == 1)

    for round in ["closed", "freed"] {
      // From other tasks, as a handler's background work would.
      let outcomes = await withTaskGroup(of: String.self) { group in
        let uses: [@Sendable () throws -> SlowConnection] = [
          { try read.connections() }, { try lazy.value }, { try screen.$connection.resolve() },
        ]
        for use in uses {
          group.addTask {
            do {
              _ = try use()
              return "an instance"
            } catch let error as ResolutionError {
              return "\(error.code)"
            } catch {
              return "\(error)"
            }
          }
        }
        return await group.reduce(into: []) { $0.append($1) }
      }
      #expect(outcomes == ["scopeClosed", "scopeClosed", "scopeClosed"], "\(round)")
      #expect(try read.connection.value === early, "\(round): the value read before the close changed")
      request = nil
    }
    #expect(made.value == 1)
  }
}
