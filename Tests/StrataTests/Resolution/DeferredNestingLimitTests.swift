import Strata
import Testing

/// `Lazy`, `Provider` and `@Injected` resolves each started inside the one before nest on the
/// thread, up to 32: past that the error says so, instead of blaming the stack and advising
/// to defer with `Lazy`.
@Suite struct DeferredNestingLimitTests {
  /// Reads the widget named `name` through an `@Injected` property.
  final class Link {
    @Injected var next: Widget

    init(name: Int, from scope: Scope) {
      _next = Injected(name: name, from: scope)
    }
  }

  /// A container whose widget `i` reads widget `i + 1` through an `@Injected` property in its
  /// factory, up to the last one of `length`.
  static func chain(length: Int) throws -> Container {
    let container = Slot<Container>()
    let built = try Container { registry in
      for index in 0..<length {
        registry.register(Widget.self, name: index) { _ in
          guard index < length - 1, let scope = container.value else { return Widget(id: index) }
          return Widget(id: try Link(name: index + 1, from: scope).$next.resolve().id)
        }
      }
    }
    container.value = built
    return built
  }

  @Test func thirtyTwoNestedDeferredResolvesResolve() throws {
    let container = try Self.chain(length: 33)
    #expect(try container.resolve(Widget.self, name: 0).id == 32)
  }

  @Test func aDeeperChainNamesTheDeferredLimit() throws {
    let container = try Self.chain(length: 40)
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(Widget.self, name: 0)
    }
    #expect(error.code == .depthLimitExceeded)
    #expect(error.key.nameDescription == "33")
    #expect(
      error.hint
        == "`Lazy`, `Provider` and `@Injected` resolves nest 32 deep here, each started inside the "
        + "one before, without repeating a service, and Strata allows 32 on one thread; resolve "
        + "some of these dependencies directly (as initializer parameters or through the resolver), "
        + "or read them after the factories that make them return")
  }
}
