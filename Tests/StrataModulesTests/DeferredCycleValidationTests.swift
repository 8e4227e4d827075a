import Strata
import StrataModules
import Testing

// A `Lazy` made for a container singleton resolves in the container when it is read: a cycle that
// exists only there (a session shadows one of its services) is met then, and must be reported.

private final class Holder: Sendable {
  let task: Lazy<Task>
  init(task: Lazy<Task>) { self.task = task }
}
private struct Task: Sendable {}
private struct Step: Sendable {}

@Suite struct DeferredCycleValidationTests {
  @Test func aCycleOnlyWhereASingletonsLazyResolvesIsReported() throws {
    let container = try Container { registry in
      registry.register(Holder.self, lifetime: .singleton, Holder.init)
      registry.register(Task.self, dependsOn: [.service(Step.self)]) { resolver in
        _ = try resolver.resolve(Step.self)
        return Task()
      }
      registry.register(Step.self, dependsOn: [.service(Task.self)]) { resolver in
        _ = try resolver.resolve(Task.self)
        return Step()
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Step.self, dependsOn: []) { _ in Step() }
    }

    _ = try session.resolve(Task.self)  // no cycle where the session resolves it
    let error = try #require(throws: ResolutionError.self) { try session.resolve(Holder.self).task.value }
    #expect(error.code == .cycle)
    let problems = session.validationReport().problems
    #expect(problems.map(\.code) == [.cycle])
    #expect(Set(problems.first?.path ?? []) == Set(error.cycle ?? []))
    #expect(problems.first?.path.map(\.description) == ["Task", "Step", "Task"])
  }
}
