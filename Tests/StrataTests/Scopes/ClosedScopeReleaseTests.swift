import Foundation
import Strata
import Testing

/// A closed scope keeps nothing alive, even while somebody still holds the scope; a resolve racing
/// the close gets an instance or `scopeClosed`, never a freed one.
@Suite struct ClosedScopeReleaseTests {
  @Test func aClosedScopeStillHeldReleasesItsScopedInstances() throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("r") }
      registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 1) }
      for index in 0..<6 {  // more than the inline slots: overflow slots too
        registry.register(Widget.self, name: index, lifetime: .scoped(.request)) { _ in Widget(id: index) }
      }
    }
    let request = try container.makeScope(.request)
    let disposable = WeakBox(try request.resolve(TrackedResource.self))
    let plain = WeakBox(try request.resolve(Widget.self))
    let named = try (0..<6).map { WeakBox(try request.resolve(Widget.self, name: $0)) }
    #expect(disposable.object != nil && plain.object != nil)
    try request.close()
    #expect(disposable.object == nil, "a disposed instance outlived its scope's close")
    #expect(plain.object == nil, "a closed scope kept its scoped instance")
    #expect(named.allSatisfy { $0.object == nil }, "a closed scope kept an overflow instance")
    #expect(request.isClosed)
  }

  @Test func aClosedChildStillHeldReleasesTheSingletonsItRegistered() throws {
    let container = Container()
    let tenant = try container.makeScope(.session) { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { _ in TrackedResource("tenant") }
    }
    let singleton = WeakBox(try tenant.resolve(TrackedResource.self))
    #expect(singleton.object != nil)
    try tenant.close()
    #expect(singleton.object == nil, "a closed scope kept the singleton it registered")
    #expect(throws: ResolutionError.self) { try tenant.resolve(TrackedResource.self) }
  }

  @Test func anAsyncCloseReleasesTooAndCachesNothingAfterwards() async throws {
    let container = try Container { registry in
      registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 1) }
    }
    let request = try container.makeScope(.request)
    let plain = WeakBox(try request.resolve(Widget.self))
    try await request.close()
    #expect(plain.object == nil)
    let error = try #require(throws: ResolutionError.self) { try request.resolve(Widget.self) }
    #expect(error.code == .scopeClosed)
  }

  @Test func resolvesRacingACloseGetAnInstanceOrScopeClosedNeverAFreedOne() async throws {
    for _ in 0..<200 {
      let container = try Container { registry in
        registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 9) }
        registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in TrackedResource("x") }
      }
      let request = try container.makeScope(.request)
      _ = try request.resolve(Widget.self)
      let start = Barrier(parties: 3)
      let bad = Counter()
      let finished = await runOnThreads(3) { index in
        start.arriveAndWait()
        if index == 0 {
          try? request.close()
          return
        }
        for _ in 0..<50 {
          do {
            if try request.resolve(Widget.self).id != 9 { bad.increment() }
            _ = try request.resolve(TrackedResource.self)
          } catch let error as ResolutionError where error.code == .scopeClosed {
          } catch {
            bad.increment()
          }
        }
      }
      #expect(finished)
      #expect(bad.value == 0)
    }
  }
}
