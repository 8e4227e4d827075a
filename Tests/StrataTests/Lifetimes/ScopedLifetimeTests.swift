import Strata
import Testing

/// `scoped`, `scoped(tag)` and singletons in a tree of scopes.
@Suite struct ScopedLifetimeTests {
  /// Receives its child in an activation hook; the child refers back to it.
  final class ActivatedParent: Sendable {
    let child = ScopeTestBox<ActivatedChild>()

    init() {}
  }

  final class ActivatedChild: Sendable {
    let parent: ActivatedParent

    init(parent: ActivatedParent) {
      self.parent = parent
    }
  }

  // MARK: scoped: one per nearest scope

  @Test func scopedIsOneInstancePerScopeTheResolveStartsIn() throws {
    let runs = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped) { _ in
        ScopeTestService("run \(runs.increment())")
      }
    }
    let session = try container.makeScope(.session)
    let first = try session.makeScope(.request)
    let second = try session.makeScope(.request)

    let a = try first.resolve(ScopeTestService.self)
    let b = try first.resolve(ScopeTestService.self)
    let c = try second.resolve(ScopeTestService.self)
    let d = try session.resolve(ScopeTestService.self)

    #expect(a === b)
    #expect(a !== c)
    #expect(a !== d)
    #expect(c !== d)
    #expect(runs.value == 3)
    #expect(try session.resolve(ScopeTestService.self) === d)
    #expect(runs.value == 3)
  }

  @Test func scopedResolvedFromTheContainerIsOneInstanceInTheContainer() throws {
    let runs = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped) { _ in
        ScopeTestService("run \(runs.increment())")
      }
    }

    #expect(try container.resolve(ScopeTestService.self) === container.resolve(ScopeTestService.self))
    #expect(runs.value == 1)
  }

  // MARK: scoped(tag): one per nearest ancestor with the tag

  @Test func twoRequestScopesGetDifferentInstancesOfARequestScopedService() throws {
    let runs = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in
        ScopeTestService("run \(runs.increment())")
      }
    }
    let first = try container.makeScope(.request)
    let second = try container.makeScope(.request)

    let a = try first.resolve(ScopeTestService.self)
    let b = try second.resolve(ScopeTestService.self)

    #expect(a !== b)
    #expect(try first.resolve(ScopeTestService.self) === a)
    #expect(try second.resolve(ScopeTestService.self) === b)
    #expect(runs.value == 2)
  }

  @Test func twoRequestsUnderOneSessionShareTheSessionScopedInstance() throws {
    let runs = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.session)) { _ in
        ScopeTestService("run \(runs.increment())")
      }
    }
    let session = try container.makeScope(.session, name: "s1")
    let otherSession = try container.makeScope(.session, name: "s2")

    let a = try session.makeScope(.request).resolve(ScopeTestService.self)
    let b = try session.makeScope(.request).resolve(ScopeTestService.self)
    let c = try otherSession.makeScope(.request).resolve(ScopeTestService.self)

    #expect(a === b)
    #expect(a !== c)
    #expect(try session.resolve(ScopeTestService.self) === a)
    #expect(runs.value == 2)
  }

  @Test func aScopedTagFindsTheNearestAncestorWithThatTag() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in ScopeTestService("") }
    }
    let outer = try container.makeScope(.request, name: "outer")
    let tenant = try outer.makeScope(.scopeTestTenant)
    let inner = try tenant.makeScope(.request, name: "inner")

    let fromOuter = try outer.resolve(ScopeTestService.self)
    let fromTenant = try tenant.resolve(ScopeTestService.self)
    let fromInner = try inner.resolve(ScopeTestService.self)

    #expect(fromTenant === fromOuter, "the tenant scope has no request tag; its nearest is `outer`")
    #expect(fromInner !== fromOuter, "`inner` is itself a request scope, the nearest one")
  }

  @Test func aCustomTagOwnsItsInstances() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.scopeTestTenant)) { _ in
        ScopeTestService("")
      }
    }
    let acme = try container.makeScope(.scopeTestTenant, name: "acme")
    let globex = try container.makeScope(ScopeTag("tenant"), name: "globex")

    let a = try acme.makeScope(.session).makeScope(.request).resolve(ScopeTestService.self)
    let b = try acme.makeScope(.request).resolve(ScopeTestService.self)
    let c = try globex.makeScope(.request).resolve(ScopeTestService.self)

    #expect(a === b)
    #expect(a !== c)
  }

  @Test func aScopedTagWithNoSuchAncestorIsNoMatchingScopeNamingTheChain() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in ScopeTestService("") }
    }
    let session = try container.makeScope(.session, name: "s1")

    let error = try #require(scopeResolutionError { _ = try session.resolve(ScopeTestService.self) })

    #expect(error.code == .noMatchingScope)
    #expect(scopeTestIsKey(error.key, of: ScopeTestService.self))
    let hint = try #require(error.hint)
    #expect(hint.contains(#"root → session("s1")"#), "hint: \(hint)")
    #expect(hint.contains(".request"), "hint: \(hint)")
    #expect(error.description.contains(#"root → session("s1")"#))
  }

  @Test func aScopedTagResolvedFromTheContainerIsNoMatchingScope() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.session)) { _ in ScopeTestService("") }
    }
    let request = try container.makeScope(.request, name: "r1")

    let fromRoot = scopeResolutionError { _ = try container.resolve(ScopeTestService.self) }
    let fromRequest = scopeResolutionError { _ = try request.resolve(ScopeTestService.self) }

    #expect(fromRoot?.code == .noMatchingScope)
    #expect(fromRoot?.hint?.contains("root") == true)
    #expect(fromRequest?.code == .noMatchingScope)
    #expect(
      fromRequest?.hint?.contains(#"root → request("r1")"#) == true, "\(String(describing: fromRequest))")
    #expect(fromRequest?.hint?.contains(".session") == true)
  }

  // MARK: Singletons in a tree

  @Test func aRootSingletonIsOneInstanceForTheWholeTree() throws {
    let runs = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .singleton) { _ in
        ScopeTestService("run \(runs.increment())")
      }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let otherRequest = try container.makeScope(.request)

    let fromRequest = try request.resolve(ScopeTestService.self)

    #expect(try otherRequest.resolve(ScopeTestService.self) === fromRequest)
    #expect(try session.resolve(ScopeTestService.self) === fromRequest)
    #expect(try container.resolve(ScopeTestService.self) === fromRequest)
    #expect(runs.value == 1)
  }

  @Test func aRootSingletonFirstResolvedFromAChildGetsTheRootsDependency() throws {
    let container = try Container { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "root") }
      registry.register(ScopeTestConsumer.self, lifetime: .singleton) { resolver in
        ScopeTestConsumer(dependency: try resolver.resolve(ScopeTestDependency.self))
      }
    }
    let child = try container.makeScope(.request) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "child") }
    }

    let fromChild = try child.resolve(ScopeTestConsumer.self)

    #expect(fromChild.dependency.origin == "root")
    #expect(try container.resolve(ScopeTestConsumer.self) === fromChild)
    #expect(try child.resolve(ScopeTestDependency.self).origin == "child")
  }

  @Test func anAutoWiredRootSingletonFirstResolvedFromAGrandchildGetsTheRootsDependency() throws {
    let container = try Container { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "root") }
      registry.register(ScopeTestConsumer.self, lifetime: .singleton, ScopeTestConsumer.init)
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "session") }
    }
    let request = try session.makeScope(.request) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "request") }
    }

    #expect(try request.resolve(ScopeTestConsumer.self).dependency.origin == "root")
  }

  @Test func aSingletonsFactoryRunsInTheScopeThatRegisteredIt() throws {
    let factoryScope = ScopeTestBox<Scope>()
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .singleton) { resolver in
        factoryScope.value = resolver.currentScope
        return ScopeTestService("")
      }
    }
    let request = try container.makeScope(.request)

    _ = try request.resolve(ScopeTestService.self)

    #expect(factoryScope.value === container)
  }

  @Test func aSingletonRegisteredInAChildIsOnePerChildAndUsesTheChildsRegistrations() throws {
    let container = try Container { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "root") }
    }
    func makeTenant(_ name: String) throws -> Scope {
      try container.makeScope(.scopeTestTenant, name: name) { registry in
        registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: name) }
        registry.register(ScopeTestConsumer.self, lifetime: .singleton, ScopeTestConsumer.init)
      }
    }
    let acme = try makeTenant("acme")
    let globex = try makeTenant("globex")
    let acmeRequest = try acme.makeScope(.request) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "request") }
    }

    let fromRequest = try acmeRequest.resolve(ScopeTestConsumer.self)

    #expect(fromRequest.dependency.origin == "acme")
    #expect(try acme.resolve(ScopeTestConsumer.self) === fromRequest)
    #expect(try globex.resolve(ScopeTestConsumer.self) !== fromRequest)
    #expect(try globex.resolve(ScopeTestConsumer.self).dependency.origin == "globex")
  }

  @Test func aScopedInstanceResolvesItsDependenciesInTheScopeThatOwnsIt() throws {
    let container = try Container { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "root") }
      registry.register(ScopeTestConsumer.self, lifetime: .scoped(.session), ScopeTestConsumer.init)
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "session") }
    }
    let request = try session.makeScope(.request) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "request") }
    }

    let consumer = try request.resolve(ScopeTestConsumer.self)

    #expect(consumer.dependency.origin == "session")
    #expect(try session.resolve(ScopeTestConsumer.self) === consumer)
  }

  // MARK: Creation of scoped instances

  @Test func aFailedScopedFactoryCachesNothingAndTheNextResolveTriesAgain() throws {
    let attempts = ScopeTestCounter()
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in
        if attempts.increment() == 1 { throw ScopeTestDisposalFailure(label: "first attempt") }
        return ScopeTestService("second attempt")
      }
    }
    let request = try container.makeScope(.request)

    let error = scopeResolutionError { _ = try request.resolve(ScopeTestService.self) }
    let second = try request.resolve(ScopeTestService.self)

    #expect(error?.code == .factoryFailed)
    #expect(second.label == "second attempt")
    #expect(try request.resolve(ScopeTestService.self) === second)
    #expect(attempts.value == 2)
  }

  @Test func eachScopedRegistrationHasItsOwnInstanceInAScope() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in ScopeTestService("root") }
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in ScopeTestService("request")
      }
    }

    let first = try request.resolveAll(ScopeTestService.self)
    let second = try request.resolveAll(ScopeTestService.self)

    #expect(first.map(\.label) == ["root", "request"])
    #expect(first.count == 2 && second.count == 2)
    #expect(first[0] === second[0])
    #expect(first[1] === second[1])
    #expect(try request.resolve(ScopeTestService.self) === first[1])
  }

  @Test func aScopedInstanceIsAlreadySharedWhenItsActivationHookRuns() throws {
    let container = try Container { registry in
      registry.register(ActivatedParent.self, lifetime: .scoped(.request)) { _ in ActivatedParent() }
        .onActivated { resolver, parent in parent.child.value = try resolver.resolve(ActivatedChild.self) }
      registry.register(ActivatedChild.self) { resolver in
        ActivatedChild(parent: try resolver.resolve(ActivatedParent.self))
      }
    }
    let request = try container.makeScope(.request)

    let parent = try request.resolve(ActivatedParent.self)
    defer { parent.child.value = nil }

    #expect(parent.child.value?.parent === parent)
    #expect(try request.resolve(ActivatedParent.self) === parent)
  }

  /// Runs `onDeinit` when freed.
  final class DeinitProbe: Sendable {
    let onDeinit: @Sendable () -> Void

    init(_ onDeinit: @escaping @Sendable () -> Void) {
      self.onDeinit = onDeinit
    }

    deinit { onDeinit() }
  }

  @Test(.timeLimit(.minutes(1)))
  func anInstanceDroppedBecauseItsActivationHookThrewIsFreedOutsideTheScopesLock() throws {
    let scopeBox = ScopeTestBox<Scope>()
    let resolvedInDeinit = ScopeTestBox<String>()
    let container = try Container { registry in
      // Four scoped services take a scope's inline slots; the others go to its locked list.
      registry.register(Int.self, lifetime: .scoped(.request)) { _ in 1 }
      registry.register(Double.self, lifetime: .scoped(.request)) { _ in 2 }
      registry.register(String.self, lifetime: .scoped(.request)) { _ in "3" }
      registry.register(Bool.self, lifetime: .scoped(.request)) { _ in true }
      registry.register(ScopeTestService.self, lifetime: .scoped(.request)) { _ in
        ScopeTestService("listed")
      }
      registry.register(DeinitProbe.self, lifetime: .scoped(.request)) { _ in
        DeinitProbe {
          // User code that needs the scope's lock: it must not be held while this runs.
          resolvedInDeinit.value = (try? scopeBox.value?.resolve(ScopeTestService.self))?.label
        }
      }
      .onActivated { _, _ in throw ScopeTestDisposalFailure(label: "activation") }
    }
    let request = try container.makeScope(.request)
    scopeBox.value = request
    defer { scopeBox.value = nil }
    _ = try (request.resolve(Int.self), request.resolve(Double.self), request.resolve(String.self))
    _ = try request.resolve(Bool.self)

    #expect(throws: ResolutionError.self) { try request.resolve(DeinitProbe.self) }
    #expect(resolvedInDeinit.value == "listed")
  }
}
