import Strata
import Testing

/// A per-scope unit of work with no tag: one instance per scope a resolve starts in.
private final class UnitOfWork: Sendable {
  init() {}
}

/// Depends on the unit of work directly.
private final class Ledger: Sendable {
  let work: UnitOfWork
  init(work: UnitOfWork) {
    self.work = work
  }
}

/// Reaches the unit of work through a transient `Ledger`.
private final class Auditor: Sendable {
  let ledger: Ledger
  init(ledger: Ledger) {
    self.ledger = ledger
  }
}

/// Keeps a deferred route to the unit of work.
private final class DeferredHolder: Sendable {
  let lazy: Lazy<UnitOfWork>
  let provider: Provider<UnitOfWork>
  init(lazy: Lazy<UnitOfWork>, provider: Provider<UnitOfWork>) {
    self.lazy = lazy
    self.provider = provider
  }
}

/// Injects the unit of work through a property wrapper.
///
/// `@unchecked Sendable`: its only state is the `@Injected` wrapper, which is never reassigned
/// and resolves at most once under its own lock.
private final class InjectingHolder: @unchecked Sendable {
  @Injected var work: UnitOfWork
  init() {}
}

/// The lifetime rules as one table (`LifetimeRules`), and every route to a dependency obeying
/// it: a factory's resolver, `Lazy`, `Provider`, `@Injected` and `Scope.current`.
@Suite struct LifetimeRulesTests {
  // MARK: The table

  @Test func theTableAllowsACaptureOnlyWhenTheDependencyLivesAtLeastAsLong() {
    let shared: [Lifetime] = [.singleton, .eagerSingleton, .weak]
    let passing: [Lifetime] = [.transient, .graph]
    let all: [Lifetime] = shared + passing + [.scoped, .scoped(.request), .scoped(.session)]

    for holder in passing {
      for dependency in all {
        #expect(LifetimeRules.capture(of: dependency, by: holder) == .allowed, "\(holder) → \(dependency)")
      }
    }
    for holder in shared + [.scoped, .scoped(.session)] {
      for dependency in shared + passing {
        #expect(LifetimeRules.capture(of: dependency, by: holder) == .allowed, "\(holder) → \(dependency)")
      }
      #expect(LifetimeRules.capture(of: .scoped(.request), by: holder) == .allowedWithin(.request))
    }
    for holder in shared {
      #expect(LifetimeRules.capture(of: .scoped, by: holder) == .captive, "\(holder) → scoped")
    }
    #expect(LifetimeRules.capture(of: .scoped, by: .scoped) == .allowed)
    #expect(LifetimeRules.capture(of: .scoped, by: .scoped(.session)) == .allowed)
  }

  // MARK: Untagged scoped under a shared instance

  @Test(arguments: [Lifetime.singleton, .weak])
  func aSharedInstanceMayNotKeepAnUntaggedScopedInstance(holder: Lifetime) throws {
    let made = Counter()
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in
        made.increment()
        return UnitOfWork()
      }
      registry.register(Ledger.self, lifetime: holder) { Ledger(work: try $0.resolve(UnitOfWork.self)) }
    }
    let request = try container.makeScope(.request)

    let error = try #require(resolutionError { _ = try request.resolve(Ledger.self) })

    #expect(error.code == .captiveDependency)
    #expect(identifiers(error.path).suffix(2) == identifiers(of: Ledger.self, UnitOfWork.self)[...])
    #expect(error.hint?.contains("`Ledger` (\(holder)") == true)
    #expect(error.hint?.contains("Give `UnitOfWork` a tag") == true)
    #expect(made.value == 0, "the captive instance is never made")
    try request.close()
  }

  @Test func theRulePassesThroughTransients() throws {
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in UnitOfWork() }
      registry.register(Ledger.self) { Ledger(work: try $0.resolve(UnitOfWork.self)) }
      registry.register(Auditor.self, lifetime: .singleton) { Auditor(ledger: try $0.resolve(Ledger.self)) }
    }

    let error = try #require(resolutionError { _ = try container.resolve(Auditor.self) })

    #expect(error.code == .captiveDependency)
    #expect(identifiers(error.path) == identifiers(of: Auditor.self, Ledger.self, UnitOfWork.self))
  }

  @Test func aScopedInstanceSharesItsScopesUntaggedScopedInstance() throws {
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in UnitOfWork() }
      registry.register(Ledger.self, lifetime: .scoped) { Ledger(work: try $0.resolve(UnitOfWork.self)) }
    }
    let request = try container.makeScope(.request)

    let ledger = try request.resolve(Ledger.self)

    #expect(ledger.work === (try request.resolve(UnitOfWork.self)))
    try request.close()
  }

  @Test func aTopLevelResolveStillGetsTheScopesOwnInstance() throws {
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in UnitOfWork() }
      registry.register(Ledger.self) { Ledger(work: try $0.resolve(UnitOfWork.self)) }
    }
    let first = try container.makeScope(.request)
    let second = try container.makeScope(.request)

    let fromFirst = try first.resolve(Ledger.self).work
    #expect(fromFirst === (try first.resolve(Ledger.self).work))
    #expect(fromFirst !== (try second.resolve(Ledger.self).work))
    #expect((try container.resolve(UnitOfWork.self)) === (try container.resolve(UnitOfWork.self)))
    try first.close()
    try second.close()
  }

  // MARK: Every route

  @Test func aLazyOrProviderMadeForASingletonObeysItsRules() throws {
    let made = Counter()
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in
        made.increment()
        return UnitOfWork()
      }
      registry.register(DeferredHolder.self, lifetime: .singleton) { resolver in
        DeferredHolder(lazy: resolver.lazy(UnitOfWork.self), provider: try resolver.resolve())
      }
    }
    let holder = try container.resolve(DeferredHolder.self)

    #expect(resolutionError { _ = try holder.lazy.value }?.code == .captiveDependency)
    #expect(resolutionError { _ = try holder.provider() }?.code == .captiveDependency)
    #expect(made.value == 0)
  }

  @Test func aLazyMadeAtTheTopLevelResolvesInItsScope() throws {
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in UnitOfWork() }
    }
    let request = try container.makeScope(.request)

    let lazy = request.lazy(UnitOfWork.self)

    #expect((try lazy.value) === (try request.resolve(UnitOfWork.self)))
    try request.close()
  }

  @Test func anInjectedPropertyOfASingletonObeysItsRules() throws {
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in UnitOfWork() }
      registry.register(InjectingHolder.self, lifetime: .singleton) { _ in InjectingHolder() }
    }

    let holder = try container.resolve(InjectingHolder.self)

    #expect(resolutionError { _ = try holder.$work.resolve() }?.code == .captiveDependency)
  }

  @Test func theCurrentScopeInsideASingletonsFactoryObeysItsRules() throws {
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in UnitOfWork() }
      registry.register(Ledger.self, lifetime: .singleton) { _ in
        Ledger(work: try Scope.current?.resolve(UnitOfWork.self) ?? UnitOfWork())
      }
    }

    try container.withScope(.request) { request in
      let error = resolutionError { _ = try request.resolve(Ledger.self) }
      #expect(error?.code == .captiveDependency)
    }
  }

  @Test func aScopeCapturedByASingletonsFactoryObeysItsRules() throws {
    let container = try Container { registry in
      registry.register(UnitOfWork.self, lifetime: .scoped) { _ in UnitOfWork() }
    }
    let child = try container.makeScope(.session) { registry in
      registry.register(Ledger.self, lifetime: .singleton) { resolver in
        Ledger(work: try resolver.currentScope.resolve(UnitOfWork.self))
      }
    }

    #expect(resolutionError { _ = try child.resolve(Ledger.self) }?.code == .captiveDependency)
    try child.close()
  }
}
