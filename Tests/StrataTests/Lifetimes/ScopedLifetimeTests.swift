import Strata
import Testing

/// `scoped`, `scoped(tag)` and singletons in a tree of scopes.
@Suite struct ScopedLifetimeTests {
  /// Receives its child in an activation hook; the child refers back to it.
  final class ActivatedParent: Sendable {
    let child = Slot<ActivatedChild>()

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
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped) { _ in
        LabeledService("run \(runs.increment())")
      }
    }
    let session = try container.makeScope(.session)
    let first = try session.makeScope(.request)
    let second = try session.makeScope(.request)

    let a = try first.resolve(LabeledService.self)
    let b = try first.resolve(LabeledService.self)
    let c = try second.resolve(LabeledService.self)
    let d = try session.resolve(LabeledService.self)

    #expect(a === b)
    #expect(a !== c)
    #expect(a !== d)
    #expect(c !== d)
    #expect(runs.value == 3)
    #expect(try session.resolve(LabeledService.self) === d)
    #expect(runs.value == 3)
  }

  @Test func scopedResolvedFromTheContainerIsOneInstanceInTheContainer() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped) { _ in
        LabeledService("run \(runs.increment())")
      }
    }

    #expect(try container.resolve(LabeledService.self) === container.resolve(LabeledService.self))
    #expect(runs.value == 1)

    let other = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped) { _ in
        LabeledService("run \(runs.increment())")
      }
    }
    #expect(try other.resolve(LabeledService.self) === other.resolve(LabeledService.self))
    #expect(try other.resolve(LabeledService.self) !== container.resolve(LabeledService.self))
    #expect(runs.value == 2, "another container has its own instance")
  }

  // MARK: scoped(tag): one per nearest ancestor with the tag

  @Test func twoRequestScopesGetDifferentInstancesOfARequestScopedService() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in
        LabeledService("run \(runs.increment())")
      }
    }
    let first = try container.makeScope(.request)
    let second = try container.makeScope(.request)

    let a = try first.resolve(LabeledService.self)
    let b = try second.resolve(LabeledService.self)

    #expect(a !== b)
    #expect(try first.resolve(LabeledService.self) === a)
    #expect(try second.resolve(LabeledService.self) === b)
    #expect(runs.value == 2)
  }

  @Test func twoRequestsUnderOneSessionShareTheSessionScopedInstance() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.session)) { _ in
        LabeledService("run \(runs.increment())")
      }
    }
    let session = try container.makeScope(.session, name: "s1")
    let otherSession = try container.makeScope(.session, name: "s2")

    let a = try session.makeScope(.request).resolve(LabeledService.self)
    let b = try session.makeScope(.request).resolve(LabeledService.self)
    let c = try otherSession.makeScope(.request).resolve(LabeledService.self)

    #expect(a === b)
    #expect(a !== c)
    #expect(try session.resolve(LabeledService.self) === a)
    #expect(runs.value == 2)
  }

  @Test func aScopedTagFindsTheNearestAncestorWithThatTag() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in LabeledService("") }
    }
    let outer = try container.makeScope(.request, name: "outer")
    let tenant = try outer.makeScope(.customTenant)
    let inner = try tenant.makeScope(.request, name: "inner")

    let fromOuter = try outer.resolve(LabeledService.self)
    let fromTenant = try tenant.resolve(LabeledService.self)
    let fromInner = try inner.resolve(LabeledService.self)

    #expect(fromTenant === fromOuter, "the tenant scope has no request tag; its nearest is `outer`")
    #expect(fromInner !== fromOuter, "`inner` is itself a request scope, the nearest one")
  }

  @Test func aCustomTagOwnsItsInstances() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.customTenant)) { _ in
        LabeledService("")
      }
    }
    let acme = try container.makeScope(.customTenant, name: "acme")
    let globex = try container.makeScope(ScopeTag("tenant"), name: "globex")

    let a = try acme.makeScope(.session).makeScope(.request).resolve(LabeledService.self)
    let b = try acme.makeScope(.request).resolve(LabeledService.self)
    let c = try globex.makeScope(.request).resolve(LabeledService.self)

    #expect(a === b)
    #expect(a !== c)
  }

  @Test func aScopedTagWithNoSuchAncestorIsNoMatchingScopeNamingTheChain() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in LabeledService("") }
    }
    let session = try container.makeScope(.session, name: "s1")

    let error = try #require(resolutionError { _ = try session.resolve(LabeledService.self) })

    #expect(error.code == .noMatchingScope)
    #expect(isPlainKey(error.key, of: LabeledService.self))
    let hint = try #require(error.hint)
    #expect(hint.contains(#"root → session("s1")"#), "hint: \(hint)")
    #expect(hint.contains(".request"), "hint: \(hint)")
    #expect(error.description.contains(#"root → session("s1")"#))
  }

  @Test func aScopedTagResolvedFromTheContainerIsNoMatchingScope() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.session)) { _ in LabeledService("") }
    }
    let request = try container.makeScope(.request, name: "r1")

    let fromRoot = resolutionError { _ = try container.resolve(LabeledService.self) }
    let fromRequest = resolutionError { _ = try request.resolve(LabeledService.self) }

    #expect(fromRoot?.code == .noMatchingScope)
    #expect(fromRoot.map { isPlainKey($0.key, of: LabeledService.self) } == true)
    #expect(fromRoot?.hint?.contains("root") == true)
    #expect(fromRequest?.code == .noMatchingScope)
    #expect(
      fromRequest?.hint?.contains(#"root → request("r1")"#) == true, "\(String(describing: fromRequest))")
    #expect(fromRequest?.hint?.contains(".session") == true)
  }

  // MARK: Singletons in a tree

  @Test func aRootSingletonIsOneInstanceForTheWholeTree() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .singleton) { _ in
        LabeledService("run \(runs.increment())")
      }
    }
    #expect(runs.value == 0, "a lazy singleton is made on first use, not at registration")
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    let otherRequest = try container.makeScope(.request)

    let fromRequest = try request.resolve(LabeledService.self)

    #expect(try otherRequest.resolve(LabeledService.self) === fromRequest)
    #expect(try session.resolve(LabeledService.self) === fromRequest)
    #expect(try container.resolve(LabeledService.self) === fromRequest)
    #expect(runs.value == 1)
  }

  @Test func aRootSingletonFirstResolvedFromAChildGetsTheRootsDependency() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(Consumer.self, lifetime: .singleton) { resolver in
        Consumer(dependency: try resolver.resolve(Dependency.self))
      }
    }
    let child = try container.makeScope(.request) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "child") }
    }

    let fromChild = try child.resolve(Consumer.self)

    #expect(fromChild.dependency.origin == "root")
    #expect(try container.resolve(Consumer.self) === fromChild)
    #expect(try child.resolve(Dependency.self).origin == "child")
  }

  @Test func anAutoWiredRootSingletonFirstResolvedFromAGrandchildGetsTheRootsDependency() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(Consumer.self, lifetime: .singleton, Consumer.init)
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "session") }
    }
    let request = try session.makeScope(.request) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "request") }
    }

    #expect(try request.resolve(Consumer.self).dependency.origin == "root")
  }

  @Test func aSingletonsFactoryRunsInTheScopeThatRegisteredIt() throws {
    let factoryScope = Slot<Scope>()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .singleton) { resolver in
        factoryScope.value = resolver.currentScope
        return LabeledService("")
      }
    }
    let request = try container.makeScope(.request)

    _ = try request.resolve(LabeledService.self)

    #expect(factoryScope.value === container)
  }

  @Test func aSingletonRegisteredInAChildIsOnePerChildAndUsesTheChildsRegistrations() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
    }
    func makeTenant(_ name: String) throws -> Scope {
      try container.makeScope(.customTenant, name: name) { registry in
        registry.register(Dependency.self) { _ in Dependency(origin: name) }
        registry.register(Consumer.self, lifetime: .singleton, Consumer.init)
      }
    }
    let acme = try makeTenant("acme")
    let globex = try makeTenant("globex")
    let acmeRequest = try acme.makeScope(.request) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "request") }
    }

    let fromRequest = try acmeRequest.resolve(Consumer.self)

    #expect(fromRequest.dependency.origin == "acme")
    #expect(try acme.resolve(Consumer.self) === fromRequest)
    #expect(try globex.resolve(Consumer.self) !== fromRequest)
    #expect(try globex.resolve(Consumer.self).dependency.origin == "globex")
  }

  @Test func aScopedInstanceResolvesItsDependenciesInTheScopeThatOwnsIt() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(Consumer.self, lifetime: .scoped(.session), Consumer.init)
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "session") }
    }
    let request = try session.makeScope(.request) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "request") }
    }

    let consumer = try request.resolve(Consumer.self)

    #expect(consumer.dependency.origin == "session")
    #expect(try session.resolve(Consumer.self) === consumer)
  }

  // MARK: Creation of scoped instances

  @Test func aFailedScopedFactoryCachesNothingAndTheNextResolveTriesAgain() throws {
    let attempts = Counter()
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in
        if attempts.increment() == 1 { throw DisposalFailure(label: "first attempt") }
        return LabeledService("second attempt")
      }
    }
    let request = try container.makeScope(.request)

    let error = resolutionError { _ = try request.resolve(LabeledService.self) }
    let second = try request.resolve(LabeledService.self)

    #expect(error?.code == .factoryFailed)
    #expect(second.label == "second attempt")
    #expect(try request.resolve(LabeledService.self) === second)
    #expect(attempts.value == 2)
  }

  @Test func eachScopedRegistrationHasItsOwnInstanceInAScope() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in LabeledService("root") }
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in LabeledService("request")
      }
    }

    let first = try request.resolveAll(LabeledService.self)
    let second = try request.resolveAll(LabeledService.self)

    #expect(first.map(\.label) == ["root", "request"])
    #expect(first.count == 2 && second.count == 2)
    #expect(first[0] === second[0])
    #expect(first[1] === second[1])
    #expect(try request.resolve(LabeledService.self) === first[1])
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
    let scopeBox = Slot<Scope>()
    let resolvedInDeinit = Slot<String>()
    let container = try Container { registry in
      // Four scoped services take a scope's inline slots; the others go to its locked list.
      registry.register(Int.self, lifetime: .scoped(.request)) { _ in 1 }
      registry.register(Double.self, lifetime: .scoped(.request)) { _ in 2 }
      registry.register(String.self, lifetime: .scoped(.request)) { _ in "3" }
      registry.register(Bool.self, lifetime: .scoped(.request)) { _ in true }
      registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in
        LabeledService("listed")
      }
      registry.register(DeinitProbe.self, lifetime: .scoped(.request)) { _ in
        DeinitProbe {
          // User code that needs the scope's lock: it must not be held while this runs.
          resolvedInDeinit.value = (try? scopeBox.value?.resolve(LabeledService.self))?.label
        }
      }
      .onActivated { _, _ in throw DisposalFailure(label: "activation") }
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
