import Strata
import Testing

@Suite struct ForwardingTests {
  @Test func singletonForwardedToTwoProtocolsIsOneInstance() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(PostgresStore.self, lifetime: .singleton) { _ in PostgresStore(id: runs.increment()) }
        .forwarding(to: (any UserStore).self)
        .forwarding(to: (any OrderStore).self)
    }

    let users = try container.resolve((any UserStore).self)
    let orders = try container.resolve((any OrderStore).self)
    let store = try container.resolve(PostgresStore.self)

    #expect(users === orders)
    #expect(users === store)
    #expect(runs.value == 1)
  }

  @Test func forwardResolvedFirstStillSharesTheSingleton() throws {
    let container = try Container { registry in
      registry.register(PostgresStore.self, lifetime: .singleton) { _ in PostgresStore(id: 1) }
        .forwarding(to: (any OrderStore).self)
    }
    let viaForward = try container.resolve((any OrderStore).self)
    #expect(viaForward === (try container.resolve(PostgresStore.self)))
  }

  @Test func forwardSharesTheTargetsTransientLifetime() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(PostgresStore.self) { _ in PostgresStore(id: runs.increment()) }
        .forwarding(to: (any UserStore).self)
    }
    #expect(try container.resolve((any UserStore).self) !== (try container.resolve((any UserStore).self)))
    #expect(runs.value == 2)
  }

  @Test func compilerCheckedForwardConverts() throws {
    let container = try Container { registry in
      registry.register(PostgresStore.self, lifetime: .singleton) { _ in PostgresStore(id: 1) }
        .forwarding(to: (any UserStore).self, as: { $0 })
        .forwarding(to: Int.self, as: { $0.id * 10 })
    }
    #expect(try container.resolve((any UserStore).self) === (try container.resolve(PostgresStore.self)))
    #expect(try container.resolve(Int.self) == 10)
  }

  @Test func forwardOfANamedRegistrationKeepsTheName() throws {
    let container = try Container { registry in
      registry.register(PostgresStore.self, name: DatabaseRole.replica, lifetime: .singleton) { _ in
        PostgresStore(id: 2)
      }
      .forwarding(to: (any UserStore).self)
    }
    let store = try container.resolve((any UserStore).self, name: DatabaseRole.replica)
    #expect(store === (try container.resolve(PostgresStore.self, name: DatabaseRole.replica)))
    #expect(throws: ResolutionError.self) { try container.resolve((any UserStore).self) }
  }

  @Test func forwardsTakePartInResolveAll() throws {
    let container = try Container { registry in
      registry.register(PostgresStore.self) { _ in PostgresStore(id: 1) }
        .forwarding(to: (any UserStore).self)
      registry.register(CachedStore.self) { _ in CachedStore() }
        .forwarding(to: (any UserStore).self)
    }
    let stores = try container.resolveAll((any UserStore).self)
    #expect(stores.count == 2)
    #expect(stores.first is PostgresStore)
    #expect(stores.last is CachedStore)
    #expect(try container.resolve((any UserStore).self) is CachedStore)
  }

  @Test func forwardRecordsItsTargetAsDependency() throws {
    let container = try Container { registry in
      registry.register(PostgresStore.self) { _ in PostgresStore(id: 1) }
        .forwarding(to: (any UserStore).self)
    }
    let forward = try #require(descriptor(of: (any UserStore).self, in: container.registrations))
    let dependencies = try #require(forward.dependencies)
    #expect(identifiers(dependencies) == identifiers(of: PostgresStore.self))
  }

  @Test func forwardToATypeTheServiceDoesNotConformToIsATypeMismatch() throws {
    let line = #line + 3
    let container = try Container { registry in
      registry.register(PostgresStore.self, lifetime: .singleton) { _ in PostgresStore(id: 1) }
        .forwarding(to: (any UnrelatedStore).self)
    }

    let error = try #require(throws: ResolutionError.self) {
      try container.resolve((any UnrelatedStore).self)
    }

    #expect(error.code == .typeMismatch)
    #expect(isPlainKey(error.key, of: (any UnrelatedStore).self))
    #expect(error.registeredAt?.fileID.hasSuffix("ForwardingTests.swift") == true)
    #expect(error.registeredAt?.line == line)
    #expect(error.hint?.contains("PostgresStore") == true)
    // The failed forward does not break the target.
    #expect(try container.resolve(PostgresStore.self).id == 1)
  }

  @Test func typeMismatchPathNamesTheForwardOnce() throws {
    let container = try Container { registry in
      registry.register(PostgresStore.self) { _ in PostgresStore(id: 1) }
        .forwarding(to: (any UnrelatedStore).self)
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve((any UnrelatedStore).self)
    }
    #expect(error.code == .typeMismatch)
    // Not a cycle: the forwarded type must not appear twice in the path.
    #expect(identifiers(error.path).filter { $0 == ObjectIdentifier((any UnrelatedStore).self) }.count == 1)
    #expect(error.cycle == nil)
  }

  @Test func forwardingARegistrationWithRuntimeArgumentsIsInvalid() throws {
    let container = Container()
    let error = resolutionError {
      try container.register { registry in
        registry.register(PostgresStore.self) { (_, id: Int) in PostgresStore(id: id) }
          .forwarding(to: (any UserStore).self)
      }
    }
    #expect(error?.code == .invalidRegistration)
    #expect(container.registrations.isEmpty)
  }

  @Test func readyInstanceCanBeForwarded() throws {
    let store = PostgresStore(id: 4)
    let container = try Container { registry in
      registry.register(instance: store).forwarding(to: (any OrderStore).self)
    }
    #expect(try container.resolve((any OrderStore).self) === store)
  }
}

// MARK: - Fixtures

protocol UserStore: AnyObject, Sendable {}
protocol OrderStore: AnyObject, Sendable {}
protocol UnrelatedStore: AnyObject, Sendable {}

final class PostgresStore: UserStore, OrderStore {
  let id: Int

  init(id: Int) {
    self.id = id
  }
}

final class CachedStore: UserStore {
  init() {}
}
