import Foundation
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

/// One link of a chain of distinct service types: `Link<Link<…<ChainEnd>>>`.
final class Link<Inner>: Sendable {
  let depth: Int

  init(depth: Int) {
    self.depth = depth
  }
}

/// The innermost service of a chain of `Link`s.
final class ChainEnd: Sendable {
  init() {}
}

/// Registers `ChainEnd` and `length` links around it, each resolving the next inner one, and
/// calls `body` with the outermost type. `closeWith` lets the innermost factory resolve something
/// else (to close a cycle through `Lazy`, say); by default it makes a plain `ChainEnd`.
func registerChain<Inner>(
  into registry: Registrar, around inner: Inner.Type, length: Int, depth: Int = 1,
  closeWith: @escaping @Sendable (borrowing Resolver, Any.Type) throws -> Void = { _, _ in },
  _ body: (Any.Type) -> Void
) {
  registry.register(Link<Inner>.self) { resolver in
    _ = try resolver.resolve(Inner.self)
    return Link(depth: depth)
  }
  guard length > 1 else {
    registry.register(ChainEnd.self) { resolver in
      try closeWith(resolver, Link<Inner>.self)
      return ChainEnd()
    }
    body(Link<Inner>.self)
    return
  }
  registerChain(
    into: registry, around: Link<Inner>.self, length: length - 1, depth: depth + 1,
    closeWith: closeWith, body)
}

/// Resolves `type` from `scope`, opening the metatype.
func resolveOpened(_ type: Any.Type, from scope: Scope) throws -> Any {
  func open<Service>(_: Service.Type) throws -> Any { try scope.resolve(Service.self) }
  return try _openExistential(type, do: open)
}

/// Reads a `Lazy` of `type` made by `resolver`: a resolve that runs as a fresh top-level one.
func readLazy(of type: Any.Type, _ resolver: borrowing Resolver) throws {
  let lazy = try lazyOpened(type, resolver)
  _ = try lazy()
}

private func lazyOpened(_ type: Any.Type, _ resolver: borrowing Resolver) throws -> () throws -> Any {
  func make<Service>(_: Service.Type) -> () throws -> Any {
    let lazy = resolver.lazy(Service.self)
    return { try lazy.value }
  }
  return _openExistential(type, do: make)
}

/// Runs `body` on a new thread with a `stackSize`-byte stack and returns its result, or `nil` if
/// it did not finish within 60 s.
func onThread<Value: Sendable>(
  stackSize: Int, _ body: @escaping @Sendable () -> Value
) async -> Value? {
  let result = Slot<Value>()
  let finished = Flag()
  let thread = Thread {
    result.value = body()
    finished.raise()
  }
  thread.stackSize = stackSize
  thread.start()
  let deadline = ContinuousClock.now + .seconds(60)
  while !finished.isRaised {
    if ContinuousClock.now >= deadline { return nil }
    try? await Task.sleep(for: .milliseconds(2))
  }
  return result.value
}

/// A disposable whose disposal is slow, to keep a close running while another one arrives.
final class SlowResource: Disposable, Sendable {
  let label: String
  private let log: Collector<String>
  private let started: Flag?

  init(_ label: String, log: Collector<String>, started: Flag? = nil) {
    self.label = label
    self.log = log
    self.started = started
  }

  func dispose() throws {
    started?.raise()
    pause(microseconds: 30_000)
    log.append(label)
  }
}

/// An asynchronous disposer that does cancellation-aware work, as a rollback call would.
final class RollbackResource: AsyncDisposable, Sendable {
  private let completed: Flag

  init(completed: Flag) {
    self.completed = completed
  }

  func dispose() async throws {
    try await Task.sleep(for: .milliseconds(2))
    completed.raise()
  }
}

/// A marker error thrown by a request handler.
struct HandlerFailure: Error {}
