import Strata
import Synchronization

extension ScopeTag {
  /// The tag of the intermediate scopes in `scope-depth-8`.
  static let benchmarkLevel = ScopeTag("level")
}

extension Workload {
  /// Create a `.request` scope, resolve one request-scoped service twice and one root singleton,
  /// close the scope. Sampled alongside: the same loop on a ``MinimalScope``, the least a scope
  /// with Strata's guarantees costs (its `minimal-scope` reference).
  static let requestScope = Workload(
    id: "request-scope",
    summary: "make a request scope, resolve a request-scoped service twice and a singleton, close"
  ) { _ in
    let container = try Container { registry in
      registry.register(Bar.self, lifetime: .singleton) { _ in Bar() }
      registry.register(RequestState.self, lifetime: .scoped(.request)) { _ in RequestState() }
    }
    let naive = NaiveContainer()
    naive.register(Bar.self, singleton: true) { _ in Bar() }
    let root = ManualRoot()
    let scope = try container.makeScope(.request)
    try expect(
      try scope.resolve(RequestState.self) === scope.resolve(RequestState.self),
      "Strata made two instances of a request-scoped service in one scope")
    try scope.close()
    let minimalRoot = MinimalRoot()
    let minimal = MinimalScope(parent: minimalRoot)
    try expect(
      try minimal.resolve { RequestState() } === minimal.resolve { RequestState() },
      "the minimal scope made two instances")
    minimal.close()
    var subjects = Subjects(
      strata: { count in
        for _ in 0..<count {
          let request = try container.makeScope(.request)
          blackHole(try request.resolve(RequestState.self))
          blackHole(try request.resolve(RequestState.self))
          blackHole(try request.resolve(Bar.self))
          try request.close()
        }
      },
      manual: { count in
        for _ in 0..<count {
          let state = RequestState()
          blackHole(state)
          blackHole(state)
          blackHole(root.sharedBar())
        }
      },
      naive: { count in
        for _ in 0..<count {
          let request = NaiveScope(parent: naive)
          blackHole(try request.resolve(RequestState.self) { RequestState() })
          blackHole(try request.resolve(RequestState.self) { RequestState() })
          blackHole(try naive.resolve(Bar.self))
        }
      })
    subjects.references[MinimalScope.referenceID] = { count in
      for _ in 0..<count {
        let request = MinimalScope(parent: minimalRoot)
        blackHole(try request.resolve { RequestState() })
        blackHole(try request.resolve { RequestState() })
        blackHole(request.parent.sharedBar())
        request.close()
      }
    }
    return subjects
  }

  /// Two threads resolving the same request's existing scoped instance at once (wall time over
  /// all resolves), as a request's concurrent tasks do: each read announces itself to the scope
  /// (so that a close cannot free the instance under it) with an atomic add and a subtract on a
  /// counter both threads share. The hand-written baseline hands the same shared instance to
  /// both threads through an accessor (a retain and a release of one object shared by both).
  static let contendedScoped = Workload(
    id: "contended-scoped",
    summary: "2 threads resolve one request's existing scoped instance (wall time / all resolves)",
    threads: 2
  ) { _ in
    let container = try Container { registry in
      registry.register(RequestState.self, lifetime: .scoped(.request)) { _ in RequestState() }
    }
    let request = try container.makeScope(.request)
    let first = try request.resolve(RequestState.self)
    try expect(
      try request.resolve(RequestState.self) === first, "Strata made two instances in one request")
    let naive = NaiveScope(parent: NaiveContainer())
    let manual = ManualRequest()
    return Subjects(
      strata: { count in for _ in 0..<count { blackHole(try request.resolve(RequestState.self)) } },
      manual: { count in for _ in 0..<count { blackHole(manual.state()) } },
      naive: { count in
        for _ in 0..<count { blackHole(try naive.resolve(RequestState.self) { RequestState() }) }
      })
  }

  /// The transient service registered in the root, resolved from a scope eight levels down whose
  /// scopes have no registrations of their own.
  static let scopeDepth8 = Workload(
    id: "scope-depth-8",
    summary: "the transient service resolved from a scope 8 levels below the root"
  ) { _ in
    let container = try Container { registry in registry.register(Foo.self) { _ in Foo() } }
    var deepest: Scope = container
    for _ in 0..<8 { deepest = try deepest.makeScope(.benchmarkLevel) }
    let scope = deepest
    let naive = NaiveContainer()
    naive.register(Foo.self) { _ in Foo() }
    try expect(try scope.resolve(Foo.self).value == 42, "Strata made a wrong Foo from a deep scope")
    var subjects = Subjects(
      strata: { count in for _ in 0..<count { blackHole(try scope.resolve(Foo.self)) } },
      manual: { count in for _ in 0..<count { blackHole(Foo()) } },
      naive: { count in for _ in 0..<count { blackHole(try naive.resolve(Foo.self)) } })
    subjects.references[Workload.transient.id] = { count in
      for _ in 0..<count { blackHole(try container.resolve(Foo.self)) }
    }
    return subjects
  }

  /// 1,000,000 disposable transients resolved from the root and dropped: resident memory must stay
  /// flat, because a scope never keeps transients.
  static let rootTransientChurn = Workload(
    id: "root-transient-churn",
    summary: "disposable transients resolved from the root and dropped (memory must stay flat)"
  ) { _ in
    let container = try Container { registry in
      registry.register(DisposableFoo.self) { _ in DisposableFoo() }
    }
    let naive = NaiveContainer()
    naive.register(DisposableFoo.self) { _ in DisposableFoo() }
    let churn = 1_000_000
    var growth: [Variant: Int] = [:]
    for _ in 0..<10_000 { blackHole(try container.resolve(DisposableFoo.self)) }
    if let before = residentBytes() {
      for _ in 0..<churn { blackHole(try container.resolve(DisposableFoo.self)) }
      if let after = residentBytes() { growth[.strata] = after - before }
    }
    if let before = residentBytes() {
      for _ in 0..<churn { blackHole(try naive.resolve(DisposableFoo.self)) }
      if let after = residentBytes() { growth[.naive] = after - before }
    }
    if let before = residentBytes() {
      for _ in 0..<churn { blackHole(DisposableFoo()) }
      if let after = residentBytes() { growth[.manual] = after - before }
    }
    try expect(DisposableFoo.disposed.load(ordering: .relaxed) == 0, "the container disposed a transient")
    var subjects = Subjects(
      strata: { count in for _ in 0..<count { blackHole(try container.resolve(DisposableFoo.self)) } },
      manual: { count in for _ in 0..<count { blackHole(DisposableFoo()) } },
      naive: { count in for _ in 0..<count { blackHole(try naive.resolve(DisposableFoo.self)) } })
    subjects.residentGrowth = growth
    return subjects
  }
}

extension Workload {
  /// 1,000,000 request scopes, each resolving a request-scoped service that holds a `Provider`
  /// and a `Lazy` (auto-wired), touching the `Lazy` once, then closing: resident memory must stay
  /// flat, because neither keeps its scope (and so the service holding it) alive.
  static let providerScopeChurn = Workload(
    id: "provider-scope-churn",
    summary: "request scopes whose scoped service holds a Provider and a Lazy, made and closed (flat memory)"
  ) { _ in
    let container = try Container { registry in
      registry.register(Foo.self) { _ in Foo() }
      registry.register(ProviderHolder.self, lifetime: .scoped(.request), ProviderHolder.init)
    }
    let naive = NaiveContainer()
    naive.register(Foo.self) { _ in Foo() }
    @Sendable func strataRequest() throws {
      let request = try container.makeScope(.request)
      let holder = try request.resolve(ProviderHolder.self)
      blackHole(try holder.lazy.value)
      try request.close()
    }
    @Sendable func naiveRequest() throws {
      let request = NaiveScope(parent: naive)
      // The holder's closures capture the scope weakly: a strong capture would be a cycle.
      let holder = try request.resolve(NaiveProviderHolder.self) {
        NaiveProviderHolder { [weak request] in
          guard request != nil else { throw BenchmarkError("naive scope is gone") }
          return try naive.resolve(Foo.self)
        }
      }
      blackHole(try holder.lazyValue())
    }
    @Sendable func manualRequest() {
      let holder = NaiveProviderHolder { Foo() }
      blackHole(try? holder.lazyValue())
    }

    let request = try container.makeScope(.request)
    let holder = try request.resolve(ProviderHolder.self)
    try expect(!holder.lazy.isResolved, "Strata resolved a Lazy before it was read")
    try expect(try holder.lazy.value === holder.lazy.value, "a Lazy resolved twice")
    try expect(try holder.provider().value == 42, "a Provider made a wrong Foo")
    try request.close()

    let churn = 1_000_000
    var growth: [Variant: Int] = [:]
    for _ in 0..<10_000 { try strataRequest() }
    if let before = residentBytes() {
      for _ in 0..<churn { try strataRequest() }
      if let after = residentBytes() { growth[.strata] = after - before }
    }
    if let before = residentBytes() {
      for _ in 0..<churn { try naiveRequest() }
      if let after = residentBytes() { growth[.naive] = after - before }
    }
    if let before = residentBytes() {
      for _ in 0..<churn { manualRequest() }
      if let after = residentBytes() { growth[.manual] = after - before }
    }
    var subjects = Subjects(
      strata: { count in for _ in 0..<count { try strataRequest() } },
      manual: { count in for _ in 0..<count { manualRequest() } },
      naive: { count in for _ in 0..<count { try naiveRequest() } })
    subjects.residentGrowth = growth
    return subjects
  }
}

/// A request-scoped service that makes `Foo`s on demand and keeps one, lazily.
final class ProviderHolder: Sendable {
  let provider: Provider<Foo>
  let lazy: Lazy<Foo>

  init(provider: Provider<Foo>, lazy: Lazy<Foo>) {
    self.provider = provider
    self.lazy = lazy
  }
}

/// What ``ProviderHolder`` is without a container: a closure that makes a `Foo`, and the first
/// one it made, kept.
final class NaiveProviderHolder: Sendable {
  let provider: @Sendable () throws -> Foo
  private let cached = Mutex<Foo?>(nil)

  init(provider: @escaping @Sendable () throws -> Foo) {
    self.provider = provider
  }

  func lazyValue() throws -> Foo {
    if let foo = cached.withLock({ $0 }) { return foo }
    let foo = try provider()
    cached.withLock { $0 = foo }
    return foo
  }
}

/// A request-scoped service.
final class RequestState: Sendable {
  let value = 7
}

/// A disposable transient, as a connection or file handle would be.
final class DisposableFoo: Disposable, Sendable {
  static let disposed = Atomic<Int>(0)
  let value = 5
  func dispose() { DisposableFoo.disposed.add(1, ordering: .relaxed) }
}

/// The `manual` baseline's composition root: what hand-written code that shares one instance
/// does — a stored instance handed to each caller through an accessor, which returns an owned
/// reference just as `resolve` does.
final class ManualRoot: Sendable {
  private let bar = Bar()

  @inline(never)
  func sharedBar() -> Bar { bar }
}

/// The `manual` baseline of `contended-scoped`: one request's state, handed to each caller with
/// an owned reference, as `resolve` returns one.
final class ManualRequest: Sendable {
  private let current = RequestState()

  @inline(never)
  func state() -> RequestState { current }
}

/// The `naive` baseline's request scope: a locked dictionary of this request's instances.
final class NaiveScope: Sendable {
  private let parent: NaiveContainer
  private let instances = Mutex<[ObjectIdentifier: any Sendable]>([:])

  init(parent: NaiveContainer) {
    self.parent = parent
  }

  /// The request's instance of `type`, made with `make` on first use.
  func resolve<Service: Sendable>(_ type: Service.Type, make: () -> Service) throws -> Service {
    let key = ObjectIdentifier(type)
    if let existing = instances.withLock({ $0[key] }) {
      guard let typed = existing as? Service else { throw BenchmarkError("naive scope held a wrong type") }
      return typed
    }
    let made = make()
    instances.withLock { $0[key] = made }
    return made
  }
}
