// expected-warning: 'singleton' is deprecated: a singleton is shared by every thread that resolves it, but this service is not Sendable
import Strata

final class Clock: Sendable {
  init() {}
}

// Auto-wired, and still shared by every thread that resolves it.
final class RequestLog {
  let clock: Clock
  var lines: [String] = []

  init(clock: Clock) { self.clock = clock }
}

func register(_ registry: Registrar) {
  registry.register(Clock.self, lifetime: .singleton, Clock.init)
  registry.register(RequestLog.self, lifetime: .singleton, RequestLog.init)
}
