import Strata
import Testing

/// Closing scopes: what is disposed, in which order and how often, and how disposer errors are
/// reported.
@Suite struct DisposalTests {
  private static let slots: [Ordinal] = [.first, .second, .third]

  /// A container with three request-scoped resources named `.first`, `.second`, `.third`, logged as
  /// `dispose first`, … ; those in `failing` throw from `dispose()`.
  private static func makeContainer(log: Collector<String>, failing: Set<Ordinal> = []) throws -> Container {
    try Container { registry in
      for slot in slots {
        registry.register(TrackedResource.self, name: slot, lifetime: .scoped(.request)) { _ in
          TrackedResource("\(slot)", log: log, fails: failing.contains(slot))
        }
      }
    }
  }

  // MARK: Order and exactly once

  @Test func closingAScopeDisposesItsInstancesInReverseCreationOrder() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let request = try container.makeScope(.request)

    let second = try request.resolve(TrackedResource.self, name: Ordinal.second)
    let first = try request.resolve(TrackedResource.self, name: Ordinal.first)
    let third = try request.resolve(TrackedResource.self, name: Ordinal.third)
    #expect(log.elements.isEmpty)

    try request.close()

    #expect(log.elements == ["dispose third", "dispose first", "dispose second"])
    #expect([first, second, third].map(\.disposeCount) == [1, 1, 1])
    #expect(request.isClosed)
  }

  @Test func dependenciesCreatedFirstAreDisposedLast() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .scoped(.request)) { _ in
        TrackedResource("connection", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.second, lifetime: .scoped(.request)) {
        resolver in
        _ = try resolver.resolve(TrackedResource.self, name: Ordinal.first)
        return TrackedResource("transaction", log: log)
      }
    }
    let request = try container.makeScope(.request)

    _ = try request.resolve(TrackedResource.self, name: Ordinal.second)
    try request.close()

    #expect(log.elements == ["dispose transaction", "dispose connection"])
  }

  @Test func closingTwiceDisposesNothingMore() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let request = try container.makeScope(.request)
    let first = try request.resolve(TrackedResource.self, name: Ordinal.first)
    let second = try request.resolve(TrackedResource.self, name: Ordinal.second)

    try request.close()
    try request.close()
    try container.close()

    #expect(log.elements == ["dispose second", "dispose first"])
    #expect(first.disposeCount == 1)
    #expect(second.disposeCount == 1)
  }

  @Test func closingAnEmptyScopeDisposesNothing() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let request = try container.makeScope(.request)

    try request.close()

    #expect(request.isClosed)
    #expect(log.elements.isEmpty)
  }

  // MARK: Children before parents

  @Test func closingAParentClosesItsLiveChildrenFirst() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.session)) { _ in
        TrackedResource("session", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .scoped(.request)) {
        resolver in
        TrackedResource("request \(resolver.currentScope.name ?? "?")", log: log)
      }
    }
    let session = try container.makeScope(.session)
    let sessionResource = try session.resolve(TrackedResource.self)
    let one = try session.makeScope(.request, name: "1")
    let two = try session.makeScope(.request, name: "2")
    _ = try one.resolve(TrackedResource.self, name: Ordinal.first)
    _ = try two.resolve(TrackedResource.self, name: Ordinal.first)

    try session.close()

    let entries = log.elements
    #expect(entries.count == 3)
    #expect(Set(entries.prefix(2)) == ["dispose request 1", "dispose request 2"])
    #expect(entries.last == "dispose session")
    #expect(one.isClosed)
    #expect(two.isClosed)
    #expect(sessionResource.disposeCount == 1)
  }

  @Test func closingTheContainerClosesTheWholeTreeBottomUp() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .singleton) { _ in
        TrackedResource("root singleton", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.second, lifetime: .scoped(.session)) {
        _ in
        TrackedResource("session", log: log)
      }
      registry.register(TrackedResource.self, name: Ordinal.third, lifetime: .scoped(.request)) { _ in
        TrackedResource("request", log: log)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    // Created root-first, so that only "children first" explains a bottom-up order.
    _ = try request.resolve(TrackedResource.self, name: Ordinal.first)
    _ = try request.resolve(TrackedResource.self, name: Ordinal.second)
    _ = try request.resolve(TrackedResource.self, name: Ordinal.third)

    try container.close()

    #expect(log.elements == ["dispose request", "dispose session", "dispose root singleton"])
    #expect(session.isClosed)
    #expect(request.isClosed)
  }

  @Test func aChildClosedBeforeItsParentIsNotDisposedAgain() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log)
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let resource = try request.resolve(TrackedResource.self, name: Ordinal.first)

    try request.close()
    try session.close()
    try container.close()

    #expect(resource.disposeCount == 1)
    #expect(log.elements == ["dispose first"])
  }

  // MARK: Errors are collected

  @Test func aFailingDisposerIsCollectedAndTheRemainingDisposersStillRun() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log, failing: [.first, .third])
    let request = try container.makeScope(.request)
    let resources = try Self.slots.map { try request.resolve(TrackedResource.self, name: $0) }

    let error = try #require(resolutionError { try request.close() })

    #expect(error.code == .disposalFailed)
    #expect(error.disposalErrors.count == 2)
    let underlying = underlyingErrors(error.disposalErrors).compactMap { $0 as? DisposalFailure }
    #expect(
      underlying == [DisposalFailure(label: "third"), DisposalFailure(label: "first")])
    #expect(error.disposalErrors.allSatisfy { $0 is DisposalError })
    #expect(log.elements == ["dispose third", "dispose second", "dispose first"])
    #expect(resources.map(\.disposeCount) == [1, 1, 1])
    #expect(request.isClosed)
    #expect(error.description.contains("third"))
  }

  @Test func disposalErrorsNameTheServiceTheyCameFrom() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("only", fails: true)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(TrackedResource.self)

    let error = try #require(resolutionError { try request.close() })

    let disposalError = try #require(error.disposalErrors.first as? DisposalError)
    #expect(isPlainKey(disposalError.key, of: TrackedResource.self))
    #expect(disposalError.underlying as? DisposalFailure == DisposalFailure(label: "only"))
    #expect(isPlainKey(error.key, of: TrackedResource.self))
  }

  @Test func theErrorsOfChildrenAndParentMakeOneAggregate() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(TrackedResource.self, name: Ordinal.first, lifetime: .scoped(.session)) { _ in
        TrackedResource("session", log: log, fails: true)
      }
      registry.register(TrackedResource.self, name: Ordinal.second, lifetime: .scoped(.request)) {
        _ in
        TrackedResource("request", log: log, fails: true)
      }
      registry.register(TrackedResource.self, name: Ordinal.third, lifetime: .scoped(.session)) { _ in
        TrackedResource("session, fine", log: log)
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    _ = try request.resolve(TrackedResource.self, name: Ordinal.first)
    _ = try request.resolve(TrackedResource.self, name: Ordinal.third)
    _ = try request.resolve(TrackedResource.self, name: Ordinal.second)

    let error = try #require(resolutionError { try session.close() })

    #expect(error.code == .disposalFailed)
    let labels = underlyingErrors(error.disposalErrors).compactMap {
      ($0 as? DisposalFailure)?.label
    }
    #expect(labels == ["request", "session"])
    #expect(error.disposalErrors.count == 2)
    #expect(log.elements == ["dispose request", "dispose session, fine", "dispose session"])
  }

  @Test func anAwaitedCloseCollectsDisposerErrorsToo() async throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(log: log, failing: [.second])
    let request = try container.makeScope(.request)
    for slot in Self.slots { _ = try request.resolve(TrackedResource.self, name: slot) }

    let error = await asyncResolutionError { try await request.close() }

    #expect(error?.code == .disposalFailed)
    #expect(
      underlyingErrors(error?.disposalErrors ?? []).compactMap { $0 as? DisposalFailure } == [
        DisposalFailure(label: "second")
      ])
    #expect(log.elements == ["dispose third", "dispose second", "dispose first"])
  }
}
