import Strata
import Synchronization
import Testing

private protocol ExistentialStorage: Sendable {}
private final class InMemoryStorage: ExistentialStorage {}
private final class CountedStorage: ExistentialStorage, Disposable {
  let disposals = Atomic<Int>(0)
  func dispose() { disposals.add(1, ordering: .relaxed) }
}
private final class AsyncCountedStorage: ExistentialStorage, AsyncDisposable {
  let disposals = Atomic<Int>(0)
  func dispose() async { disposals.add(1, ordering: .relaxed) }
}

/// A service registered under a protocol (or `Any`) type has values of many dynamic types:
/// whether one needs disposal is decided for each value, never remembered from the first one.
@Suite struct ExistentialDisposalTests {
  @Test func aPlainImplementationResolvedFirstDoesNotHideADisposableOne() throws {
    let container = try Container { registry in
      registry.register((any ExistentialStorage).self, lifetime: .singleton) { _ in InMemoryStorage() }
    }
    let tenant = try container.makeScope(.tenantForDisposal) { registry in
      registry.register((any ExistentialStorage).self, lifetime: .singleton) { _ in CountedStorage() }
    }
    #expect(try container.resolve((any ExistentialStorage).self) is InMemoryStorage)
    let counted = try #require(try tenant.resolve((any ExistentialStorage).self) as? CountedStorage)
    try tenant.close()
    #expect(counted.disposals.load(ordering: .relaxed) == 1)
    try container.close()
    #expect(counted.disposals.load(ordering: .relaxed) == 1)
  }

  @Test func oneRegistrationWhoseFactoryMakesBothKinds() throws {
    let calls = Atomic<Int>(0)
    let container = try Container { registry in
      registry.register((any ExistentialStorage).self, lifetime: .scoped(.request)) { _ in
        let call = calls.add(1, ordering: .relaxed).oldValue
        return call % 2 == 0 ? InMemoryStorage() as any ExistentialStorage : CountedStorage()
      }
    }
    var made: [CountedStorage] = []
    for _ in 0..<4 {
      let request = try container.makeScope(.request)
      if let counted = try request.resolve((any ExistentialStorage).self) as? CountedStorage {
        made.append(counted)
      }
      try request.close()
    }
    #expect(made.count == 2)
    #expect(made.allSatisfy { $0.disposals.load(ordering: .relaxed) == 1 })
  }

  @Test func anyServicesAreCheckedValueByValue() throws {
    let container = try Container { registry in
      registry.register((any Sendable).self, name: "plain", lifetime: .scoped(.request)) { _ in
        InMemoryStorage()
      }
      registry.register((any Sendable).self, name: "counted", lifetime: .scoped(.request)) { _ in
        CountedStorage()
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve((any Sendable).self, name: "plain")
    let counted = try #require(try request.resolve((any Sendable).self, name: "counted") as? CountedStorage)
    try request.close()
    #expect(counted.disposals.load(ordering: .relaxed) == 1)
  }

  @Test func asyncDisposableBehindAProtocolIsDisposed() async throws {
    let container = try Container { registry in
      registry.register((any ExistentialStorage).self, name: 1, lifetime: .scoped(.request)) { _ in
        InMemoryStorage()
      }
      registry.register((any ExistentialStorage).self, name: 2, lifetime: .scoped(.request)) { _ in
        AsyncCountedStorage()
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve((any ExistentialStorage).self, name: 1)
    let counted = try #require(
      try request.resolve((any ExistentialStorage).self, name: 2) as? AsyncCountedStorage)
    try await request.close()
    #expect(counted.disposals.load(ordering: .relaxed) == 1)
  }
}

extension ScopeTag {
  fileprivate static let tenantForDisposal = ScopeTag("tenant")
}
