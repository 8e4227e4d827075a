import Foundation
import Strata
import Testing

/// The exact text of every failure Strata reports, provoked through the public API: the message
/// and hint are rendered in one place (`Sources/Core/Errors/ErrorMessages.swift`), and moving
/// them there must not change a byte.
@Suite struct ErrorTextTests {
  // MARK: notRegistered

  @Test func notRegisteredAtTopLevel() throws {
    let error = try #require(resolutionError { _ = try Container().resolve(ErrWidget.self) })
    #expect(
      error.description == """
        notRegistered: nothing is registered for `ErrWidget`
          hint: register it, e.g. `registry.register(ErrWidget.self) { resolver in … }`, or check \
        that the module providing it is loaded in this scope or one above it
        """)
  }

  @Test func notRegisteredDeepInAChainWithANearMiss() throws {
    let line = #line + 3
    let container = try Container { registry in
      registry.register(ErrStoreImpl.self) { _ in ErrStoreImpl() }
      registry.register(ErrApp.self) { resolver in
        _ = try resolver.resolve((any ErrStore).self)
        return ErrApp()
      }
    }
    let error = try #require(resolutionError { _ = try container.resolve(ErrApp.self) })
    #expect(
      error.description == """
        notRegistered: nothing is registered for `ErrStore`
          path: ErrApp → ErrStore
          requested by the registration at \(site(line))
          hint: `ErrStoreImpl` is registered; did you mean to register it as `ErrStore` \
        (`.forwarding(to: ErrStore.self)`) or to resolve `ErrStoreImpl`?
        """)
  }

  @Test func notRegisteredWithOtherArgumentsOrNames() throws {
    let container = try Container { registry in
      registry.register(ErrGreeting.self) { (_, _: String) in ErrGreeting() }
      registry.register(ErrWidget.self, name: "audit") { _ in ErrWidget() }
    }
    let arguments = try #require(resolutionError { _ = try container.resolve(ErrGreeting.self) })
    #expect(
      arguments.description == """
        notRegistered: nothing is registered for `ErrGreeting`
          hint: `ErrGreeting` is registered with arguments (String), resolved with ()
        """)
    let unnamed = try #require(resolutionError { _ = try container.resolve(ErrWidget.self) })
    #expect(
      unnamed.description == """
        notRegistered: nothing is registered for `ErrWidget`
          hint: a registration named `"audit"` exists; resolve it with `name: "audit"`
        """)
  }

  @Test func notRegisteredBundleOfAnInjectable() throws {
    let error = try #require(resolutionError { try Container().inject(into: ErrScreen()) })
    #expect(
      error.description == """
        notRegistered: nothing is registered for `Dependencies`
          hint: register the bundle `ErrScreen.Dependencies` so Strata can build it, e.g. \
        `registry.register(ErrScreen.Dependencies.self, ErrScreen.Dependencies.init)`
        """)
  }

  // MARK: cycle and depth

  @Test func cycleOfSingletons() throws {
    let line = #line + 6  // the registration that closes the cycle
    let container = try Container { registry in
      registry.register(ErrCycleA.self, lifetime: .singleton) { resolver in
        _ = try resolver.resolve(ErrCycleB.self)
        return ErrCycleA()
      }
      registry.register(ErrCycleB.self, lifetime: .singleton) { resolver in
        _ = try resolver.resolve(ErrCycleA.self)
        return ErrCycleB()
      }
    }
    let error = try #require(resolutionError { _ = try container.resolve(ErrCycleA.self) })
    #expect(
      error.description == """
        cycle: circular dependency: ErrCycleA → ErrCycleB → ErrCycleA
          path: ErrCycleA → ErrCycleB → ErrCycleA
          registered at \(site(line))
          hint: break the cycle: inject one side as Lazy or Provider, or set it in an onActivated \
        hook of a graph, singleton or scoped registration
        """)
  }

  @Test func cycleOfTransientsStoppedByTheDepthCheck() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register(ErrCycleA.self) { resolver in
        _ = try resolver.resolve(ErrCycleA.self)
        return ErrCycleA()
      }
    }
    let error = try #require(resolutionError { _ = try container.resolve(ErrCycleA.self) })
    #expect(
      error.description == """
        cycle: circular dependency: ErrCycleA → ErrCycleA
          path: ErrCycleA → ErrCycleA
          registered at \(site(line))
          hint: break the cycle: inject one side as Lazy or Provider, or set it in an onActivated \
        hook of a graph, singleton or scoped registration
        """)
  }

  /// Needs a thread with a 512 MiB stack (4,097 nested factories). Not under ThreadSanitizer: with
  /// a stack that large, TSan's runtime crashes in its own large-allocation free path (a SEGV in
  /// `LargeMmapAllocator::Deallocate` when the test frees its 5,000-name registry, every time
  /// this test runs alone under TSan; under AddressSanitizer and without a sanitizer it passes).
  @Test(
    .enabled(if: !Sanitizers.threadSanitizerIsActive, "TSan's allocator crashes with a 512 MiB thread stack"))
  func depthLimitExceededByAnAcyclicChain() async throws {
    let line = #line + 3
    let container = try Container { registry in
      for index in 0..<5000 {
        registry.register(ErrLink.self, name: index) { resolver in
          _ = try resolver.resolve(ErrLink.self, name: index + 1)
          return ErrLink()
        }
      }
    }
    let text = await onThread(stackSize: 512 << 20) { () -> String in
      do {
        _ = try container.resolve(ErrLink.self, name: 0)
        return "no error"
      } catch {
        return "\(error)"
      }
    }
    let lines = try #require(text).split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 4)
    #expect(lines.first == "depthLimitExceeded: depthLimitExceeded for `ErrLink named 4096`")
    #expect(lines.dropFirst(1).first?.hasPrefix("  path: ErrLink(0) → ErrLink(1) → ") == true)
    #expect(lines.dropFirst(2).first == "  registered at \(site(line))")
    #expect(
      lines.last == """
          hint: resolves nested 4097 levels deep here without repeating a service, and the \
        thread's stack (or Strata's limit of 4096) has no room for more; shorten the chain, defer \
        part of it with Lazy or Provider, or resolve on a thread with a larger stack
        """)
  }

  // MARK: factories and hooks

  @Test func factoryAndActivationFailures() throws {
    let factoryLine = #line + 2
    let container = try Container { registry in
      registry.register(ErrWidget.self) { _ in throw ErrFixtureError(label: "boom") }
      registry.register(ErrApp.self) { resolver in
        _ = try resolver.resolve(ErrWidget.self)
        return ErrApp()
      }
      registry.register(ErrCycleA.self) { _ in ErrCycleA() }
        .onActivated { _, _ in throw ErrFixtureError(label: "hook") }
    }
    let hookLine = factoryLine + 5
    let factory = try #require(resolutionError { _ = try container.resolve(ErrApp.self) })
    #expect(
      factory.description == """
        factoryFailed: the factory of `ErrWidget` threw: ErrFixtureError(boom)
          path: ErrApp → ErrWidget
          registered at \(site(factoryLine))
          hint: the error comes from your factory; `underlying` holds it
        """)
    let hook = try #require(resolutionError { _ = try container.resolve(ErrCycleA.self) })
    #expect(
      hook.description == """
        activationFailed: the activation hook of `ErrCycleA` threw: ErrFixtureError(hook)
          registered at \(site(hookLine))
          hint: the instance was discarded; fix the hook or the service it resolves
        """)
  }

  @Test func forwardToATypeTheServiceDoesNotConformTo() throws {
    let line = #line + 3
    let container = try Container { registry in
      registry.register(ErrWidget.self) { _ in ErrWidget() }
        .forwarding(to: (any ErrUnrelated).self)
    }
    let error = try #require(resolutionError { _ = try container.resolve((any ErrUnrelated).self) })
    #expect(
      error.description == """
        typeMismatch: a forwarded instance could not be converted to `ErrUnrelated`
          registered at \(site(line))
          hint: `ErrWidget` is forwarded to `ErrUnrelated`, but `ErrWidget` does not conform to \
        it; forward only to protocols the service conforms to
        """)
  }

  // MARK: invalidRegistration

  @Test func sharedRegistrationWithArguments() throws {
    let line = #line + 3
    let thrown = resolutionError {
      _ = try Container { registry in
        registry.register(ErrGreeting.self, lifetime: .singleton) { (_, _: String) in ErrGreeting() }
      }
    }
    let error = try #require(thrown)
    #expect(
      error.description == """
        invalidRegistration: the registration of `ErrGreeting with arguments (String)` is invalid
          registered at \(site(line))
          hint: a singleton registration cannot take runtime arguments (which instance would a \
        second set of arguments get?); register it as transient or graph
        """)
  }

  @Test func weakRegistrationOfAValue() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register(ErrValue.self, lifetime: .weak) { _ in ErrValue() }
    }
    let error = try #require(resolutionError { _ = try container.resolve(ErrValue.self) })
    #expect(
      error.description == """
        invalidRegistration: the registration of `ErrValue` is invalid
          registered at \(site(line))
          hint: a weak registration must make class instances, but it made a `ErrValue`, a value; \
        register it as transient, singleton or scoped
        """)
  }

  @Test func lateRegistrationAndRefinements() throws {
    let registrar = ErrEscaped<Registrar>()
    let handle = ErrEscaped<RegistrationHandle<ErrWidget>>()
    let widgetLine = #line + 3
    let container = try Container { registry in
      registrar.value = registry
      handle.value = registry.register(ErrWidget.self) { _ in ErrWidget() }
    }
    let registerLine = #line + 1
    try #require(registrar.value).register(ErrApp.self) { _ in ErrApp() }
    try #require(handle.value).onActivated { _, _ in }

    let late = try #require(resolutionError { _ = try container.resolve(ErrApp.self) })
    #expect(
      late.description == """
        invalidRegistration: the registration of `ErrApp` is invalid
          registered at \(site(registerLine))
          hint: `ErrApp` was registered through a Registrar after its batch was published, so the \
        registration was never made; register only inside the closure passed to `register(_:)` or \
        `Container(_:)`, or start a new batch with `scope.register { … }`
        """)
    let hook = try #require(resolutionError { _ = try container.resolve(ErrWidget.self) })
    #expect(
      hook.description == """
        invalidRegistration: the registration of `ErrWidget` is invalid
          registered at \(site(widgetLine))
          hint: An `onActivated` hook was added to the registration of `ErrWidget` after its batch \
        was published, so it never took effect; refine a registration only inside the closure that \
        registered it
        """)
  }

  // MARK: scopeClosed

  @Test func resolveFromAClosedScope() throws {
    let container = try Container { registry in registry.register(ErrWidget.self) { _ in ErrWidget() } }
    let session = try container.makeScope(.session, name: "s1")
    try session.close()
    let error = try #require(resolutionError { _ = try session.resolve(ErrWidget.self) })
    #expect(
      error.description == """
        scopeClosed: the scope was closed; `ErrWidget` cannot be resolved from it
          hint: root → session("s1") is closed; resolve from an open scope, and close a scope only \
        after its last use
        """)
  }

  @Test func lazyProviderAndInjectedAfterTheirScopeIsFreed() throws {
    let container = try Container { registry in registry.register(ErrWidget.self) { _ in ErrWidget() } }
    var request: Scope? = try container.makeScope(.request)
    let lazy = try #require(request?.lazy(ErrWidget.self))
    let provider = try #require(request?.provider(ErrWidget.self))
    let injected = try #require(try request?.withScope(.request) { _ in Injected<ErrWidget>() })
    request = nil

    let lazyError = try #require(resolutionError { _ = try lazy.value })
    #expect(
      lazyError.description == """
        scopeClosed: the scope was closed; `ErrWidget` cannot be resolved from it
          hint: the scope this Lazy<ErrWidget> resolves from has been freed; a Lazy does not keep \
        its scope alive, so use it only while that scope is in use
        """)
    let providerError = try #require(resolutionError { _ = try provider() })
    #expect(providerError.hint?.hasPrefix("the scope this Provider<ErrWidget> resolves") == true)
    let injectedError = try #require(resolutionError { _ = try injected.projectedValue.resolve() })
    #expect(injectedError.hint?.hasPrefix("the scope this @Injected property (ErrWidget) resolves") == true)
  }

  /// A near-miss hint names a registered name of the wanted name's type, not the first name.
  @Test func aNearMissPrefersANameOfTheSameType() throws {
    enum Channel: Hashable, Sendable { case app, audit }
    let container = try Container { registry in
      registry.register(ErrWidget.self, name: 1) { _ in ErrWidget() }
      registry.register(ErrWidget.self, name: Channel.audit) { _ in ErrWidget() }
    }
    let error = try #require(resolutionError { _ = try container.resolve(ErrWidget.self, name: Channel.app) })
    #expect(error.code == .notRegistered)
    #expect(error.hint?.contains(".audit") == true)
    #expect(error.hint?.contains("`1`") == false)
  }

  /// Resolving from a closed scope names the key with its name and argument types.
  @Test func aClosedScopeNamesTheWholeKey() throws {
    let container = try Container { registry in
      registry.register(ErrWidget.self, name: "primary") { _ in ErrWidget() }
      registry.register(ErrWidget.self) { (_, id: Int) in ErrWidget() }
    }
    let request = try container.makeScope(.request)
    try request.close()
    let named = try #require(resolutionError { _ = try request.resolve(ErrWidget.self, name: "primary") })
    #expect(named.code == .scopeClosed)
    #expect(named.key.description == #"ErrWidget named "primary""#)
    let withArguments = try #require(
      resolutionError { _ = try request.resolve(ErrWidget.self, arguments: 7) })
    #expect(withArguments.key.description == "ErrWidget with arguments (Int)")
    let ifRegistered = try #require(
      resolutionError { _ = try request.resolveIfRegistered(ErrWidget.self, name: "primary") })
    #expect(ifRegistered.key.description == #"ErrWidget named "primary""#)
    let all = try #require(resolutionError { _ = try request.resolveAll(ErrWidget.self, name: "primary") })
    #expect(all.key.description == #"ErrWidget named "primary""#)
  }

  /// A named `@Injected` property's errors name the key with its name.
  @Test func aNamedInjectedPropertyNamesItsKey() throws {
    let container = try Container { registry in
      registry.register(ErrWidget.self, name: "audit") { _ in ErrWidget() }
    }
    var request: Scope? = try container.makeScope(.request)
    let injected = try #require(
      try request?.withScope(.request) { _ in Injected<ErrWidget>(name: "audit") })
    request = nil
    let freed = try #require(resolutionError { _ = try injected.projectedValue.resolve() })
    #expect(freed.key.isNamed)
    #expect(freed.hint?.hasPrefix(#"the scope this @Injected property (ErrWidget named "audit")"#) == true)

    let unscoped = try #require(
      resolutionError { _ = try Injected<ErrWidget>(name: "audit").projectedValue.resolve() })
    #expect(
      unscoped.description == """
        noMatchingScope: `ErrWidget named "audit"` needs an enclosing scope that is not there
          hint: an @Injected property (ErrWidget named "audit") was read where no scope is current; \
        read it inside `withScope`, or inject from an explicit scope with \
        `@Injected(name: …, from: container)`
        """)
  }

  // MARK: noMatchingScope and captiveDependency

  @Test func scopedServiceWithoutItsScope() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register(ErrRequestContext.self, lifetime: .scoped(.request)) { _ in ErrRequestContext() }
    }
    let session = try container.makeScope(.session, name: "s1")
    let error = try #require(resolutionError { _ = try session.resolve(ErrRequestContext.self) })
    #expect(
      error.description == """
        noMatchingScope: `ErrRequestContext` needs an enclosing scope that is not there
          registered at \(site(line))
          hint: no `.request` scope above root → session("s1"); resolve it from inside a .request \
        scope (`container.makeScope(.request)`)
        """)
  }

  @Test func injectedWithoutACurrentScope() throws {
    let error = try #require(
      resolutionError { _ = try Injected<ErrWidget>().projectedValue.resolve() })
    #expect(
      error.description == """
        noMatchingScope: `ErrWidget` needs an enclosing scope that is not there
          hint: an @Injected property (ErrWidget) was read where no scope is current; read it \
        inside `withScope`, or inject from an explicit scope with `@Injected(from: container)`
        """)
  }

  @Test func captiveDependency() throws {
    let contextLine = #line + 2
    let container = try Container { registry in
      registry.register(ErrRequestContext.self, lifetime: .scoped(.request)) { _ in ErrRequestContext() }
      registry.register(ErrReportCache.self, lifetime: .singleton) { resolver in
        _ = try resolver.resolve(ErrRequestContext.self)
        return ErrReportCache()
      }
    }
    let cacheLine = contextLine + 1
    let request = try container.makeScope(.request)
    let error = try #require(resolutionError { _ = try request.resolve(ErrReportCache.self) })
    #expect(
      error.description == """
        captiveDependency: a longer-lived service would capture the shorter-lived `ErrRequestContext`
          path: ErrReportCache → ErrRequestContext
          registered at \(site(cacheLine))
          hint: `ErrReportCache` (singleton, registered at \(site(cacheLine))) depends on \
        `ErrRequestContext` (scoped(.request), registered at \(site(contextLine))); it would outlive \
        every .request scope and keep one of their instances. Make `ErrReportCache` \
        scoped(.request) as well, or pass the .request value to it as an argument
        """)
  }

  @Test func captiveUntaggedScopedDependency() throws {
    let contextLine = #line + 2
    let container = try Container { registry in
      registry.register(ErrRequestContext.self, lifetime: .scoped) { _ in ErrRequestContext() }
      registry.register(ErrReportCache.self, lifetime: .singleton) { resolver in
        _ = try resolver.resolve(ErrRequestContext.self)
        return ErrReportCache()
      }
    }
    let cacheLine = contextLine + 1
    let request = try container.makeScope(.request)
    let error = try #require(resolutionError { _ = try request.resolve(ErrReportCache.self) })
    #expect(
      error.description == """
        captiveDependency: a longer-lived service would capture the shorter-lived `ErrRequestContext`
          path: ErrReportCache → ErrRequestContext
          registered at \(site(cacheLine))
          hint: `ErrReportCache` (singleton, registered at \(site(cacheLine))) depends on \
        `ErrRequestContext` (scoped, registered at \(site(contextLine))); a scoped instance belongs \
        to the scope a resolve starts in, and a singleton is resolved in the scope that registered \
        it, so it would keep that scope's instance for good. Give `ErrRequestContext` a tag \
        (`.scoped(.request)`), or make `ErrReportCache` scoped as well
        """)
    #expect(error.registrations.map(\.lifetime) == [.singleton, .scoped])
  }

  // MARK: disposalFailed

  @Test func disposersFailingOnClose() throws {
    let container = try Container { registry in
      registry.register(ErrFailingDisposable.self, name: "first", lifetime: .scoped) { _ in
        ErrFailingDisposable("first")
      }
      registry.register(ErrFailingDisposable.self, name: "second", lifetime: .scoped) { _ in
        ErrFailingDisposable("second")
      }
    }
    let request = try container.makeScope(.request, name: "r1")
    _ = try request.resolve(ErrFailingDisposable.self, name: "first")
    _ = try request.resolve(ErrFailingDisposable.self, name: "second")
    let error = try #require(resolutionError { try request.close() })
    #expect(
      error.description == """
        disposalFailed: 2 disposer(s) failed while the scope closed
          hint: every other disposer of root → request("r1") still ran
          disposer error: ErrFailingDisposable named "second": ErrFixtureError(second)
          disposer error: ErrFailingDisposable named "first": ErrFixtureError(first)
        """)
  }
}

/// A near-miss name whose text equals the wanted one differs in type: the hint names both types.
@Suite struct NameTypeHintTests {
  private enum AppChannel: Hashable, Sendable { case audit }
  private enum LibraryChannel: Hashable, Sendable { case audit }

  @Test func equalNameTextsOfDifferentTypesNameTheTypes() throws {
    let container = try Container { registry in
      registry.register(String.self, name: AppChannel.audit) { _ in "app" }
      registry.register(Int.self, name: 1) { _ in 1 }
    }
    let channel = #expect(throws: ResolutionError.self) {
      try container.resolve(String.self, name: LibraryChannel.audit)
    }
    #expect(
      channel?.hint
        == "`String` is registered under the name `.audit` of type `AppChannel`, not `.audit` of type "
        + "`LibraryChannel`: a name's type is part of the key")
    let number = #expect(throws: ResolutionError.self) { try container.resolve(Int.self, name: UInt(1)) }
    #expect(
      number?.hint
        == "`Int` is registered under the name `1` of type `Int`, not `1` of type `UInt`: a name's type "
        + "is part of the key")
  }
}
