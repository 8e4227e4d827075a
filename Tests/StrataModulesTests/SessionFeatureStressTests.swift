import Foundation
import Strata
import StrataModules
import Testing

// Sessions attaching feature modules from many tasks at once, while requests resolve in them and
// the container keeps installing modules of its own: each feature loads once per session, the
// container's shared module never again, and every resolve sees whole installations.

private final class Cart: Sendable {
  let database: Database
  init(database: Database) { self.database = database }
}

private final class Checkout: Sendable {
  let cart: Cart
  init(cart: Cart) { self.cart = cart }
}

private struct SharedModule: Module {
  let log: EventLog
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton, dependsOn: []) { _ in Database() }
  }
  func loaded(in scope: Scope) throws { log.record("shared in \(scope.tag)") }
}

private struct CheckoutModule: Module {
  let log: EventLog
  let number: Int
  var moduleID: ModuleID { ModuleID(Self.self, number) }
  var requires: [any Module] { [SharedModule(log: log)] }
  func register(in registry: Registrar) {
    registry.register(Cart.self, lifetime: .scoped(.session), Cart.init)
    registry.register(Checkout.self, lifetime: .scoped(.request), Checkout.init)
  }
  func loaded(in scope: Scope) throws {
    // The session's own registrations and the container's are all visible to the hook.
    _ = try scope.resolve(Cart.self)
    log.record("checkout")
  }
}

/// A module the container installs while sessions come and go: one key per instance.
private struct ExtraModule: Module {
  let number: Int
  var moduleID: ModuleID { ModuleID(Self.self, number) }
  func register(in registry: Registrar) {
    registry.register(Clock.self, name: number) { _ in Clock() }
  }
}

@Suite(.timeLimit(.minutes(1)))
struct SessionFeatureStressTests {
  @Test func sessionsAttachFeaturesWhileRequestsResolveAndTheContainerInstalls() async throws {
    let log = EventLog()
    let container = try Container(modules: [SharedModule(log: log)])
    let database = try container.resolve(Database.self)
    let (tasks, rounds) = (6, 25)
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for number in 0..<(tasks * rounds) { try container.install(ExtraModule(number: number)) }
      }
      for task in 0..<tasks {
        group.addTask {
          for round in 0..<rounds {
            let session = try container.makeScope(
              .session, modules: [CheckoutModule(log: log, number: (task + round) % 3)])
            #expect(session.installedModules == [ModuleID(CheckoutModule.self, (task + round) % 3)])
            let cart = try session.resolve(Cart.self)
            #expect(cart.database === database)
            for _ in 0..<3 {
              try await session.withScope(.request) { request in
                let checkout = try request.resolve(Checkout.self)
                #expect(checkout.cart === cart)
                #expect(try request.resolve(Checkout.self) === checkout)
              }
            }
            try await session.close()
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(log.all.filter { $0.hasPrefix("shared") } == ["shared in .root"])
    #expect(log.all.filter { $0 == "checkout" }.count == tasks * rounds)
    #expect(container.installedModules.count == 1 + tasks * rounds)
    #expect(try container.resolveAll(Clock.self, name: tasks * rounds - 1).count == 1)
    #expect(container.validationReport(expecting: [.session, .request]).problems.isEmpty)
  }
}
