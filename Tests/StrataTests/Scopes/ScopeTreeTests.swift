import Strata
import Testing

/// The shape of the scope tree and how lookups cascade through it.
@Suite struct ScopeTreeTests {
  // MARK: Making scopes

  @Test func containerIsTheRootScope() {
    let container = Container()

    #expect(container.tag == .root)
    #expect(container.parent == nil)
    #expect(container.name == nil)
    #expect(!container.isClosed)
    #expect(container.description == "root")
  }

  @Test func makeScopeWorksOnTheContainerAndOnAnyScope() throws {
    let container = Container()

    let session = try container.makeScope(.session, name: "s1")
    let request = try session.makeScope(.request)
    let nested = try request.makeScope(.request, name: "inner")

    #expect(session.tag == .session)
    #expect(session.name == "s1")
    #expect(session.parent === container)
    #expect(request.tag == .request)
    #expect(request.name == nil)
    #expect(request.parent === session)
    #expect(nested.parent === request)
    #expect(nested.parent?.parent?.parent === container)
    #expect([session, request, nested].allSatisfy { !$0.isClosed })
    #expect(session.description == #"session("s1")"#)
    #expect(request.description == "request")
    #expect(nested.description == #"request("inner")"#)
  }

  @Test func builtInTagsAreDistinctAndCustomTagsCompareByName() throws {
    let container = Container()

    let tenant = try container.makeScope(ScopeTag("tenant"), name: "acme")

    #expect(tenant.tag == .scopeTestTenant)
    #expect(tenant.tag != .request)
    #expect(tenant.tag != .session)
    #expect(ScopeTag.request != ScopeTag.session)
    #expect(ScopeTag.root != ScopeTag.request)
    #expect(ScopeTag.request.name == "request")
    #expect(ScopeTag.session.name == "session")
    #expect(ScopeTag.scopeTestTenant.description == ".tenant")
    #expect(tenant.description == #"tenant("acme")"#)
  }

  @Test func aTagMadeFromABuiltInNameIsTheBuiltInTag() throws {
    let container = Container()
    let request = try container.makeScope(ScopeTag("request"))

    #expect(ScopeTag("request") == .request)
    #expect(ScopeTag("session") == .session)
    #expect(ScopeTag("root") == .root)
    #expect(container.tag == .root && container.tag.name == "root")
    #expect(request.tag == .request)
    #expect(Set([ScopeTag("request"), .request, ScopeTag("audit"), ScopeTag("audit")]).count == 2)
  }

  @Test func everyScopeMadeIsANewScope() throws {
    let container = Container()

    let first = try container.makeScope(.request)
    let second = try container.makeScope(.request)

    #expect(first !== second)
    #expect(first.parent === second.parent)
  }

  // MARK: Registrations of a child scope

  @Test func aChildSeesEveryRegistrationOfItsAncestors() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root") }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)

    #expect(try request.resolve(ScopeTestService.self).label == "root")
    #expect(try session.resolve(ScopeTestService.self).label == "root")
  }

  @Test func aChildsOverrideIsSeenByItAndItsDescendantsOnly() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root") }
    }
    let child = try container.makeScope(.session, name: "child") { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("child") }
    }
    let grandchild = try child.makeScope(.request)
    let sibling = try container.makeScope(.session, name: "sibling")
    let nephew = try sibling.makeScope(.request)

    #expect(try child.resolve(ScopeTestService.self).label == "child")
    #expect(try grandchild.resolve(ScopeTestService.self).label == "child")
    #expect(try container.resolve(ScopeTestService.self).label == "root")
    #expect(try sibling.resolve(ScopeTestService.self).label == "root")
    #expect(try nephew.resolve(ScopeTestService.self).label == "root")
  }

  @Test func aChildsAdditionIsInvisibleToItsParentAndSiblings() throws {
    let container = Container()
    let child = try container.makeScope(.session) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "child") }
    }
    let grandchild = try child.makeScope(.request)
    let sibling = try container.makeScope(.session)

    #expect(try child.resolve(ScopeTestDependency.self).origin == "child")
    #expect(try grandchild.resolve(ScopeTestDependency.self).origin == "child")

    let fromRoot = scopeResolutionError { _ = try container.resolve(ScopeTestDependency.self) }
    #expect(fromRoot?.code == .notRegistered)
    #expect(fromRoot.map { scopeTestIsKey($0.key, of: ScopeTestDependency.self) } == true)

    let fromSibling = scopeResolutionError { _ = try sibling.resolve(ScopeTestDependency.self) }
    #expect(fromSibling?.code == .notRegistered)
    #expect(try sibling.resolveIfRegistered(ScopeTestDependency.self) == nil)
  }

  @Test func namedRegistrationsCanBeOverriddenInAChild() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, name: ScopeTestSlot.first) { _ in ScopeTestService("root") }
      registry.register(ScopeTestService.self, name: ScopeTestSlot.second) { _ in ScopeTestService("root 2") }
    }
    let child = try container.makeScope(.request) { registry in
      registry.register(ScopeTestService.self, name: ScopeTestSlot.first) { _ in ScopeTestService("child") }
    }

    #expect(try child.resolve(ScopeTestService.self, name: ScopeTestSlot.first).label == "child")
    #expect(try child.resolve(ScopeTestService.self, name: ScopeTestSlot.second).label == "root 2")
    #expect(try container.resolve(ScopeTestService.self, name: ScopeTestSlot.first).label == "root")
  }

  @Test func twoChildrenMadeFromTheSameBuildDoNotShareRegistrations() throws {
    let container = Container()
    let acme = try container.makeScope(.scopeTestTenant, name: "acme") { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("acme") }
    }
    let globex = try container.makeScope(.scopeTestTenant, name: "globex") { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("globex") }
    }

    #expect(try acme.makeScope(.request).resolve(ScopeTestService.self).label == "acme")
    #expect(try globex.makeScope(.request).resolve(ScopeTestService.self).label == "globex")
  }

  // MARK: Upward lookup

  @Test func theNearestRegistrationWins() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root") }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("session") }
    }
    let plainRequest = try session.makeScope(.request)
    let overridingRequest = try session.makeScope(.request) { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("request") }
    }

    #expect(try plainRequest.resolve(ScopeTestService.self).label == "session")
    #expect(try overridingRequest.resolve(ScopeTestService.self).label == "request")
    #expect(try session.resolve(ScopeTestService.self).label == "session")
    #expect(try container.resolve(ScopeTestService.self).label == "root")
  }

  @Test func lookupIsMadeAtResolveTimeSoLaterRegistrationsOfAnAncestorAreSeen() throws {
    let container = Container()
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    #expect(try request.resolveIfRegistered(ScopeTestService.self) == nil)

    try container.register { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root, later") }
    }
    #expect(try request.resolve(ScopeTestService.self).label == "root, later")

    try session.register { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("session, later") }
    }
    #expect(try request.resolve(ScopeTestService.self).label == "session, later")
    #expect(try container.resolve(ScopeTestService.self).label == "root, later")
  }

  @Test func aTransientFromTheRootResolvesItsDependenciesInTheAskingScope() throws {
    let container = try Container { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "root") }
      registry.register(ScopeTestConsumer.self, ScopeTestConsumer.init)
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "request") }
    }

    #expect(try request.resolve(ScopeTestConsumer.self).dependency.origin == "request")
    #expect(try container.resolve(ScopeTestConsumer.self).dependency.origin == "root")
  }

  // MARK: resolveAll along the chain

  @Test func resolveAllListsTheRootsRegistrationsFirstThenEachScopesDownToTheCurrentOne() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root 1") }
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root 2") }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("session 1") }
      registry.register(ScopeTestService.self) { _ in ScopeTestService("session 2") }
    }
    let empty = try session.makeScope(.scopeTestTenant)
    let request = try empty.makeScope(.request) { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("request 1") }
      registry.register(ScopeTestService.self) { _ in ScopeTestService("request 2") }
    }
    let sibling = try container.makeScope(.session)

    #expect(
      try request.resolveAll(ScopeTestService.self).map(\.label) == [
        "root 1", "root 2", "session 1", "session 2", "request 1", "request 2",
      ])
    #expect(
      try empty.resolveAll(ScopeTestService.self).map(\.label) == [
        "root 1", "root 2", "session 1", "session 2",
      ])
    #expect(try container.resolveAll(ScopeTestService.self).map(\.label) == ["root 1", "root 2"])
    #expect(try sibling.resolveAll(ScopeTestService.self).map(\.label) == ["root 1", "root 2"])
    #expect(try request.resolve(ScopeTestService.self).label == "request 2")
  }

  @Test func resolveAllKeepsRegistrationOrderAcrossBatchesOfOneScope() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root 1") }
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("request 1") }
    }
    try request.register { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("request 2") }
    }
    try container.register { registry in
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root 2") }
    }

    #expect(
      try request.resolveAll(ScopeTestService.self).map(\.label) == [
        "root 1", "root 2", "request 1", "request 2",
      ])
  }

  @Test func resolveAllWithANameFollowsTheSameOrder() throws {
    let container = try Container { registry in
      registry.register(ScopeTestService.self, name: ScopeTestSlot.first) { _ in ScopeTestService("root") }
      registry.register(ScopeTestService.self) { _ in ScopeTestService("root, unnamed") }
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(ScopeTestService.self, name: ScopeTestSlot.first) { _ in ScopeTestService("request") }
      registry.register(ScopeTestService.self, name: ScopeTestSlot.second) { _ in ScopeTestService("other") }
    }

    #expect(
      try request.resolveAll(ScopeTestService.self, name: ScopeTestSlot.first).map(\.label) == [
        "root", "request",
      ])
  }

  @Test func resolveAllResolvesEachSingletonInTheScopeThatRegisteredIt() throws {
    let container = try Container { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "root") }
      registry.register(ScopeTestConsumer.self, lifetime: .singleton, ScopeTestConsumer.init)
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(ScopeTestDependency.self) { _ in ScopeTestDependency(origin: "request") }
      registry.register(ScopeTestConsumer.self, lifetime: .singleton, ScopeTestConsumer.init)
    }

    let all = try request.resolveAll(ScopeTestConsumer.self)

    #expect(all.map(\.dependency.origin) == ["root", "request"])
    #expect(try all.first === container.resolve(ScopeTestConsumer.self))
    #expect(try all.last === request.resolve(ScopeTestConsumer.self))
  }
}
