// The persistence module installed beside the examples' own modules (uses Users.swift).

import Strata
import StrataModules

struct PersistenceModule: Module {
  func register(in registry: Registrar) {
    registry.register(Database.self, lifetime: .singleton) { _ in
      try PostgresDatabase(url: "postgres://localhost/app")
    }
    registry.register(UserRepository.self, SQLUserRepository.init)
  }
}
