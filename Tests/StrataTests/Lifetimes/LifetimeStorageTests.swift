import Testing

@testable import Strata

/// Each lifetime's storage type says where its instances live and who disposes of them; these
/// tests hold every lifetime to what its type declares.
@Suite struct LifetimeStorageTests {
  static let lifetimes: [Lifetime] = [
    .transient, .singleton, .eagerSingleton, .weak, .graph, .scoped(.request),
  ]

  @Test(arguments: lifetimes)
  func theDeclaredDisposerIsTheOneThatDisposes(lifetime: Lifetime) throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: lifetime) { _ in TrackedResource("\(lifetime)") }
    }
    let request = try container.makeScope(.request)
    let resource = try request.resolve(TrackedResource.self)

    try request.close()
    let afterRequest = resource.disposeCount
    try container.close()
    let afterContainer = resource.disposeCount

    switch lifetime.kind.storage.disposer {
    case .caller:
      #expect(afterRequest == 0 && afterContainer == 0, "the caller owns a \(lifetime) instance")
    case .registeringScope:
      #expect(afterRequest == 0 && afterContainer == 1, "the container registered it and disposes of it")
    case .owningScope:
      #expect(afterRequest == 1 && afterContainer == 1, "the request owns it and disposes of it once")
    }
  }

  @Test(arguments: lifetimes)
  func theDeclaredHomeIsWhereTheInstanceIsKept(lifetime: Lifetime) throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: lifetime) { _ in TrackedResource("\(lifetime)") }
    }
    let request = try container.makeScope(.request)
    let first = try request.resolve(TrackedResource.self)
    let again = try request.resolve(TrackedResource.self)
    let otherRequest = try container.makeScope(.request)
    let elsewhere = try otherRequest.resolve(TrackedResource.self)

    switch lifetime.kind.storage.home {
    case .nowhere, .resolve:
      #expect(first !== again, "kept by no one beyond one resolve")
    case .registration, .weakReference:
      #expect(first === again && first === elsewhere, "kept by the registration, for every scope")
    case .owningScope:
      #expect(first === again && first !== elsewhere, "kept by each owning scope")
    }
  }

  @Test func aWeakInstanceIsKeptOnlyWhileSomebodyHoldsIt() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .weak) { _ in TrackedResource("weak") }
    }
    weak var watched: TrackedResource?
    do {
      let held = try container.resolve(TrackedResource.self)
      watched = held
      #expect(try container.resolve(TrackedResource.self) === held)
    }
    #expect(watched == nil, "the registration's reference is weak")
  }
}
