import Strata
import Testing

private final class HintTracer: Sendable {}

/// Asks for its tracer as an optional, as it would with a container that injects `nil` for a
/// service nobody registered.
private final class TracedHandler: Sendable {
  let tracer: HintTracer?
  init(tracer: HintTracer?) { self.tracer = tracer }
}

/// An `Optional` is a key of its own, which a resolve never unwraps: the `notRegistered` hint says
/// so when the type it wraps is registered (the auto-wired `Tracer?` parameter), or when the
/// wanted type is registered only as an `Optional`.
@Suite struct OptionalHintTests {
  @Test func anOptionalParameterWhoseWrappedTypeIsRegisteredSaysWhyItIsNotFound() throws {
    let container = try Container { registry in
      registry.register(HintTracer.self, lifetime: .singleton) { _ in HintTracer() }
      registry.register(TracedHandler.self, TracedHandler.init)
    }
    let error = try #require(resolutionError { _ = try container.resolve(TracedHandler.self) })

    #expect(error.code == .notRegistered)
    #expect(error.key.description == "Optional<HintTracer>")
    #expect(
      error.hint
        == "`HintTracer` is registered, but `Optional<HintTracer>` is a key of its own (a resolve never "
        + "unwraps an Optional): ask for `HintTracer`, or, for `nil` when it is not registered, make "
        + "this service with a closure factory that calls `try resolver.resolveIfRegistered(HintTracer.self)`"
    )
  }

  @Test func theAdvisedClosureFactoryGivesTheTracerOrNil() throws {
    for registersTracer in [true, false] {
      let container = try Container { registry in
        if registersTracer {
          registry.register(HintTracer.self, lifetime: .singleton) { _ in HintTracer() }
        }
        registry.register(TracedHandler.self) { resolver in
          TracedHandler(tracer: try resolver.resolveIfRegistered(HintTracer.self))
        }
      }
      #expect((try container.resolve(TracedHandler.self).tracer != nil) == registersTracer)
    }
  }

  @Test func aServiceRegisteredOnlyAsAnOptionalSaysSo() throws {
    let container = try Container { registry in
      registry.register(HintTracer?.self) { _ in HintTracer() }
    }
    let error = try #require(resolutionError { _ = try container.resolve(HintTracer.self) })

    #expect(error.code == .notRegistered)
    #expect(
      error.hint
        == "`Optional<HintTracer>` is registered, a key of its own: resolve `Optional<HintTracer>`, or "
        + "register `HintTracer`")
  }

  @Test func anOptionalOfAnotherNameOrOtherArgumentsIsNoNearMiss() throws {
    let container = try Container { registry in
      registry.register(HintTracer.self, name: "audit") { _ in HintTracer() }
    }
    let error = try #require(resolutionError { _ = try container.resolve(HintTracer?.self) })

    #expect(error.code == .notRegistered)
    #expect(error.hint?.contains("key of its own") == false)
  }
}
