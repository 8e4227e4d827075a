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

    #expect(tenant.tag == .customTenant)
    #expect(tenant.tag != .request)
    #expect(tenant.tag != .session)
    #expect(ScopeTag.request != ScopeTag.session)
    #expect(ScopeTag.root != ScopeTag.request)
    #expect(ScopeTag.request.name == "request")
    #expect(ScopeTag.session.name == "session")
    #expect(ScopeTag.customTenant.description == ".tenant")
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
      registry.register(LabeledService.self) { _ in LabeledService("root") }
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)

    #expect(try request.resolve(LabeledService.self).label == "root")
    #expect(try session.resolve(LabeledService.self).label == "root")
  }

  @Test func aChildsOverrideIsSeenByItAndItsDescendantsOnly() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { _ in LabeledService("root") }
    }
    let child = try container.makeScope(.session, name: "child") { registry in
      registry.register(LabeledService.self) { _ in LabeledService("child") }
    }
    let grandchild = try child.makeScope(.request)
    let sibling = try container.makeScope(.session, name: "sibling")
    let nephew = try sibling.makeScope(.request)

    #expect(try child.resolve(LabeledService.self).label == "child")
    #expect(try grandchild.resolve(LabeledService.self).label == "child")
    #expect(try container.resolve(LabeledService.self).label == "root")
    #expect(try sibling.resolve(LabeledService.self).label == "root")
    #expect(try nephew.resolve(LabeledService.self).label == "root")
  }

  @Test func aChildsAdditionIsInvisibleToItsParentAndSiblings() throws {
    let container = Container()
    let child = try container.makeScope(.session) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "child") }
    }
    let grandchild = try child.makeScope(.request)
    let sibling = try container.makeScope(.session)

    #expect(try child.resolve(Dependency.self).origin == "child")
    #expect(try grandchild.resolve(Dependency.self).origin == "child")

    let fromRoot = resolutionError { _ = try container.resolve(Dependency.self) }
    #expect(fromRoot?.code == .notRegistered)
    #expect(fromRoot.map { isPlainKey($0.key, of: Dependency.self) } == true)

    let fromSibling = resolutionError { _ = try sibling.resolve(Dependency.self) }
    #expect(fromSibling?.code == .notRegistered)
    #expect(try sibling.resolveIfRegistered(Dependency.self) == nil)
  }

  @Test func namedRegistrationsCanBeOverriddenInAChild() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, name: Ordinal.first) { _ in LabeledService("root") }
      registry.register(LabeledService.self, name: Ordinal.second) { _ in LabeledService("root 2") }
    }
    let child = try container.makeScope(.request) { registry in
      registry.register(LabeledService.self, name: Ordinal.first) { _ in LabeledService("child") }
    }

    #expect(try child.resolve(LabeledService.self, name: Ordinal.first).label == "child")
    #expect(try child.resolve(LabeledService.self, name: Ordinal.second).label == "root 2")
    #expect(try container.resolve(LabeledService.self, name: Ordinal.first).label == "root")
  }

  @Test func twoChildrenMadeFromTheSameBuildDoNotShareRegistrations() throws {
    let container = Container()
    let acme = try container.makeScope(.customTenant, name: "acme") { registry in
      registry.register(LabeledService.self) { _ in LabeledService("acme") }
    }
    let globex = try container.makeScope(.customTenant, name: "globex") { registry in
      registry.register(LabeledService.self) { _ in LabeledService("globex") }
    }

    #expect(try acme.makeScope(.request).resolve(LabeledService.self).label == "acme")
    #expect(try globex.makeScope(.request).resolve(LabeledService.self).label == "globex")
  }

  // MARK: Upward lookup

  @Test func theNearestRegistrationWins() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { _ in LabeledService("root") }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(LabeledService.self) { _ in LabeledService("session") }
    }
    let plainRequest = try session.makeScope(.request)
    let overridingRequest = try session.makeScope(.request) { registry in
      registry.register(LabeledService.self) { _ in LabeledService("request") }
    }

    #expect(try plainRequest.resolve(LabeledService.self).label == "session")
    #expect(try overridingRequest.resolve(LabeledService.self).label == "request")
    #expect(try session.resolve(LabeledService.self).label == "session")
    #expect(try container.resolve(LabeledService.self).label == "root")
  }

  @Test func lookupIsMadeAtResolveTimeSoLaterRegistrationsOfAnAncestorAreSeen() throws {
    let container = Container()
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)
    #expect(try request.resolveIfRegistered(LabeledService.self) == nil)

    try container.register { registry in
      registry.register(LabeledService.self) { _ in LabeledService("root, later") }
    }
    #expect(try request.resolve(LabeledService.self).label == "root, later")

    try session.register { registry in
      registry.register(LabeledService.self) { _ in LabeledService("session, later") }
    }
    #expect(try request.resolve(LabeledService.self).label == "session, later")
    #expect(try container.resolve(LabeledService.self).label == "root, later")
  }

  @Test func aTransientFromTheRootResolvesItsDependenciesInTheAskingScope() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(Consumer.self, Consumer.init)
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "request") }
    }

    #expect(try request.resolve(Consumer.self).dependency.origin == "request")
    #expect(try container.resolve(Consumer.self).dependency.origin == "root")
  }

  // MARK: resolveAll along the chain

  @Test func resolveAllListsTheRootsRegistrationsFirstThenEachScopesDownToTheCurrentOne() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { _ in LabeledService("root 1") }
      registry.register(LabeledService.self) { _ in LabeledService("root 2") }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(LabeledService.self) { _ in LabeledService("session 1") }
      registry.register(LabeledService.self) { _ in LabeledService("session 2") }
    }
    let empty = try session.makeScope(.customTenant)
    let request = try empty.makeScope(.request) { registry in
      registry.register(LabeledService.self) { _ in LabeledService("request 1") }
      registry.register(LabeledService.self) { _ in LabeledService("request 2") }
    }
    let sibling = try container.makeScope(.session)

    #expect(
      try request.resolveAll(LabeledService.self).map(\.label) == [
        "root 1", "root 2", "session 1", "session 2", "request 1", "request 2",
      ])
    #expect(
      try empty.resolveAll(LabeledService.self).map(\.label) == [
        "root 1", "root 2", "session 1", "session 2",
      ])
    #expect(try container.resolveAll(LabeledService.self).map(\.label) == ["root 1", "root 2"])
    #expect(try sibling.resolveAll(LabeledService.self).map(\.label) == ["root 1", "root 2"])
    #expect(try request.resolve(LabeledService.self).label == "request 2")
  }

  @Test func resolveAllKeepsRegistrationOrderAcrossBatchesOfOneScope() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self) { _ in LabeledService("root 1") }
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(LabeledService.self) { _ in LabeledService("request 1") }
    }
    try request.register { registry in
      registry.register(LabeledService.self) { _ in LabeledService("request 2") }
    }
    try container.register { registry in
      registry.register(LabeledService.self) { _ in LabeledService("root 2") }
    }

    #expect(
      try request.resolveAll(LabeledService.self).map(\.label) == [
        "root 1", "root 2", "request 1", "request 2",
      ])
  }

  @Test func resolveAllWithANameFollowsTheSameOrder() throws {
    let container = try Container { registry in
      registry.register(LabeledService.self, name: Ordinal.first) { _ in LabeledService("root") }
      registry.register(LabeledService.self) { _ in LabeledService("root, unnamed") }
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(LabeledService.self, name: Ordinal.first) { _ in LabeledService("request") }
      registry.register(LabeledService.self, name: Ordinal.second) { _ in LabeledService("other") }
    }

    #expect(
      try request.resolveAll(LabeledService.self, name: Ordinal.first).map(\.label) == [
        "root", "request",
      ])
  }

  @Test func resolveAllResolvesEachSingletonInTheScopeThatRegisteredIt() throws {
    let container = try Container { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "root") }
      registry.register(Consumer.self, lifetime: .singleton, Consumer.init)
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(Dependency.self) { _ in Dependency(origin: "request") }
      registry.register(Consumer.self, lifetime: .singleton, Consumer.init)
    }

    let all = try request.resolveAll(Consumer.self)

    #expect(all.map(\.dependency.origin) == ["root", "request"])
    #expect(try all.first === container.resolve(Consumer.self))
    #expect(try all.last === request.resolve(Consumer.self))
  }
}
