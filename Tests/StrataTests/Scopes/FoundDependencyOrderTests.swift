import Strata
import Synchronization
import Testing

/// A connection its users must outlive; logs its disposal.
final class FoundConnection: Disposable, Sendable {
  let log: Collector<String>
  private let disposed = Atomic<Int>(0)
  init(log: Collector<String>) { self.log = log }
  var isOpen: Bool { disposed.load(ordering: .sequentiallyConsistent) == 0 }
  var disposeCount: Int { disposed.load(ordering: .sequentiallyConsistent) }
  func dispose() throws {
    disposed.add(1, ordering: .sequentiallyConsistent)
    log.append("dispose connection")
  }
}

/// Opens the connection when first made: not disposable itself, but built from the connection.
final class FoundRepository: Sendable {
  let connection: FoundConnection
  init(connection: FoundConnection) { self.connection = connection }
}

/// Commits through its connection when disposed, reached through a `Lazy`.
final class LazyWork: Disposable, Sendable {
  let connection: Lazy<FoundConnection>
  let log: Collector<String>
  init(connection: Lazy<FoundConnection>, log: Collector<String>) {
    self.connection = connection
    self.log = log
  }
  func dispose() throws {
    guard connection.isResolved else { return log.append("dispose work") }
    log.append(try connection.value.isOpen ? "commit on open connection" : "commit on disposed connection")
  }
}

/// The same through a `Provider`: keeps what it was given last.
final class ProvidedConnectionWork: Disposable, Sendable {
  let connection: Provider<FoundConnection>
  let log: Collector<String>
  private let last = Locked<FoundConnection?>(nil)
  init(connection: Provider<FoundConnection>, log: Collector<String>) {
    self.connection = connection
    self.log = log
  }
  func open() throws -> FoundConnection {
    let found = try connection()
    last.withLock { $0 = found }
    return found
  }
  func dispose() throws {
    let open = last.withLock { $0?.isOpen ?? true }
    log.append(open ? "commit on open connection" : "commit on disposed connection")
  }
}

/// The same with an `@Injected` property, given the scope it is made in.
final class InjectedConnectionWork: Disposable, @unchecked Sendable {
  @Injected var connection: FoundConnection
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

/// Works through a repository it reaches through a `Lazy`: uses the repository's connection.
final class RepositoryWork: Disposable, Sendable {
  let repository: Lazy<FoundRepository>
  let log: Collector<String>
  init(repository: Lazy<FoundRepository>, log: Collector<String>) {
    self.repository = repository
    self.log = log
  }
  func dispose() throws {
    let open = try repository.value.connection.isOpen
    log.append(open ? "commit on open connection" : "commit on disposed connection")
  }
}

/// Built from the unit of work: must be disposed before it.
final class WorkAudit: Disposable, Sendable {
  let work: LazyWork
  let log: Collector<String>
  init(work: LazyWork, log: Collector<String>) {
    self.work = work
    self.log = log
  }
  func dispose() throws { log.append("dispose audit") }
}

/// A container where `LazyWork`, `FoundRepository` and `FoundConnection` are request-scoped and
/// auto-wired, plus what `extra` registers.
func foundContainer(
  _ log: Collector<String>, _ extra: @escaping @Sendable (Registrar) -> Void = { _ in }
) throws -> Container {
  try Container { registry in
    registry.register(instance: log)
    registry.register(FoundConnection.self, lifetime: .scoped(.request), FoundConnection.init)
    registry.register(FoundRepository.self, lifetime: .scoped(.request), FoundRepository.init)
    registry.register(LazyWork.self, lifetime: .scoped(.request), LazyWork.init)
    extra(registry)
  }
}

/// A `Lazy`, `Provider` or `@Injected` property that finds an instance another resolve made after
/// its holder: the scope disposes that instance, and what it is built from, after the holder.
@Suite struct FoundDependencyOrderTests {
  @Test func aConnectionALazyFindsIsDisposedAfterTheWorkHoldingTheLazy() throws {
    let log = Collector<String>()
    let request = try foundContainer(log).makeScope(.request)
    let work = try request.resolve(LazyWork.self)  // the holder first
    _ = try request.resolve(FoundRepository.self)  // makes the connection, after the holder
    #expect(try work.connection.value.isOpen)  // finds it

    try closeSynchronously(request)

    #expect(log.elements == ["commit on open connection", "dispose connection"])
  }

  @Test func aConnectionAProviderFindsIsDisposedAfterItsHolderHoweverOftenItIsCalled() throws {
    let log = Collector<String>()
    let container = try foundContainer(log) { registry in
      registry.register(ProvidedConnectionWork.self, lifetime: .scoped(.request), ProvidedConnectionWork.init)
    }
    let request = try container.makeScope(.request)
    let work = try request.resolve(ProvidedConnectionWork.self)
    let repository = try request.resolve(FoundRepository.self)
    for _ in 0..<3 { #expect(try work.open() === repository.connection) }

    try closeSynchronously(request)

    #expect(log.elements == ["commit on open connection", "dispose connection"])
    #expect(repository.connection.disposeCount == 1)
  }

  @Test func aConnectionAnInjectedPropertyFindsIsDisposedAfterItsHolder() throws {
    let log = Collector<String>()
    let container = try foundContainer(log) { registry in
      // A closure factory that declared nothing: only what the property finds is looked up.
      registry.register(InjectedConnectionWork.self, lifetime: .scoped(.request)) { resolver in
        InjectedConnectionWork(scope: resolver.currentScope, log: log)
      }
    }
    let request = try container.makeScope(.request)
    let work = try request.resolve(InjectedConnectionWork.self)
    _ = try request.resolve(FoundRepository.self)
    #expect(work.connection.isOpen)

    try closeSynchronously(request)

    #expect(log.elements == ["commit on open connection", "dispose connection"])
  }

  @Test func whatAFoundValueIsBuiltFromMovesWithItThoughTheValueIsNotDisposable() throws {
    let log = Collector<String>()
    let container = try foundContainer(log) { registry in
      registry.register(RepositoryWork.self, lifetime: .scoped(.request), RepositoryWork.init)
    }
    let request = try container.makeScope(.request)
    let work = try request.resolve(RepositoryWork.self)
    _ = try request.resolve(FoundRepository.self)  // not filed: its connection is
    #expect(try work.repository.value.connection.isOpen)

    try closeSynchronously(request)

    #expect(log.elements == ["commit on open connection", "dispose connection"])
  }

  @Test func anInstanceBuiltFromTheHolderIsStillDisposedBeforeIt() throws {
    let log = Collector<String>()
    let container = try foundContainer(log) { registry in
      registry.register(WorkAudit.self, lifetime: .scoped(.request), WorkAudit.init)
    }
    let request = try container.makeScope(.request)
    let work = try request.resolve(LazyWork.self)
    _ = try request.resolve(WorkAudit.self)  // built from the work, filed between
    _ = try request.resolve(FoundRepository.self)
    _ = try work.connection.value

    try closeSynchronously(request)

    #expect(log.elements == ["dispose audit", "commit on open connection", "dispose connection"])
  }

  @Test func aConnectionTwoHoldersFindIsDisposedAfterBoth() throws {
    for firstReader in [Ordinal.first, .second] {
      let log = Collector<String>()
      let container = try foundContainer(log) { registry in
        registry.register(LazyWork.self, name: Ordinal.second, lifetime: .scoped(.request), LazyWork.init)
      }
      let request = try container.makeScope(.request)
      let first = try request.resolve(LazyWork.self)
      let second = try request.resolve(LazyWork.self, name: Ordinal.second)
      _ = try request.resolve(FoundRepository.self)
      let readers = firstReader == .first ? [first, second] : [second, first]
      for work in readers { #expect(try work.connection.value.isOpen) }

      try closeSynchronously(request)

      #expect(
        log.elements == ["commit on open connection", "commit on open connection", "dispose connection"],
        "read first: \(firstReader)")
    }
  }

  @Test func aLazyThatMakesAnInstanceBuiltFromAFoundOneKeepsBothAfterTheHolder() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(instance: log)
      registry.register(FoundConnection.self, lifetime: .scoped(.request), FoundConnection.init)
      registry.register(FoundRepository.self, lifetime: .scoped(.request), FoundRepository.init)
      registry.register(TrackedStatement.self, lifetime: .scoped(.request), TrackedStatement.init)
      registry.register(StatementWork.self, lifetime: .scoped(.request), StatementWork.init)
    }
    let request = try container.makeScope(.request)
    let work = try request.resolve(StatementWork.self)
    _ = try request.resolve(FoundRepository.self)
    // Makes the statement (filed below the work), which finds the connection (filed above it).
    #expect(try work.statement.value.connection.isOpen)

    try closeSynchronously(request)

    #expect(
      log.elements == [
        "dispose work", "close statement on open connection", "dispose connection",
      ])
  }
}

/// A statement on a connection: closes through it when disposed.
final class TrackedStatement: Disposable, Sendable {
  let connection: FoundConnection
  let log: Collector<String>
  init(connection: FoundConnection, log: Collector<String>) {
    self.connection = connection
    self.log = log
  }
  func dispose() throws {
    log.append(
      connection.isOpen ? "close statement on open connection" : "close statement on disposed connection")
  }
}

/// Prepares its statement on first use.
final class StatementWork: Disposable, Sendable {
  let statement: Lazy<TrackedStatement>
  let log: Collector<String>
  init(statement: Lazy<TrackedStatement>, log: Collector<String>) {
    self.statement = statement
    self.log = log
  }
  func dispose() throws { log.append("dispose work") }
}
