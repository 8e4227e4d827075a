import Strata
import Synchronization
import Testing

private final class WeakTally: Sendable {
  private let count = Atomic<Int>(0)
  var value: Int { count.load(ordering: .relaxed) }
  func add() { count.add(1, ordering: .relaxed) }
}

private final class WeakWidget: Sendable {}

private struct WeakValueResource: Disposable, Sendable {
  let disposals: WeakTally
  func dispose() throws { disposals.add() }
}

/// `weak` registrations of wrapper types, and of values a weak reference cannot hold.
@Suite struct WeakWrapperTests {
  /// An `Optional` or `any Sendable` weak service is made and shared while it is held: before, the
  /// empty weak reference read as an existing `nil` instance and the factory never ran.
  @Test func anOptionalOrExistentialWeakServiceIsMadeAndShared() throws {
    let made = WeakTally()
    let container = try Container { registry in
      registry.register(WeakWidget?.self, lifetime: .weak) { _ in
        made.add()
        return WeakWidget()
      }
      registry.register((any Sendable).self, lifetime: .weak) { _ in
        made.add()
        return WeakWidget()
      }
    }
    let optional = try #require(try container.resolve(WeakWidget?.self))
    #expect(try container.resolve(WeakWidget?.self) === optional)
    let existential = try #require(try container.resolve((any Sendable).self) as? WeakWidget)
    #expect(try container.resolve((any Sendable).self) as? WeakWidget === existential)
    #expect(made.value == 2)
    withExtendedLifetime((optional, existential)) {}
  }

  /// A value a weak reference cannot hold is refused, and disposed like any instance Strata
  /// discards (it was dropped undisposed).
  @Test func aDisposableValueIsRefusedAndDisposed() throws {
    let disposals = WeakTally()
    let container = try Container { registry in
      registry.register(WeakValueResource.self, lifetime: .weak) { _ in
        WeakValueResource(disposals: disposals)
      }
    }
    #expect { try container.resolve(WeakValueResource.self) } throws: {
      ($0 as? ResolutionError)?.code == .invalidRegistration
    }
    #expect(disposals.value == 1)
  }
}
