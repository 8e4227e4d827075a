import Dispatch
import Foundation
import Strata
import Testing

/// A dependency whose registrations say which batch they came from.
private struct Edition: Sendable, Equatable {
  let number: Int
}

private enum Part: Hashable, Sendable { case first, second }

/// What one resolve of the top-level service saw of its two dependencies.
private struct Assembly: Sendable, Equatable {
  let first: Int
  let second: Int
}

/// One thread's resolve paused between its two dependencies while another thread publishes.
private final class Pause: Sendable {
  private let reached = DispatchSemaphore(value: 0)
  private let resume = DispatchSemaphore(value: 0)
  private let used = Flag()

  /// Called by the factory: the first time, says it got here and waits to be let go.
  func hold() {
    guard !used.isRaised else { return }
    used.raise()
    reached.signal()
    resume.wait()
  }

  /// Called by the test: waits until the factory is held, runs `body`, lets the factory go.
  func whileHeld(_ body: () throws -> Void) rethrows {
    reached.wait()
    defer { resume.signal() }
    try body()
  }
}

/// One resolve, one registry version: a top-level resolve and everything it resolves read the
/// registrations as they were when it began, so a batch published meanwhile never gives it half
/// old, half new dependencies.
@Suite struct RegistryVersionTests {
  fileprivate static func registerEdition(_ number: Int, into registry: Registrar) {
    registry.register(Edition.self, name: Part.first) { _ in Edition(number: number) }
    registry.register(Edition.self, name: Part.second) { _ in Edition(number: number) }
  }

  /// Resolves `Assembly` on another thread, publishes edition 2 while its factory is paused
  /// between the two parts, and returns what that resolve saw.
  private static func assembleAcrossAPublish(
    lifetime: Lifetime, publishInto target: @escaping @Sendable (Container) throws -> Scope,
    resolveFrom start: @escaping @Sendable (Container) throws -> Scope
  ) async throws -> (during: Assembly, after: Assembly) {
    let pause = Pause()
    let container = try Container { registry in
      registerEdition(1, into: registry)
      registry.register(Assembly.self, lifetime: lifetime) { resolver in
        let first = try resolver.resolve(Edition.self, name: Part.first)
        pause.hold()
        let second = try resolver.resolve(Edition.self, name: Part.second)
        return Assembly(first: first.number, second: second.number)
      }
    }
    let scope = try start(container)
    let publishing = try target(container)
    let result = Slot<Assembly>()
    let failure = Slot<String>()
    let thread = Thread {
      do {
        result.value = try scope.resolve(Assembly.self)
      } catch {
        failure.value = "\(error)"
      }
    }
    thread.start()
    try pause.whileHeld {
      try publishing.register { registry in registerEdition(2, into: registry) }
    }
    #expect(await eventually { result.value != nil || failure.value != nil })
    #expect(failure.value == nil)
    let during = try #require(result.value)
    let after = try scope.resolve(Assembly.self)
    return (during, after)
  }

  @Test(arguments: [Lifetime.transient, .singleton, .scoped(.request)])
  func aResolveReadsOneVersionThroughout(lifetime: Lifetime) async throws {
    let (during, after) = try await Self.assembleAcrossAPublish(
      lifetime: lifetime, publishInto: { $0 }, resolveFrom: { try $0.makeScope(.request) })

    #expect(during == Assembly(first: 1, second: 1))
    if lifetime == .transient {
      #expect(after == Assembly(first: 2, second: 2), "the next resolve sees the new batch whole")
    }
  }

  @Test func aBatchGivingAScopeItsFirstRegistrationsIsNotSeenMidResolve() async throws {
    // The request scope has no registrations when the resolve begins; the batch gives it some.
    let request = Slot<Scope>()
    let (during, after) = try await Self.assembleAcrossAPublish(
      lifetime: .transient,
      publishInto: { _ in try #require(request.value) },
      resolveFrom: { container in
        let scope = try container.makeScope(.request)
        request.value = scope
        return scope
      })

    #expect(during == Assembly(first: 1, second: 1))
    #expect(after == Assembly(first: 2, second: 2))
  }

  @Test func resolveAllAndResolveIfRegisteredReadTheResolvesVersionToo() async throws {
    let pause = Pause()
    let container = try Container { registry in
      registry.register(Edition.self) { _ in Edition(number: 1) }
      registry.register([Edition].self) { resolver in
        pause.hold()
        let all = try resolver.resolveAll(Edition.self)
        let added = try resolver.resolveIfRegistered(Edition.self, name: Part.second)
        return all + (added.map { [$0] } ?? [])
      }
    }
    let result = Slot<[Edition]>()
    let failure = Slot<String>()
    let thread = Thread {
      do {
        result.value = try container.resolve([Edition].self)
      } catch {
        failure.value = "\(error)"
      }
    }
    thread.start()
    try pause.whileHeld {
      try container.register { registry in
        registry.register(Edition.self) { _ in Edition(number: 2) }
        registry.register(Edition.self, name: Part.second) { _ in Edition(number: 2) }
      }
    }
    #expect(await eventually { result.value != nil || failure.value != nil })

    #expect(failure.value == nil)
    #expect(result.value == [Edition(number: 1)], "the batch published mid-resolve is not seen")
    #expect(
      try container.resolve([Edition].self) == [Edition(number: 1), Edition(number: 2), Edition(number: 2)],
      "the next resolve sees all of it")
  }

  /// A factory that registers in one scope sees its own batch there, and nothing of a batch that
  /// another thread published in another scope meanwhile: it used to read every scope at the
  /// version of its own publish, which took in the other thread's batch half-way.
  @Test(arguments: [false, true])
  func aFactoryThatRegistersDoesNotSeeAnotherThreadsBatch(inNewScope: Bool) async throws {
    struct Marker: Sendable {}
    let pause = Pause()
    let container = try Container { registry in
      Self.registerEdition(1, into: registry)
      registry.register(Assembly.self) { resolver in
        let first = try resolver.resolve(Edition.self, name: Part.first)
        pause.hold()
        let child: Scope
        if inNewScope {
          child = try resolver.currentScope.makeScope(.session) { registry in
            registry.register(Marker.self) { _ in Marker() }
          }
        } else {
          child = try resolver.currentScope.makeScope(.session)
          try child.register { registry in registry.register(Marker.self) { _ in Marker() } }
        }
        _ = try child.resolve(Marker.self)  // its own batch is there
        let second = try resolver.resolve(Edition.self, name: Part.second)
        return Assembly(first: first.number, second: second.number)
      }
    }
    let result = Slot<Assembly>()
    let failure = Slot<String>()
    let thread = Thread {
      do {
        result.value = try container.resolve(Assembly.self)
      } catch {
        failure.value = "\(error)"
      }
    }
    thread.start()
    try pause.whileHeld {
      try container.register { registry in Self.registerEdition(2, into: registry) }
    }
    #expect(await eventually { result.value != nil || failure.value != nil })
    #expect(failure.value == nil)
    #expect(result.value == Assembly(first: 1, second: 1))
  }

  /// A factory that registers in two scopes sees both of its batches.
  @Test func aFactoryThatRegistersInTwoScopesSeesBoth() throws {
    struct Marker: Sendable {}
    let container = try Container { registry in
      registry.register(Assembly.self) { resolver in
        let session = try resolver.currentScope.makeScope(.session)
        try resolver.currentScope.register { registry in Self.registerEdition(3, into: registry) }
        try session.register { registry in registry.register(Marker.self) { _ in Marker() } }
        _ = try session.resolve(Marker.self)
        let first = try resolver.resolve(Edition.self, name: Part.first)
        let second = try resolver.resolve(Edition.self, name: Part.second)
        return Assembly(first: first.number, second: second.number)
      }
    }
    #expect(try container.resolve(Assembly.self) == Assembly(first: 3, second: 3))
  }

  /// A factory keeps seeing its own batch however many other batches it publishes, in this tree
  /// or another.
  @Test(arguments: [0, 4, 6])
  func aFactorySeesItsOwnBatchAfterPublishingOthers(children: Int) throws {
    struct Plugin: Sendable {}
    let container = try Container { registry in
      registry.register(Edition.self) { resolver in
        let scope = resolver.currentScope
        try scope.register { registry in registry.register(Plugin.self) { _ in Plugin() } }
        var tenants: [Scope] = []
        for number in 0..<children {
          tenants.append(
            try scope.makeScope(.session) { registry in registry.register(Int.self) { _ in number } })
        }
        defer { for tenant in tenants { try? tenant.close() } }
        let other = try Container { registry in registry.register(Int.self) { _ in 1 } }
        withExtendedLifetime(other) {}
        _ = try resolver.resolve(Plugin.self)
        return Edition(number: children)
      }
    }
    #expect(try container.resolve(Edition.self) == Edition(number: children))
  }

  /// A factory running in a request that gives the request's session its first registrations
  /// sees them, through `resolve` and `resolveIfRegistered` alike (the shortcut past scopes
  /// without registrations, cached for the resolve's version, skipped the session).
  @Test(arguments: [false, true])
  func aFactorySeesWhatItRegistersInAnAncestor(sessionHadRegistrations: Bool) throws {
    struct Plugin: Sendable {}
    let session = Slot<Scope>()
    let container = try Container { registry in
      registry.register(Edition.self) { resolver in
        try session.value?.register { registry in registry.register(Plugin.self) { _ in Plugin() } }
        _ = try resolver.resolve(Plugin.self)
        return Edition(number: try resolver.resolveIfRegistered(Plugin.self) == nil ? 0 : 1)
      }
    }
    let made =
      sessionHadRegistrations
      ? try container.makeScope(.session) { registry in registry.register(Int.self) { _ in 1 } }
      : try container.makeScope(.session)
    session.value = made
    let request = try made.makeScope(.request)
    #expect(try request.resolve(Edition.self) == Edition(number: 1))
  }

  @Test func aFactoryThatRegistersSeesWhatItRegistered() throws {
    let container = try Container { registry in
      registry.register(Assembly.self) { resolver in
        try resolver.currentScope.register { registry in Self.registerEdition(3, into: registry) }
        let first = try resolver.resolve(Edition.self, name: Part.first)
        let second = try resolver.resolve(Edition.self, name: Part.second)
        return Assembly(first: first.number, second: second.number)
      }
    }

    #expect(try container.resolve(Assembly.self) == Assembly(first: 3, second: 3))
  }

  @Test func manyResolvesRacingManyPublishesNeverMixEditions() async throws {
    let container = try Container { registry in
      Self.registerEdition(0, into: registry)
      registry.register(Assembly.self) { resolver in
        let first = try resolver.resolve(Edition.self, name: Part.first)
        let second = try resolver.resolve(Edition.self, name: Part.second)
        return Assembly(first: first.number, second: second.number)
      }
    }
    let mixed = Collector<Assembly>()
    let stop = Flag()

    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        for edition in 1...2_000 {
          try? container.register { registry in Self.registerEdition(edition, into: registry) }
        }
        stop.raise()
      }
      for _ in 0..<2 {
        group.addTask {
          while !stop.isRaised {
            if let assembly = try? container.resolve(Assembly.self), assembly.first != assembly.second {
              mixed.append(assembly)
            }
          }
        }
      }
    }

    let mixes = mixed.elements
    #expect(mixes.isEmpty, "\(mixes.count) resolves mixed two editions, e.g. \(mixes.prefix(3))")
  }
}
