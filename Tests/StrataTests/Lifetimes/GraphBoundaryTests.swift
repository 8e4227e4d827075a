import Strata
import Testing

private final class Part: Sendable {}

private final class Holder: Sendable {
  let part: Part
  init(part: Part) { self.part = part }
}

private final class Screen: Sendable {
  let part: Part
  let transient: Holder
  let cached: Holder
  init(part: Part, transient: Holder, cached: Holder) {
    self.part = part
    self.transient = transient
    self.cached = cached
  }
}

/// A `graph` instance is shared by the transients of one top-level resolve, but a singleton made
/// during that resolve builds its own graph (it outlives the resolve), as documented.
@Suite struct GraphBoundaryTests {
  @Test func aGraphInstanceStopsAtSharedInstances() throws {
    let container = try Container { registry in
      registry.register(Part.self, lifetime: .graph, Part.init)
      registry.register(Holder.self, Holder.init)
      registry.register(Holder.self, name: "cached", lifetime: .singleton, Holder.init)
      registry.register(Screen.self) { resolver in
        Screen(
          part: try resolver.resolve(Part.self), transient: try resolver.resolve(Holder.self),
          cached: try resolver.resolve(Holder.self, name: "cached"))
      }
    }
    let screen = try container.resolve(Screen.self)
    #expect(screen.transient.part === screen.part)
    #expect(screen.cached.part !== screen.part)
    #expect(try container.resolve(Screen.self).part !== screen.part)
  }
}
