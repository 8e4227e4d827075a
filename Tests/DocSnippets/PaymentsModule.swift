// The payments module that other modules require (uses Payments.swift).

import Strata
import StrataModules

struct PaymentsModule: Module {
  func register(in registry: Registrar) {
    registry.register(PaymentGateway.self, lifetime: .singleton) { _ in StripeGateway() }
  }
}
