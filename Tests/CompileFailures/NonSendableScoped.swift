// expected-warning: 'scoped' is deprecated: a scoped instance is shared by every thread that resolves it in its scope, but this service is not Sendable
import Strata

// Requests of one session may run concurrently, and all of them share the session's instance.
final class ShoppingCart {
  var items: [String] = []
}

func register(_ registry: Registrar) {
  registry.register(ShoppingCart.self, lifetime: .scoped(.session)) { _ in ShoppingCart() }
}
