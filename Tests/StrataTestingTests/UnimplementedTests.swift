import Strata
import StrataTesting
import Testing

private protocol PaymentGateway: Sendable {
  func charge(_ cents: Int) throws
}

private final class Checkout: Sendable {
  let gateway: any PaymentGateway

  init(gateway: any PaymentGateway) {
    self.gateway = gateway
  }
}

@Suite struct UnimplementedTests {
  @Test func resolvingAPlaceholderFailsWithItsRegistrationSite() throws {
    let line = #line + 2
    let container = try Container { registry in
      registry.registerUnimplemented((any PaymentGateway).self)
      registry.register(Checkout.self, Checkout.init)
    }

    let error = try #require(throws: ResolutionError.self) { try container.resolve(Checkout.self) }
    #expect(error.code == .factoryFailed)
    #expect(error.path.map(\.description) == ["Checkout", "PaymentGateway"])
    let unimplemented = try #require(error.underlying as? UnimplementedError)
    #expect(unimplemented.service == "PaymentGateway")
    #expect(unimplemented.registeredAt.line == line)
    #expect(unimplemented.registeredAt.fileID.hasSuffix("UnimplementedTests.swift"))
  }

  @Test func aPlaceholderNeverResolvedCostsNothing() throws {
    let container = try Container { registry in
      registry.registerUnimplemented((any PaymentGateway).self)
      registry.register(Checkout.self) { _ in Checkout(gateway: RecordingGateway()) }
    }
    #expect(try container.resolve(Checkout.self).gateway is RecordingGateway)
  }
}

private struct RecordingGateway: PaymentGateway {
  func charge(_ cents: Int) throws {}
}
