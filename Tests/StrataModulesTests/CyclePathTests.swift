import Strata
import StrataModules
import Testing

// A resolve may meet one key twice without a cycle: a session's `Logger` needs the container's
// `Audit` singleton, which resolves the container's `Logger` in the container. A cycle further
// on must still be named by its own services.

private struct Logger: Sendable { let loop: Loop? }
private final class Audit: Sendable {
  let logger: Logger
  init(logger: Logger) { self.logger = logger }
}
private struct Loop: Sendable {}

@Suite struct CyclePathTests {
  /// The container's `Logger` needs `Loop`, transient and needing itself; the session's `Logger`
  /// needs `Audit`.
  private func session(auditNeedsItself: Bool = false) throws -> Scope {
    let container = try Container { registry in
      registry.register(Logger.self, dependsOn: [.service(Loop.self)]) { resolver in
        Logger(loop: try resolver.resolve(Loop.self))
      }
      registry.register(Loop.self, dependsOn: [.service(Loop.self)]) { resolver in
        try resolver.resolve(Loop.self)
      }
      registry.register(Audit.self, lifetime: .singleton, dependsOn: [.service(Logger.self)]) { resolver in
        Audit(logger: try resolver.resolve(Logger.self))
      }
    }
    return try container.makeScope(.session) { registry in
      registry.register(Logger.self, dependsOn: [.service(Audit.self)]) { resolver in
        _ = try resolver.resolve(Audit.self)
        return Logger(loop: nil)
      }
    }
  }

  @Test func aRecursionBehindAKeyMetTwiceIsNamedByItsOwnServices() throws {
    let session = try session()
    let error = try #require(throws: ResolutionError.self) { try session.resolve(Logger.self) }
    #expect(error.code == .cycle)
    #expect(error.key.description == "Loop")
    #expect(error.path.map(\.description) == ["Logger", "Audit", "Logger", "Loop", "Loop"])
    #expect(error.cycle?.map(\.description) == ["Loop", "Loop"])
    // What validation reports for it.
    let problems = session.validationReport().problems
    #expect(problems.map(\.code) == [.cycle])
    #expect(problems.first?.path == error.cycle)
  }

  @Test func aKeyMetTwiceWithoutACycleResolves() throws {
    let container = try Container { registry in
      registry.register(Logger.self, dependsOn: []) { _ in Logger(loop: Loop()) }
      registry.register(Audit.self, lifetime: .singleton, dependsOn: [.service(Logger.self)]) { resolver in
        Audit(logger: try resolver.resolve(Logger.self))
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Logger.self, dependsOn: [.service(Audit.self)]) { resolver in
        Logger(loop: try resolver.resolve(Audit.self).logger.loop)
      }
    }
    #expect(try session.resolve(Logger.self).loop != nil)
    #expect(session.validationReport().isValid)
  }

  @Test func aSingletonEnteredAgainBehindAKeyMetTwiceClosesTheCycle() throws {
    let container = try Container { registry in
      registry.register(Logger.self, dependsOn: [.service(Audit.self)]) { resolver in
        _ = try resolver.resolve(Audit.self)
        return Logger(loop: nil)
      }
      registry.register(Audit.self, lifetime: .singleton, dependsOn: [.service(Logger.self)]) { resolver in
        Audit(logger: try resolver.resolve(Logger.self))
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Logger.self, dependsOn: [.service(Audit.self)]) { resolver in
        _ = try resolver.resolve(Audit.self)
        return Logger(loop: nil)
      }
    }
    let error = try #require(throws: ResolutionError.self) { try session.resolve(Logger.self) }
    #expect(error.code == .cycle)
    #expect(error.key.description == "Audit")
    #expect(error.cycle?.map(\.description) == ["Audit", "Logger", "Audit"])
    #expect(
      session.validationReport().problems.contains {
        $0.code == .cycle && Set($0.path) == Set(error.cycle ?? [])
      })
  }

  @Test func aServiceNeedingItselfBehindAnEarlierServiceOfItsKeyIsTheCycle() throws {
    let container = try Container { registry in
      registry.register(Logger.self, dependsOn: [.service(Logger.self)]) { resolver in
        try resolver.resolve(Logger.self)
      }
      registry.register(Audit.self, lifetime: .singleton, dependsOn: [.service(Logger.self)]) { resolver in
        Audit(logger: try resolver.resolve(Logger.self))
      }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Logger.self, dependsOn: [.service(Audit.self)]) { resolver in
        try resolver.resolve(Audit.self).logger
      }
    }
    let error = try #require(throws: ResolutionError.self) { try session.resolve(Logger.self) }
    #expect(error.code == .cycle)
    #expect(error.path.map(\.description) == ["Logger", "Audit", "Logger", "Logger"])
    #expect(error.cycle?.map(\.description) == ["Logger", "Logger"])
    #expect(session.validationReport().problems.map { $0.path.map(\.description) } == [["Logger", "Logger"]])
  }
}
