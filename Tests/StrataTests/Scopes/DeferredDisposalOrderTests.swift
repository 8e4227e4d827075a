import Strata
import Synchronization
import Testing

/// A connection whose disposal its users must outlive; logs its disposal.
private final class LoggedConnection: Disposable, Sendable {
  let log: Collector<String>
  private let disposed = Atomic<Bool>(false)
  init(log: Collector<String>) { self.log = log }
  var isOpen: Bool { !disposed.load(ordering: .sequentiallyConsistent) }
  func dispose() throws {
    disposed.store(true, ordering: .sequentiallyConsistent)
    log.append("dispose connection")
  }
}

/// What the connection is built from: disposed after it.
private final class Socket: Disposable, Sendable {
  let log: Collector<String>
  init(log: Collector<String>) { self.log = log }
  func dispose() throws { log.append("dispose socket") }
}

/// A unit of work that opens its connection on first use and commits through it when disposed.
private final class UnitOfWork: Disposable, Sendable {
  let connection: Lazy<LoggedConnection>
  let log: Collector<String>
  init(connection: Lazy<LoggedConnection>, log: Collector<String>) {
    self.connection = connection
    self.log = log
  }
  func dispose() throws {
    let open = connection.isResolved ? try connection.value.isOpen : true
    log.append(open ? "commit on open connection" : "commit on disposed connection")
  }
}

/// The same through a `Provider`, which it calls while it works (never while disposed).
private final class ProvidedWork: Disposable, Sendable {
  let connection: Provider<LoggedConnection>
  let log: Collector<String>
  init(connection: Provider<LoggedConnection>, log: Collector<String>) {
    self.connection = connection
    self.log = log
  }
  func dispose() throws { log.append("dispose work") }
}

/// The same with an `@Injected` property given the scope the holder is made in.
private final class InjectedWork: Disposable, @unchecked Sendable {
  @Injected var connection: LoggedConnection
  let log: Collector<String>
  init(scope: Scope, log: Collector<String>) {
    _connection = Injected(from: scope)
    self.log = log
  }
  func dispose() throws {
    log.append(
      try $connection.resolve().isOpen ? "commit on open connection" : "commit on disposed connection")
  }
}

/// What a `Lazy`, `Provider` or `@Injected` makes after its holder is a dependency of the holder:
/// the scope disposes it after the holder, although it was made later.
@Suite struct DeferredDisposalOrderTests {
  @Test func aDependencyMadeThroughLazyIsDisposedAfterTheInstanceHoldingTheLazy() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(LoggedConnection.self, lifetime: .scoped(.request)) { _ in LoggedConnection(log: log)
      }
      registry.register(UnitOfWork.self, lifetime: .scoped(.request)) { resolver in
        UnitOfWork(connection: try resolver.resolve(Lazy<LoggedConnection>.self), log: log)
      }
    }
    for _ in 0..<3 {
      log.removeAll()
      try await container.withScope(.request) { request in
        let work = try request.resolve(UnitOfWork.self)
        #expect(try work.connection.value.isOpen)  // made now, after the unit of work
      }
      #expect(log.elements == ["commit on open connection", "dispose connection"])
    }
  }

  @Test func whatTheDeferredResolveMakesAlongTheWayIsDisposedAfterTheHolderToo() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(Socket.self, lifetime: .scoped(.request)) { _ in Socket(log: log) }
      registry.register(LoggedConnection.self, lifetime: .scoped(.request)) { resolver in
        _ = try resolver.resolve(Socket.self)
        return LoggedConnection(log: log)
      }
      registry.register(UnitOfWork.self, lifetime: .scoped(.request)) { resolver in
        UnitOfWork(connection: try resolver.resolve(Lazy<LoggedConnection>.self), log: log)
      }
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { resolver in
        _ = try resolver.resolve(UnitOfWork.self)  // depends on the unit of work
        return TrackedResource("handler", log: log)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(TrackedResource.self)
    let work = try request.resolve(UnitOfWork.self)
    _ = try work.connection.value

    try closeSynchronously(request)

    #expect(
      log.elements == [
        "dispose handler", "commit on open connection", "dispose connection", "dispose socket",
      ])
  }

  @Test func aDependencyMadeThroughProviderIsDisposedAfterItsHolder() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(LoggedConnection.self, lifetime: .scoped(.request)) { _ in LoggedConnection(log: log)
      }
      registry.register(ProvidedWork.self, lifetime: .scoped(.request)) { resolver in
        ProvidedWork(connection: try resolver.resolve(Provider<LoggedConnection>.self), log: log)
      }
    }
    let request = try container.makeScope(.request)
    let work = try request.resolve(ProvidedWork.self)
    _ = try work.connection()

    try closeSynchronously(request)

    #expect(log.elements == ["dispose work", "dispose connection"])
  }

  @Test func aSingletonMadeThroughASingletonsLazyIsDisposedAfterIt() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(LoggedConnection.self, lifetime: .singleton) { _ in LoggedConnection(log: log) }
      registry.register(UnitOfWork.self, lifetime: .singleton) { resolver in
        UnitOfWork(connection: try resolver.resolve(Lazy<LoggedConnection>.self), log: log)
      }
    }
    _ = try container.resolve(UnitOfWork.self).connection.value

    try closeSynchronously(container)

    #expect(log.elements == ["commit on open connection", "dispose connection"])
  }

  @Test func aDependencyMadeThroughInjectedIsDisposedAfterItsHolder() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(LoggedConnection.self, lifetime: .scoped(.request)) { _ in LoggedConnection(log: log)
      }
      registry.register(InjectedWork.self, lifetime: .scoped(.request)) { resolver in
        InjectedWork(scope: resolver.currentScope, log: log)
      }
    }
    let request = try container.makeScope(.request)
    let work = try request.resolve(InjectedWork.self)
    #expect(work.connection.isOpen)  // made now, after the work

    try closeSynchronously(request)

    #expect(log.elements == ["commit on open connection", "dispose connection"])
  }

  @Test func whatTheDeferredResolveMakesInAnotherScopeKeepsThatScopesOrder() throws {
    let log = Collector<String>()
    let other = Locked<Scope?>(nil)
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .scoped(.request)) { _ in
        TrackedResource("audit", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.second, lifetime: .scoped(.request)) { _ in
        TrackedResource("marker", log: log)
      }
      registry.register(LoggedConnection.self, lifetime: .scoped(.request)) { _ in
        // Reaches into another request, which holds an instance of the same unit-of-work registration.
        if let other = other.withLock({ $0 }) {
          _ = try other.resolve(TrackedResource.self, name: Ordinal.first)
        }
        return LoggedConnection(log: log)
      }
      registry.register(UnitOfWork.self, lifetime: .scoped(.request)) { resolver in
        UnitOfWork(connection: try resolver.resolve(Lazy<LoggedConnection>.self), log: log)
      }
    }
    let first = try container.makeScope(.request)
    let second = try container.makeScope(.request)
    _ = try second.resolve(UnitOfWork.self)
    _ = try second.resolve(TrackedResource.self, name: Ordinal.second)
    other.withLock { $0 = second }
    _ = try first.resolve(UnitOfWork.self).connection.value  // makes "audit" in the second request

    try closeSynchronously(second)

    // The second request's own order: "audit" is its newest, not a dependency of its unit of work.
    #expect(log.elements == ["dispose audit", "dispose marker", "commit on open connection"])
    other.withLock { $0 = nil }
    try closeSynchronously(first)
  }

  @Test func withoutAHolderTheOrderIsCreationOrder() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(LoggedConnection.self, lifetime: .scoped(.request)) { _ in LoggedConnection(log: log)
      }
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("first", log: log)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(TrackedResource.self)
    let lazy = request.lazy(LoggedConnection.self)  // made by the caller, for no instance
    _ = try lazy.value

    try closeSynchronously(request)

    #expect(log.elements == ["dispose connection", "dispose first"])
  }

  @Test func aDependencyInAParentScopeIsStillDisposedWithTheParent() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(LoggedConnection.self, lifetime: .scoped(.session)) { _ in LoggedConnection(log: log)
      }
      registry.register(UnitOfWork.self, lifetime: .scoped(.request)) { resolver in
        UnitOfWork(connection: try resolver.resolve(Lazy<LoggedConnection>.self), log: log)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    _ = try request.resolve(UnitOfWork.self).connection.value

    try closeSynchronously(request)
    #expect(log.elements == ["commit on open connection"])
    try closeSynchronously(session)
    #expect(log.elements == ["commit on open connection", "dispose connection"])
  }
}
