import Strata
import Synchronization

// Fixtures for the regression suites: each is what an attack on one promise needed.

/// A scoped service whose instance must never be handed out as another type.
final class FirstScoped: Sendable {
  let label = "first"
}

/// Laid out differently from `FirstScoped`, so reading one as the other shows.
final class SecondScoped: Sendable {
  let numbers = [1, 2, 3]
  let tag = 0x5EC0_0D
}

/// A service that receives its arguments as given, to tell argument lists apart.
struct ArgumentEcho: Sendable, Equatable {
  let text: String
}

/// A service that holds a `Provider` and a `Lazy` of a plain dependency.
final class ProviderHolder: Sendable {
  let provider: Provider<Widget>
  let lazy: Lazy<Widget>

  init(provider: Provider<Widget>, lazy: Lazy<Widget>) {
    self.provider = provider
    self.lazy = lazy
  }
}

/// A singleton that holds a `Lazy` of itself's neighbour: the cycle-breaking recipe.
final class LazyHoldingSingleton: Sendable {
  let neighbour: Lazy<Widget>

  init(neighbour: Lazy<Widget>) {
    self.neighbour = neighbour
  }
}

/// A disposable that counts its disposals and records its label in a shared log.
final class TrackedResource: Disposable, Sendable {
  let label: String
  private let log: Collector<String>?
  private let disposals = Atomic<Int>(0)

  init(_ label: String, log: Collector<String>? = nil) {
    self.label = label
    self.log = log
  }

  var disposeCount: Int { disposals.load(ordering: .sequentiallyConsistent) }

  func dispose() throws {
    disposals.add(1, ordering: .sequentiallyConsistent)
    log?.append(label)
  }
}

/// A weak reference that can cross into a `@Sendable` closure.
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
  // `@unchecked Sendable`: written once in `init`, then only read.
  weak var object: Object?

  init(_ object: Object?) {
    self.object = object
  }
}
