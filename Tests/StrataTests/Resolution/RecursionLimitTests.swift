import Strata
import Testing

/// Every recursion, by any route, stops with a typed error before the stack runs out; a real cycle
/// reads as `cycle` with its path, a deep acyclic chain as `depthLimitExceeded`, and chains of 500
/// resolve.
@Suite struct RecursionLimitTests {
  /// Apple's default for secondary threads.
  static let smallStack = 512 * 1024

  /// A factory that resolves its own type through a captured container.
  final class SelfResolving: Sendable {}

  @Test func aFactoryResolvingItsOwnTypeThroughACapturedContainerStopsWithACycle() async throws {
    let code = await onThread(stackSize: Self.smallStack) { () -> String in
      let container = Container()
      do {
        try container.register { registry in
          registry.register(SelfResolving.self) { _ in
            _ = try container.resolve(SelfResolving.self)
            return SelfResolving()
          }
        }
        _ = try container.resolve(SelfResolving.self)
        return "no error"
      } catch let error as ResolutionError {
        return "\(error.code) \(error.cycle?.count ?? 0)"
      } catch {
        return "\(error)"
      }
    }
    #expect(code == "cycle 2")
  }

  /// A factory that resolves its own type through the ambient scope.
  final class AmbientResolving: Sendable {}

  @Test func aFactoryResolvingItsOwnTypeThroughTheCurrentScopeStopsWithACycle() async throws {
    let code = await onThread(stackSize: Self.smallStack) { () -> String in
      do {
        let container = try Container { registry in
          registry.register(AmbientResolving.self) { _ in
            _ = try Scope.current?.resolve(AmbientResolving.self)
            return AmbientResolving()
          }
        }
        return try container.withScope(.request) { request in
          _ = try request.resolve(AmbientResolving.self)
          return "no error"
        }
      } catch let error as ResolutionError {
        return "\(error.code)"
      } catch {
        return "\(error)"
      }
    }
    #expect(code == "cycle")
  }

  /// Resolves a chain of `length` links whose innermost factory reads a `Lazy` of the outermost,
  /// on a small stack, and returns the error code (or what else happened).
  static func lazyCycleOutcome(length: Int) async -> String? {
    await onThread(stackSize: Self.smallStack) { () -> String in
      do {
        var outermost: Any.Type = ChainEnd.self
        let container = try Container { registry in
          registerChain(
            into: registry, around: ChainEnd.self, length: length,
            closeWith: { resolver, top in try readLazy(of: top, resolver) }
          ) { outermost = $0 }
        }
        _ = try resolveOpened(outermost, from: container)
        return "no error"
      } catch let error as ResolutionError {
        return "\(error.code)"
      } catch {
        return "\(error)"
      }
    }
  }

  @Test func aCycleThroughLazyWithManyFactoriesBetweenReadsStopsBeforeTheStackRunsOut() async throws {
    // One lap is 126 factories: a stack of 512 KiB may run low before the lap closes (in debug
    // builds with sanitizers it does), and then it is reported as too deep; never a crash.
    let outcome = await Self.lazyCycleOutcome(length: 126)
    #expect(outcome == "cycle" || outcome == "depthLimitExceeded", "\(outcome ?? "hung")")
  }

  @Test func aCycleThroughLazyIsReportedAsACycle() async throws {
    #expect(await Self.lazyCycleOutcome(length: 12) == "cycle")
  }

  @Test func anAcyclicChainOf500Resolves() throws {
    var outermost: Any.Type = ChainEnd.self
    let container = try Container { registry in
      registerChain(into: registry, around: ChainEnd.self, length: 500) { outermost = $0 }
    }
    let top = try resolveOpened(outermost, from: container)
    #expect(ObjectIdentifier(type(of: top as AnyObject)) == ObjectIdentifier(outermost))
  }

  @Test func anAcyclicChainTooDeepForTheStackIsNotCalledACycle() async throws {
    nonisolated(unsafe) var outermost: Any.Type = ChainEnd.self
    let container = try Container { registry in
      registerChain(into: registry, around: ChainEnd.self, length: 3000) { outermost = $0 }
    }
    let top = outermost
    let outcome = await onThread(stackSize: Self.smallStack) { () -> String in
      do {
        _ = try resolveOpened(top, from: container)
        return "no error"
      } catch let error as ResolutionError {
        // (Type names are not printed here: naming a type nested thousands of generics deep takes
        // more stack than this thread has.)
        let repeats = Set(error.path.map { ObjectIdentifier($0.serviceType) }).count != error.path.count
        return "\(error.code) \(repeats) \(error.hint?.contains("levels deep") == true)"
      } catch {
        return "\(error)"
      }
    }
    #expect(outcome == "depthLimitExceeded false true")
  }
}
