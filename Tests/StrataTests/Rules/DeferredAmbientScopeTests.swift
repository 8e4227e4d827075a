import Strata
import Testing

private final class RequestOnlyContext: Sendable {}

/// A transient that reads the ambient scope, as code written for `withScope` does.
private final class AmbientWidget: Sendable {
  let context: RequestOnlyContext?
  let current: Scope?
  init(context: RequestOnlyContext?, current: Scope?) {
    self.context = context
    self.current = current
  }
}

private final class SessionCart: Sendable {
  let widget: Lazy<AmbientWidget>
  let widgets: Provider<AmbientWidget>
  init(widget: Lazy<AmbientWidget>, widgets: Provider<AmbientWidget>) {
    self.widget = widget
    self.widgets = widgets
  }
}

/// `@unchecked Sendable`: its only state is the `@Injected` wrapper, which resolves at most once
/// under its own lock.
private final class InjectedSessionCart: @unchecked Sendable {
  @Injected var widget: AmbientWidget
  init() {}
}

/// A `Lazy`, `Provider` or `@Injected` of a scoped instance resolves with the holder's scope as
/// `Scope.current`, as its factory did, not the scope of whoever reads it: a session's cart read
/// inside a request used to build its widget with that request current, and kept the request's
/// context after the request closed.
@Suite struct DeferredAmbientScopeTests {
  private func container() throws -> Container {
    try Container { registry in
      registry.register(RequestOnlyContext.self, lifetime: .scoped(.request)) { _ in RequestOnlyContext() }
      registry.register(AmbientWidget.self) { _ in
        let current = Scope.current
        return AmbientWidget(context: try? current?.resolve(RequestOnlyContext.self), current: current)
      }
      registry.register(SessionCart.self, lifetime: .scoped(.session), SessionCart.init)
      registry.register(InjectedSessionCart.self, lifetime: .scoped(.session)) { _ in InjectedSessionCart() }
    }
  }

  @Test func aSessionInstancesLazyAndProviderSeeTheSession() async throws {
    let container = try container()
    try await container.withScope(.session) { session in
      let cart = try session.resolve(SessionCart.self)
      try await session.withScope(.request) { request in
        let lazy = try cart.widget.value
        let provided = try cart.widgets()
        #expect(lazy.context == nil)
        #expect(lazy.current === session)
        #expect(provided.context == nil)
        #expect(provided.current === session)
        // The request itself still sees its own.
        #expect(try request.resolve(AmbientWidget.self).current === request)
      }
    }
  }

  @Test func aSessionInstancesInjectedPropertySeesTheSession() async throws {
    let container = try container()
    try await container.withScope(.session) { session in
      let cart = try session.resolve(InjectedSessionCart.self)
      try await session.withScope(.request) { _ in
        let widget = try cart.$widget.resolve()
        #expect(widget.context == nil)
        #expect(widget.current === session)
      }
    }
  }

  /// After the deferred resolve, the reader's scope is current again.
  @Test func theReadersScopeIsCurrentAgainAfterwards() async throws {
    let container = try container()
    try await container.withScope(.session) { session in
      let cart = try session.resolve(SessionCart.self)
      try await session.withScope(.request) { request in
        _ = try cart.widgets()
        #expect(Scope.current === request)
      }
    }
  }
}
