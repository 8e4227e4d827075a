// Payments and checkout: a gateway, a cart per session, and the services built on them.

import Strata

protocol PaymentGateway: Sendable {
  func charge(cents: Int) async throws
}

struct StripeGateway: PaymentGateway {
  func charge(cents: Int) async throws {}
}

actor Cart {
  let gateway: PaymentGateway
  init(gateway: PaymentGateway) { self.gateway = gateway }
}

struct Receipt {
  let gateway: PaymentGateway
}

protocol Mailer: Sendable {
  func send(_ text: String, to address: String) throws
}

struct CheckoutFlow {
  let cart: Cart
  let mailer: Lazy<Mailer>
}

struct Checkout {
  let gateway: PaymentGateway
}
