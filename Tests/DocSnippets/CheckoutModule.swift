// The checkout feature installed in a session scope (uses Payments.swift).

import Strata
import StrataModules

struct CheckoutModule: Module {
  func register(in registry: Registrar) {
    registry.register(Cart.self, lifetime: .scoped(.session), Cart.init)
    registry.register(CheckoutFlow.self, CheckoutFlow.init)
  }
}
