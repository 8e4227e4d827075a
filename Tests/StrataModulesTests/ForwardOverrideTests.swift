import Strata
import StrataModules
import Synchronization
import Testing

private protocol Store: AnyObject, Sendable {
  var isDisposed: Bool { get }
}

private final class RequestContext: Sendable {}

/// A root singleton that would capture a request's context if it were made in a request.
private final class RealStore: Store, Disposable, Sendable {
  let context: RequestContext?
  let label: String
  private let disposed = Atomic<Bool>(false)
  init(context: RequestContext?, label: String) {
    self.context = context
    self.label = label
  }
  var isDisposed: Bool { disposed.load(ordering: .relaxed) }
  func dispose() throws { disposed.store(true, ordering: .relaxed) }
}

private struct StoreModule: Module {
  func register(in registry: Registrar) {
    registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
    registry.register(RealStore.self, lifetime: .singleton) { resolver in
      RealStore(context: try? resolver.resolve(RequestContext.self), label: "real")
    }
    .forwarding(to: (any Store).self)
  }
}

/// A replacement for `StoreModule`'s store, without a forward of its own.
private struct FakeStoreModule: Module {
  func register(in registry: Registrar) {
    registry.register(RealStore.self, lifetime: .singleton) { _ in RealStore(context: nil, label: "fake") }
  }
}

private struct OverridingStoreModule: Module {
  func register(in registry: Registrar) {
    registry.register(RealStore.self, lifetime: .singleton) { _ in RealStore(context: nil, label: "override")
    }
    .overriding()
  }
}

/// A forward of a registration that an override replaces follows the override: it used to lead
/// to the replaced registration, which no scope held, so its singleton was owned by the first
/// request that resolved the forward, captured that request's services, was disposed with it,
/// and was then handed out disposed.
@Suite struct ForwardOverrideTests {
  private func checkForwardFollowsTheOverride(_ container: Container, label: String) throws {
    let request1 = try container.makeScope(.request)
    let first = try request1.resolve((any Store).self)
    try request1.close()
    let request2 = try container.makeScope(.request)
    let second = try request2.resolve((any Store).self)
    try request2.close()

    let store = try #require(first as? RealStore)
    #expect(store.label == label)
    #expect(first === second)
    #expect(store.context == nil)
    #expect(!second.isDisposed)
    #expect(try container.resolve(RealStore.self) === store)
    try container.close()
    #expect(store.isDisposed)
  }

  @Test func aForwardFollowsTheReplacementOfAComposition() throws {
    let container = try Container(modules: [StoreModule().overridden(by: FakeStoreModule())])
    try checkForwardFollowsTheOverride(container, label: "fake")
  }

  @Test func aForwardFollowsAnOverrideRegistration() throws {
    let container = try Container(modules: [StoreModule(), OverridingStoreModule()])
    try checkForwardFollowsTheOverride(container, label: "override")
  }

  @Test func aForwardFollowsAnOverrideLoadedBeforeItsModule() throws {
    let container = try Container(modules: [OverridingStoreModule(), StoreModule()])
    try checkForwardFollowsTheOverride(container, label: "override")
  }

  @Test func theForwardKeepsItsModuleForValidation() throws {
    let container = try Container(modules: [StoreModule().overridden(by: FakeStoreModule())])
    let report = container.validationReport(expecting: [.request])
    #expect(report.problems.isEmpty)
    let forward = try #require(container.registrations.first { $0.key.serviceType == (any Store).self })
    #expect(forward.dependencies?.map { $0.serviceType == RealStore.self } == [true])
    #expect(forward.module == "StoreModule")
  }
}
