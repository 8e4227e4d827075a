// expected-warning: 'singleton' is deprecated: a singleton is shared by every thread that resolves it, but this service is not Sendable
import Strata

// A mutable class shared by every thread that resolves it: a data race the compiler can point at.
final class HitCounter {
  var hits = 0
}

func register(_ registry: Registrar) {
  registry.register(HitCounter.self, lifetime: .singleton) { _ in HitCounter() }
}
