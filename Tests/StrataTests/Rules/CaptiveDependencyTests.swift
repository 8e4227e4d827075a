import Strata
import Testing

/// A longer-lived instance must never capture a shorter-lived, scoped one.
@Suite struct CaptiveDependencyTests {
  /// Lives as long as one request.
  final class RequestContext: Sendable {
    init() {}
  }

  /// A cache meant to live as long as the application.
  final class ReportCache: Sendable {
    let context: RequestContext

    init(context: RequestContext) {
      self.context = context
    }
  }

  /// A cart meant to live as long as a session.
  final class SessionCart: Sendable {
    let context: RequestContext

    init(context: RequestContext) {
      self.context = context
    }
  }

  /// A transient between a singleton and a request-scoped service.
  final class Formatter: Sendable {
    let context: RequestContext

    init(context: RequestContext) {
      self.context = context
    }
  }

  /// A singleton that reaches the request-scoped service only through a transient.
  final class AuditTrail: Sendable {
    let formatter: Formatter

    init(formatter: Formatter) {
      self.formatter = formatter
    }
  }

  private static func serviceTypes(_ keys: [ServiceKey]) -> [ObjectIdentifier] {
    keys.map { ObjectIdentifier($0.serviceType) }
  }

  // MARK: Caught

  @Test func aSingletonDependingOnARequestScopedServiceIsACaptiveDependency() throws {
    let runs = Counter()
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
      registry.register(ReportCache.self, lifetime: .singleton) { resolver in
        runs.increment()
        return ReportCache(context: try resolver.resolve(RequestContext.self))
      }
    }
    let request = try container.makeScope(.request)

    let error = try #require(resolutionError { _ = try request.resolve(ReportCache.self) })

    #expect(error.code == .captiveDependency)
    #expect(isPlainKey(error.key, of: RequestContext.self))
    #expect(error.description.contains("ReportCache"), "\(error)")
    #expect(error.description.contains("RequestContext"), "\(error)")
    let hint = try #require(error.hint)
    #expect(hint.contains("ReportCache"), "hint: \(hint)")
    #expect(hint.contains("RequestContext"), "hint: \(hint)")
    #expect(
      Self.serviceTypes(error.path) == [
        ObjectIdentifier(ReportCache.self), ObjectIdentifier(RequestContext.self),
      ])
    #expect(error.registeredAt?.fileID.hasSuffix("CaptiveDependencyTests.swift") == true)
    #expect(runs.value == 1)
  }

  @Test func anAutoWiredSingletonDependingOnARequestScopedServiceIsACaptiveDependency() throws {
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
      registry.register(ReportCache.self, lifetime: .singleton, ReportCache.init)
    }
    let request = try container.makeScope(.request)

    let error = resolutionError { _ = try request.resolve(ReportCache.self) }

    #expect(error?.code == .captiveDependency)
    #expect(error.map { isPlainKey($0.key, of: RequestContext.self) } == true)
    #expect(error?.description.contains("ReportCache") == true)
  }

  @Test func aSessionScopedServiceDependingOnARequestScopedOneIsACaptiveDependency() throws {
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
      registry.register(SessionCart.self, lifetime: .scoped(.session)) { resolver in
        SessionCart(context: try resolver.resolve(RequestContext.self))
      }
    }
    let request = try container.makeScope(.session, name: "s1").makeScope(.request)

    let error = try #require(resolutionError { _ = try request.resolve(SessionCart.self) })

    #expect(error.code == .captiveDependency)
    #expect(isPlainKey(error.key, of: RequestContext.self))
    let hint = try #require(error.hint)
    #expect(hint.contains("SessionCart"), "hint: \(hint)")
    #expect(hint.contains("RequestContext"), "hint: \(hint)")
    #expect(hint.contains("scoped(.session)"), "hint: \(hint)")
    #expect(hint.contains("scoped(.request)"), "hint: \(hint)")
  }

  @Test func aTransientBetweenASingletonAndARequestScopedServiceDoesNotHideTheCapture() throws {
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
      registry.register(Formatter.self, Formatter.init)
      registry.register(AuditTrail.self, lifetime: .singleton, AuditTrail.init)
    }
    let request = try container.makeScope(.request)
    #expect(try request.resolve(Formatter.self).context === request.resolve(RequestContext.self))

    let error = try #require(resolutionError { _ = try request.resolve(AuditTrail.self) })

    #expect(error.code == .captiveDependency)
    #expect(isPlainKey(error.key, of: RequestContext.self))
    #expect(error.description.contains("AuditTrail"), "\(error)")
    #expect(error.description.contains("RequestContext"), "\(error)")
    #expect(
      Self.serviceTypes(error.path) == [
        ObjectIdentifier(AuditTrail.self), ObjectIdentifier(Formatter.self),
        ObjectIdentifier(RequestContext.self),
      ])
  }

  @Test func aSingletonCapturingAScopedServiceIsCaughtWhereverItIsResolvedFrom() throws {
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
      registry.register(ReportCache.self, lifetime: .singleton, ReportCache.init)
    }
    let session = try container.makeScope(.session)

    #expect(resolutionError { _ = try container.resolve(ReportCache.self) }?.code == .captiveDependency)
    #expect(resolutionError { _ = try session.resolve(ReportCache.self) }?.code == .captiveDependency)
  }

  @Test func aSingletonRegisteredInASessionScopeCannotCaptureARequestScopedService() throws {
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
    }
    let session = try container.makeScope(.session) { registry in
      registry.register(ReportCache.self, lifetime: .singleton, ReportCache.init)
    }
    let request = try session.makeScope(.request)

    let error = resolutionError { _ = try request.resolve(ReportCache.self) }

    #expect(error?.code == .captiveDependency)
    #expect(error.map { isPlainKey($0.key, of: RequestContext.self) } == true)
  }

  @Test func aCaughtCaptiveDependencyLeavesNoInstanceBehind() throws {
    let contexts = Counter()
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in
        contexts.increment()
        return RequestContext()
      }
      registry.register(ReportCache.self, lifetime: .singleton, ReportCache.init)
    }
    let request = try container.makeScope(.request)

    let first = resolutionError { _ = try request.resolve(ReportCache.self) }
    let second = resolutionError { _ = try request.resolve(ReportCache.self) }

    #expect(first?.code == .captiveDependency)
    #expect(second?.code == .captiveDependency, "the failed singleton must not be cached")
    #expect(contexts.value == 0, "no request-scoped instance was made for the singleton")
  }

  // MARK: Not captive

  @Test func shorterLivedServicesMayDependOnLongerLivedOnes() throws {
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.session)) { _ in RequestContext() }
      registry.register(SessionCart.self, lifetime: .scoped(.request), SessionCart.init)
      registry.register(Formatter.self, Formatter.init)
    }
    let session = try container.makeScope(.session)
    let request = try session.makeScope(.request)

    let cart = try request.resolve(SessionCart.self)
    let formatter = try request.resolve(Formatter.self)

    #expect(cart.context === formatter.context)
    #expect(try session.resolve(RequestContext.self) === cart.context)
  }

  @Test func aSingletonRegisteredInARequestScopeMayUseThatRequestsScopedServices() throws {
    let container = try Container { registry in
      registry.register(RequestContext.self, lifetime: .scoped(.request)) { _ in RequestContext() }
    }
    let request = try container.makeScope(.request) { registry in
      registry.register(ReportCache.self, lifetime: .singleton, ReportCache.init)
    }

    let cache = try request.resolve(ReportCache.self)

    #expect(try cache.context === request.resolve(RequestContext.self))
  }
}
