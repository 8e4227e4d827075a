import Strata
import StrataModules
import Synchronization
import Testing

private final class DisposalCount: Sendable {
  private let count = Atomic<Int>(0)
  var value: Int { count.load(ordering: .relaxed) }
  func add() { count.add(1, ordering: .relaxed) }
}

private final class Resource: Disposable, Sendable {
  let disposals: DisposalCount
  init(_ disposals: DisposalCount) { self.disposals = disposals }
  func dispose() throws { disposals.add() }
}

private struct StartUpFailure: Error {}

private struct ResourceModule: Module {
  let disposals: DisposalCount
  func register(in registry: Registrar) {
    registry.register(Resource.self, lifetime: .eagerSingleton) { _ in Resource(disposals) }
  }
}

/// Requires `ResourceModule`, whose eager singleton is made first, then fails.
private struct FailingEagerModule: Module {
  let disposals: DisposalCount
  var requires: [any Module] { [ResourceModule(disposals: disposals)] }
  func register(in registry: Registrar) {
    registry.register(Int.self, lifetime: .eagerSingleton) { _ in throw StartUpFailure() }
  }
}

private struct FailingHookModule: Module {
  let disposals: DisposalCount
  var requires: [any Module] { [ResourceModule(disposals: disposals)] }
  func register(in registry: Registrar) {}
  func loaded(in scope: Scope) throws { throw StartUpFailure() }
}

/// `Container(modules:)` that fails disposes what it made, as `Container { … }` does: nobody can
/// close a container that was never returned.
@Suite struct FailedContainerBuildTests {
  @Test func aFailingEagerSingletonDisposesTheOnesMadeBefore() {
    let disposals = DisposalCount()
    #expect(throws: (any Error).self) {
      _ = try Container(modules: [FailingEagerModule(disposals: disposals)])
    }
    #expect(disposals.value == 1)
  }

  @Test func aFailingHookDisposesTheEagerSingletons() {
    let disposals = DisposalCount()
    #expect(throws: (any Error).self) {
      _ = try Container(modules: [FailingHookModule(disposals: disposals)])
    }
    #expect(disposals.value == 1)
  }

  @Test func aContainerThatBuildsDisposesOnlyWhenClosed() throws {
    let disposals = DisposalCount()
    let container = try Container(modules: [ResourceModule(disposals: disposals)])
    #expect(disposals.value == 0)
    try container.close()
    #expect(disposals.value == 1)
  }
}
