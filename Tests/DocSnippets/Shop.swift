// The container of the article's first cycle example ("with the same registrations as before").

import Strata

let shop = try Container { registry in
  registry.register(OrderService.self, lifetime: .singleton, OrderService.init)
  registry.register(PaymentService.self, PaymentService.init)
}
