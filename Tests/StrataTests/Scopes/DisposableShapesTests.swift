import Strata
import Testing

/// A scope disposes what it owns whatever shape the instance has: a final class (whose cast the
/// compiler resolves), a struct (boxed on the disposal stack), an instance behind a protocol type
/// or `any Sendable` (cast at run time), synchronous or asynchronous. Each is disposed exactly once, in
/// reverse creation order, and the one disposed is the one resolved.
@Suite struct DisposableShapesTests {
  @Test func aStructDisposableIsDisposedOnceWhenItsScopeCloses() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(Ticket.self, lifetime: .scoped(.request)) { _ in Ticket(id: 7, log: log) }
    }
    let request = try container.makeScope(.request)
    #expect(try request.resolve(Ticket.self).id == 7)
    #expect(log.elements.isEmpty)

    try request.close()

    #expect(log.elements == ["ticket 7"])
  }

  @Test func aStructAsyncDisposableIsAwaitedWhenItsScopeCloses() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(AsyncTicket.self, lifetime: .singleton) { _ in AsyncTicket(id: 3, log: log) }
    }
    _ = try container.resolve(AsyncTicket.self)

    try await container.close()

    #expect(log.elements == ["async ticket 3"])
  }

  @Test func instancesBehindProtocolTypesAreDisposedInReverseCreationOrder() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register((any Resource).self, name: Ordinal.first, lifetime: .scoped(.request)) { _ in
        ClassResource(name: "class", log: log)
      }
      registry.register((any Resource).self, name: Ordinal.second, lifetime: .scoped(.request)) { _ in
        StructResource(name: "struct", log: log)
      }
      registry.register((any Resource).self, name: Ordinal.third, lifetime: .scoped(.request)) { _ in
        PlainResource()
      }
      registry.register((any Sendable).self, lifetime: .scoped(.request)) { _ in
        ClassResource(name: "any", log: log)
      }
    }
    for round in 0..<3 {
      let request = try container.makeScope(.request)
      _ = try request.resolve((any Resource).self, name: Ordinal.first)
      _ = try request.resolve((any Resource).self, name: Ordinal.third)
      _ = try request.resolve((any Resource).self, name: Ordinal.second)
      _ = try request.resolve((any Sendable).self)

      try request.close()

      #expect(log.elements == ["any", "struct", "class"], "round \(round)")
      log.removeAll()
    }
  }

  @Test func theInstanceDisposedIsTheOneResolved() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(ClassResource.self, lifetime: .scoped(.request)) { _ in
        ClassResource(name: "mine", log: log)
      }
    }
    let request = try container.makeScope(.request)
    let resolved = try request.resolve(ClassResource.self)

    try request.close()

    #expect(resolved.isDisposed)
    #expect(log.elements == ["mine"])
  }

  /// The disposal is made from the registered (static) type's conformance; a subclass's override
  /// of `dispose()` must still be the one that runs.
  @Test func aSubclassInstanceIsDisposedThroughItsOwnOverride() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(Connection.self, name: Ordinal.first, lifetime: .scoped(.request)) { _ in
        PooledConnection(log: log)
      }
      registry.register(Connection.self, name: Ordinal.second, lifetime: .scoped(.request)) { _ in
        Connection(log: log)
      }
    }
    let request = try container.makeScope(.request)
    for slot in [Ordinal.first, .second] { _ = try request.resolve(Connection.self, name: slot) }

    try request.close()

    #expect(log.elements == ["connection closed", "returned to pool"])
  }
}

/// A disposable base class, and a subclass that changes how it is disposed.
private class Connection: Disposable, @unchecked Sendable {
  let log: Collector<String>
  init(log: Collector<String>) { self.log = log }
  func dispose() { log.append("connection closed") }
}

private final class PooledConnection: Connection, @unchecked Sendable {
  override func dispose() { log.append("returned to pool") }
}

/// A service some of whose implementations are disposable.
private protocol Resource: Sendable {}

private final class ClassResource: Resource, Disposable {
  let name: String
  let log: Collector<String>
  private let disposed = Counter()
  var isDisposed: Bool { disposed.value == 1 }

  init(name: String, log: Collector<String>) {
    self.name = name
    self.log = log
  }

  func dispose() {
    disposed.increment()
    log.append(name)
  }
}

private struct StructResource: Resource, Disposable {
  let name: String
  let log: Collector<String>

  func dispose() { log.append(name) }
}

private struct PlainResource: Resource {}

private struct Ticket: Disposable, Sendable {
  let id: Int
  let log: Collector<String>

  func dispose() { log.append("ticket \(id)") }
}

private struct AsyncTicket: AsyncDisposable, Sendable {
  let id: Int
  let log: Collector<String>

  func dispose() async {
    await Task.yield()
    log.append("async ticket \(id)")
  }
}
