import Foundation
import Strata
import Testing

/// What a ``ResolutionError`` carries besides its text: its subject (a service or a scope), and the
/// keys, lifetimes and sites of the registrations at fault.
@Suite struct ErrorPayloadTests {
  // MARK: Failures about a service

  @Test func aMissingServiceIsTheSubjectAndNoRegistrationIsAtFault() throws {
    let error = try #require(resolutionError { _ = try Container().resolve(ErrWidget.self) })
    #expect(error.code == .notRegistered)
    #expect(error.subject == .service(error.key))
    #expect(isPlainKey(error.key, of: ErrWidget.self))
    #expect(error.subject.description == "ErrWidget")
    #expect(error.registrations.isEmpty)
  }

  @Test func aCycleIsAboutTheServiceThatClosedIt() throws {
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
    #expect(error.code == .cycle)
    #expect(error.subject == .service(error.key))
    #expect(isPlainKey(error.key, of: ErrCycleA.self))
    #expect(error.registrations.isEmpty)
  }

  @Test func aFailingFactoryNamesItsRegistration() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.register(ErrWidget.self, lifetime: .singleton) { _ in throw ErrFixtureError(label: "x") }
    }
    let error = try #require(resolutionError { _ = try container.resolve(ErrWidget.self) })
    #expect(error.code == .factoryFailed)
    #expect(error.underlying as? ErrFixtureError == ErrFixtureError(label: "x"))
    let registration = try #require(error.registrations.first)
    #expect(error.registrations.count == 1)
    #expect(isPlainKey(registration.key, of: ErrWidget.self))
    #expect(registration.lifetime == .singleton)
    #expect(registration.registeredAt.line == line)
    #expect(registration.registeredAt == error.registeredAt)
  }

  @Test func anInvalidLifetimeNamesTheRegistrationAndItsLifetime() throws {
    let line = #line + 3
    let shared = resolutionError {
      _ = try Container { registry in
        registry.register(ErrGreeting.self, lifetime: .singleton) { (_, _: String) in ErrGreeting() }
      }
    }
    let sharedRegistration = try #require(shared?.registrations.first)
    #expect(sharedRegistration.lifetime == .singleton)
    #expect(sharedRegistration.key.hasArguments)
    #expect(sharedRegistration.registeredAt.line == line)

    let container = try Container { registry in
      registry.register(ErrValue.self, lifetime: .weak) { _ in ErrValue() }
    }
    let weak = try #require(resolutionError { _ = try container.resolve(ErrValue.self) })
    #expect(weak.code == .invalidRegistration)
    #expect(weak.registrations.map(\.lifetime) == [.weak])
  }

  @Test func aTypeMismatchIsAboutTheForwardAndNamesItsTarget() throws {
    let container = try Container { registry in
      registry.register(ErrWidget.self, lifetime: .graph) { _ in ErrWidget() }
        .forwarding(to: (any ErrUnrelated).self)
    }
    let error = try #require(resolutionError { _ = try container.resolve((any ErrUnrelated).self) })
    #expect(error.code == .typeMismatch)
    #expect(error.subject == .service(error.key))
    #expect(isPlainKey(error.key, of: (any ErrUnrelated).self))
    let target = try #require(error.registrations.first)
    #expect(isPlainKey(target.key, of: ErrWidget.self))
    #expect(target.lifetime == .graph)
  }

  @Test func aCaptiveDependencyNamesCaptorThenCaptiveWithTheirLifetimesAndSites() throws {
    let contextLine = #line + 2
    let container = try Container { registry in
      registry.register(ErrRequestContext.self, lifetime: .scoped(.request)) { _ in ErrRequestContext() }
      registry.register(ErrReportCache.self, lifetime: .singleton) { resolver in
        _ = try resolver.resolve(ErrRequestContext.self)
        return ErrReportCache()
      }
    }
    let request = try container.makeScope(.request)
    let error = try #require(resolutionError { _ = try request.resolve(ErrReportCache.self) })
    #expect(error.code == .captiveDependency)
    #expect(isPlainKey(error.key, of: ErrRequestContext.self))
    #expect(error.subject == .service(error.key))
    try #require(error.registrations.count == 2)
    let (captor, captive) = (error.registrations[0], error.registrations[1])
    #expect(isPlainKey(captor.key, of: ErrReportCache.self))
    #expect(captor.lifetime == .singleton)
    #expect(captor.registeredAt.line == contextLine + 1)
    #expect(isPlainKey(captive.key, of: ErrRequestContext.self))
    #expect(captive.lifetime == .scoped(.request))
    #expect(captive.registeredAt.line == contextLine)
  }

  @Test func aScopedServiceWithoutItsScopeNamesItsRegistration() throws {
    let container = try Container { registry in
      registry.register(ErrRequestContext.self, lifetime: .scoped(.request)) { _ in ErrRequestContext() }
    }
    let error = try #require(resolutionError { _ = try container.resolve(ErrRequestContext.self) })
    #expect(error.code == .noMatchingScope)
    #expect(error.subject == .service(error.key))
    #expect(error.registrations.map(\.lifetime) == [.scoped(.request)])
  }

  // MARK: Failures about a scope

  @Test func makingAChildOfAClosedScopeIsAboutThatScopeNotAService() throws {
    let container = Container()
    let session = try container.makeScope(.session, name: "s1")
    try session.close()

    let error = try #require(resolutionError { _ = try session.makeScope(.request) })

    #expect(error.code == .scopeClosed)
    #expect(error.subject == .scope(#"root → session("s1")"#))
    #expect(error.subject.description == #"root → session("s1")"#)
    #expect(isPlainKey(error.key, of: Scope.self), "kept for compatibility")
    #expect(error.path.isEmpty)
    #expect(error.registrations.isEmpty)
    #expect(
      error.description == """
        scopeClosed: the scope was closed; a .request scope cannot be made from it
          hint: root → session("s1") is closed; it cannot make a .request scope
        """)
  }

  @Test func aClosedScopeMetInsideAFactoryShowsTheServicesNotAScopeKey() throws {
    let container = Container()
    let session = try container.makeScope(.session)
    try session.close()
    try container.register { registry in
      registry.register(ErrApp.self) { _ in
        _ = try session.makeScope(.request)
        return ErrApp()
      }
      registry.register(ErrWidget.self) { resolver in
        _ = try resolver.resolve(ErrApp.self)
        return ErrWidget()
      }
    }

    let error = try #require(resolutionError { _ = try container.resolve(ErrWidget.self) })

    #expect(error.code == .scopeClosed)
    #expect(error.subject == .scope("root → session"))
    #expect(identifiers(error.path) == identifiers(of: ErrWidget.self, ErrApp.self))
    #expect(error.description.contains("path: ErrWidget → ErrApp\n"))
    #expect(!error.description.contains("`Scope`"))
    #expect(!error.description.contains("→ Scope"))
  }

  @Test func failingDisposersAreAboutTheClosingScope() throws {
    let container = try Container { registry in
      registry.register(ErrFailingDisposable.self, lifetime: .scoped) { _ in ErrFailingDisposable("only") }
    }
    let request = try container.makeScope(.request, name: "r1")
    _ = try request.resolve(ErrFailingDisposable.self)

    let error = try #require(resolutionError { try request.close() })

    #expect(error.code == .disposalFailed)
    #expect(error.subject == .scope(#"root → request("r1")"#))
    #expect(isPlainKey(error.key, of: ErrFailingDisposable.self), "the first failing disposer's service")
    #expect(error.path.isEmpty)
    #expect(error.disposalErrors.count == 1)
  }

  @Test func theFreeWithScopeWithoutACurrentScopeIsAboutTheCurrentScope() throws {
    let error = try #require(resolutionError { try withScope(.request) { _ in } })

    #expect(error.code == .noMatchingScope)
    #expect(error.subject == .currentScope)
    #expect(error.subject.description == "Scope.current")
    #expect(isPlainKey(error.key, of: Scope.self), "kept for compatibility")
    #expect(error.path.isEmpty)
    #expect(
      error.description == """
        noMatchingScope: the free `withScope(.request)` needs a current scope as the parent of its scope
          hint: no scope is current, so a .request scope has no parent; call \
        `container.withScope(.request)` or run inside another withScope
        """)
  }

  @Test func codesOfScopeFailuresAreUnchangedSoExistingCatchesStillMatch() throws {
    let closed = try Container().makeScope(.request)
    try closed.close()
    do {
      _ = try closed.makeScope(.request)
      Issue.record("expected an error")
    } catch let error as ResolutionError where error.code == .scopeClosed {
      #expect(error.hint != nil)
    }
  }
}
