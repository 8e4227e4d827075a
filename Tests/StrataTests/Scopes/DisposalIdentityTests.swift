import Strata
import Testing

// One instance is disposed once however many keys hold it; whether a value needs disposal is
// decided per value when the type wraps one (`Optional`, `AnyHashable`).

protocol Closeable: Sendable {}

final class CountedDisposable: Disposable, Closeable, Hashable, Sendable {
  let log: Collector<String>
  let label: String
  init(_ label: String, log: Collector<String>) {
    self.label = label
    self.log = log
  }
  func dispose() { log.append(label) }
  static func == (lhs: CountedDisposable, rhs: CountedDisposable) -> Bool { lhs === rhs }
  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

final class CountedAsyncDisposable: AsyncDisposable, Closeable, Sendable {
  let log: Collector<String>
  init(log: Collector<String>) { self.log = log }
  func dispose() async { log.append("async") }
}

@Suite struct DisposalIdentityTests {
  @Test func anInstanceCachedUnderTwoKeysIsDisposedOnce() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(CountedDisposable.self, lifetime: .scoped(.request)) { _ in
        CountedDisposable("both", log: log)
      }
      registry.register((any Closeable).self, lifetime: .scoped(.request)) { resolver in
        try resolver.resolve(CountedDisposable.self)
      }
      registry.register(CountedDisposable.self, name: "other", lifetime: .scoped(.request)) { _ in
        CountedDisposable("other", log: log)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(CountedDisposable.self)
    _ = try request.resolve((any Closeable).self)
    _ = try request.resolve(CountedDisposable.self, name: "other")
    try request.close()
    #expect(log.elements == ["other", "both"])
  }

  @Test func anAsyncDisposableCachedUnderTwoKeysIsDisposedOnce() async throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(CountedAsyncDisposable.self, lifetime: .scoped(.request)) { _ in
        CountedAsyncDisposable(log: log)
      }
      registry.register((any Closeable).self, lifetime: .scoped(.request)) { resolver in
        try resolver.resolve(CountedAsyncDisposable.self)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve((any Closeable).self)
    try await request.close()
    #expect(log.elements == ["async"])
  }

  /// A `nil` seen first (in another container, even) does not stop a later disposable value of the
  /// same `Optional` type from being disposed.
  @Test func anOptionalServiceIsDisposedWhenItHoldsADisposable() throws {
    let log = Collector<String>()
    let empty = try Container { registry in
      registry.register(CountedDisposable?.self, lifetime: .scoped(.request)) { _ in nil }
    }
    let first = try empty.makeScope(.request)
    #expect(try first.resolve(CountedDisposable?.self) == nil)
    try first.close()

    let full = try Container { registry in
      registry.register(CountedDisposable?.self, lifetime: .scoped(.request)) { _ in
        CountedDisposable("optional", log: log)
      }
    }
    for _ in 0..<2 {
      let request = try full.makeScope(.request)
      _ = try request.resolve(CountedDisposable?.self)
      try request.close()
    }
    #expect(log.elements == ["optional", "optional"])
  }

  @Test func anAnyHashableServiceIsDisposedWhenItHoldsADisposable() throws {
    let log = Collector<String>()
    let container = try Container { registry in
      registry.register(AnyHashable.self, name: "plain", lifetime: .unchecked(.scoped(.request))) { _ in
        AnyHashable(1)
      }
      registry.register(AnyHashable.self, name: "disposable", lifetime: .unchecked(.scoped(.request))) { _ in
        AnyHashable(CountedDisposable("hashable", log: log))
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(AnyHashable.self, name: "plain")
    _ = try request.resolve(AnyHashable.self, name: "disposable")
    try request.close()
    #expect(log.elements == ["hashable"])
  }
}
