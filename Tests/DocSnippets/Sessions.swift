// A user session: its identifier, and its shopping cart, which the session disposes when it closes.

import Strata

let sessionID = "7f3a"

struct Item: Sendable {
  let sku: String
}

actor ShoppingCart: AsyncDisposable {
  private var items: [Item] = []
  func add(_ item: Item) { items.append(item) }
  func dispose() async throws { items.removeAll() }
}
