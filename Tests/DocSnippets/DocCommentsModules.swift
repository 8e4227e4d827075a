// The placeholders of the examples in the `///` comments of Sources/Modules (after DocComments).

import Strata
import StrataModules

/// The error, report and problem an example inspects.
var error: ModuleError { fatalError("placeholder") }
var report: ValidationReport { container.validationReport() }
var problem: ValidationProblem { fatalError("placeholder") }

struct LoggingModule: Module {
  func register(in registry: Registrar) {}
}
struct PersistenceModule: Module {
  func register(in registry: Registrar) {}
}
struct NetworkingModule: Module {
  func register(in registry: Registrar) {}
}
struct CacheModule: Module {
  func register(in registry: Registrar) {}
}
struct CheckoutModule: Module {
  func register(in registry: Registrar) {}
}
struct PaymentsModule: Module {
  func register(in registry: Registrar) {}
}
struct CartModule: Module {
  func register(in registry: Registrar) {}
}
struct AppModule: Module {
  func register(in registry: Registrar) {}
}
struct FixedClockModule: Module {
  func register(in registry: Registrar) {}
}
struct InMemoryMailModule: Module {
  func register(in registry: Registrar) {}
}
struct DatabaseModule: Module {
  let region: String
  init(region: String = "eu-west") { self.region = region }
  var moduleID: ModuleID { ModuleID(Self.self, region) }
  func register(in registry: Registrar) {}
}

struct MigrationRunner: Sendable {
  func run() throws {}
}
