import Foundation
import Strata
import Testing

/// `Lazy`, `Provider` and `@Injected` resolve in their scope while it is open and are `scopeClosed`
/// after it closed, whoever holds them and whatever thread reads them; a `Lazy` resolves once and
/// retries after an error; a singleton's deferred request service is captive.
@Suite struct AttackDeferredTests {
  /// An object that gets two widgets through `@Injected` from a given scope.
  final class InjectedWidgets {
    @Injected var widget: Widget
    @Injected(name: "n") var named: Widget

    init(scope: Scope) {
      _widget = Injected(from: scope)
      _named = Injected(name: "n", from: scope)
    }
  }

  /// The deferred handles of one scope: a `Lazy`, a `Provider` and two `@Injected` projections.
  struct Handles: Sendable {
    let lazy: Lazy<Widget>
    let provider: Provider<Widget>
    let injected: Injection<Widget>
    let injectedNamed: Injection<Widget>

    init(from scope: Scope) {
      lazy = scope.lazy(Widget.self)
      provider = scope.provider(Widget.self)
      let holder = InjectedWidgets(scope: scope)
      injected = holder.$widget
      injectedNamed = holder.$named
    }

    /// What each handle's resolve ends with.
    func outcomes() -> [Outcome] {
      [
        Outcome { try lazy.value }, Outcome { try provider() },
        Outcome { try injected.resolve() }, Outcome { try injectedNamed.resolve() },
      ]
    }
  }

  /// `Lazy`, `Provider` and `@Injected` made from a request and first used after it closed, on
  /// another thread, with the request still held and with it dropped: `scopeClosed`.
  @Test(arguments: [false, true])
  func deferredResolvesAfterTheCloseAreScopeClosed(scopeDropped: Bool) async throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: "n") { _ in Widget(id: 2) }
    }
    var request: Scope? = try container.makeScope(.request)
    let handles = Handles(from: try #require(request))
    try closeSynchronously(try #require(request))
    if scopeDropped { request = nil }

    let outcomes = await withDeadline { handles.outcomes() }

    #expect(outcomes == Array(repeating: .failure(.scopeClosed), count: 4), "\(outcomes ?? [])")
    withExtendedLifetime(request) {}
    try closeSynchronously(container)
  }

  /// A `Lazy` and `Provider`s read on one thread while another closes their request, 300 rounds:
  /// each read gives a value or `scopeClosed`, and every scoped instance made is disposed.
  @Test func deferredReadsRacingTheCloseSucceedOrAreScopeClosedAndLeakNothing() async throws {
    let made = Counter()
    let disposed = Counter()
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        made.increment()
        return TrackedResource("scoped", disposed: disposed)
      }
      registry.register(Widget.self) { _ in Widget(id: 1) }
    }
    let problems = Collector<String>()
    for round in 0..<300 {
      let request = try container.makeScope(.request)
      let lazy = request.lazy(TrackedResource.self)
      let provider = request.provider(TrackedResource.self)
      let widgets = request.provider(Widget.self)
      let start = Barrier(parties: 2)

      let finished = await runOnThreads(2) { index in
        start.arriveAndWait()
        if index == 1 {
          for _ in 0..<(round % 9) { sched_yield() }
          try? request.close()
          return
        }
        for _ in 0..<5 {
          let outcomes = [Outcome { try lazy.value }, Outcome { try provider() }, Outcome { try widgets() }]
          for outcome in outcomes where !outcome.isSuccess && outcome != .failure(.scopeClosed) {
            problems.append("\(outcome)")
          }
        }
      }

      #expect(finished, "deadlock in round \(round)")
    }
    #expect(problems.elements.isEmpty, "\(Set(problems.elements))")
    #expect(made.value == disposed.value, "made \(made.value), disposed \(disposed.value)")
    try closeSynchronously(container)
  }

  /// A `Lazy` read from four threads at once runs its factory once, and all four get its instance.
  /// 50 rounds.
  @Test func aLazyReadFromFourThreadsAtOnceResolvesOnce() async throws {
    for round in 0..<50 {
      let calls = Counter()
      let container = try Container { registry in
        registry.register(Widget.self) { _ in
          pause(microseconds: 500)
          return Widget(id: calls.increment())
        }
      }
      let lazy = container.lazy(Widget.self)
      let ids = Collector<Int>()
      let start = Barrier(parties: 4)

      let finished = await runOnThreads(4) { _ in
        start.arriveAndWait()
        if let widget = try? lazy.value { ids.append(widget.id) }
      }

      #expect(finished, "deadlock in round \(round)")
      #expect(calls.value == 1)
      #expect(ids.elements == [1, 1, 1, 1], "\(ids.elements)")
      try closeSynchronously(container)
    }
  }

  /// A `Lazy` whose first read throws resolves again on the next read.
  @Test func aLazyWhoseFirstReadThrowsResolvesOnTheNext() throws {
    let calls = Counter()
    let container = try Container { registry in
      registry.register(Widget.self) { _ in
        if calls.increment() == 1 { throw FixtureError(code: 1) }
        return Widget(id: 9)
      }
    }
    let lazy = container.lazy(Widget.self)

    let error = resolutionError { _ = try lazy.value }

    #expect(error?.code == .factoryFailed)
    #expect(try lazy.value.id == 9)
    #expect(lazy.isResolved)
    try container.close()
  }

  /// `Lazy` and `Provider` keep their scope alive neither when the scope made them nor when a
  /// scoped instance of it holds them; once the scope is gone they are `scopeClosed`.
  @Test func deferredHandlesDoNotKeepTheirScopeAlive() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(ProviderHolder.self, lifetime: .scoped(.request), ProviderHolder.init)
    }
    weak var weakRequest: Scope?
    let (lazy, provider, holder) = try { () throws -> (Lazy<Widget>, Provider<Widget>, ProviderHolder) in
      let request = try container.makeScope(.request)
      weakRequest = request
      return (
        request.lazy(Widget.self), request.provider(Widget.self), try request.resolve(ProviderHolder.self)
      )
    }()

    #expect(weakRequest == nil, "the request is kept alive")
    #expect(resolutionError { _ = try lazy.value }?.code == .scopeClosed)
    #expect(resolutionError { _ = try provider() }?.code == .scopeClosed)
    #expect(resolutionError { _ = try holder.provider() }?.code == .scopeClosed)
    #expect(resolutionError { _ = try holder.lazy.value }?.code == .scopeClosed)
    try container.close()
  }

  /// A singleton holding a `Provider` and a `Lazy` of a `scoped(.request)` service, read inside a
  /// request and inside a nested `withScope`: `captiveDependency` by both.
  @Test func aSingletonsProviderOrLazyOfARequestServiceIsCaptive() throws {
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 1) }
      registry.register(ProviderHolder.self, lifetime: .singleton, ProviderHolder.init)
    }
    let request = try container.makeScope(.request)
    let captor = try request.resolve(ProviderHolder.self)

    #expect(resolutionError { _ = try captor.provider() }?.code == .captiveDependency)
    #expect(resolutionError { _ = try captor.lazy.value }?.code == .captiveDependency)
    try request.withScope(.request) { _ in
      #expect(resolutionError { _ = try captor.provider() }?.code == .captiveDependency)
    }
    try request.close()
    try container.close()
  }
}
