import Strata
import Testing

// The error texts the articles print, reproduced with the articles' own registrations: what a
// reader copies from the documentation is what Strata says.

private final class DocOrderService: Sendable {
  let payments: DocPaymentService
  init(payments: DocPaymentService) { self.payments = payments }
}

private final class DocPaymentService: Sendable {
  let orders: DocOrderService
  init(orders: DocOrderService) { self.orders = orders }
}

@Suite struct DocumentedErrorTextTests {
  /// Getting Started, "Break a cycle with Lazy": the site is the registration whose factory asked
  /// for the singleton again (the line after the singleton's), not the singleton's own.
  @Test func theGettingStartedCycleNamesTheRegistrationThatClosedIt() throws {
    let line = #line + 3  // PaymentService's registration
    let shop = try Container { registry in
      registry.register(DocOrderService.self, lifetime: .singleton, DocOrderService.init)
      registry.register(DocPaymentService.self, DocPaymentService.init)
    }
    let error = try #require(resolutionError { _ = try shop.resolve(DocOrderService.self) })
    #expect(
      error.description == """
        cycle: circular dependency: DocOrderService → DocPaymentService → DocOrderService
          path: DocOrderService → DocPaymentService → DocOrderService
          registered at \(site(line))
          hint: break the cycle: inject one side as Lazy or Provider, or set it in an onActivated \
        hook of a graph, singleton or scoped registration
        """)
  }
}
