// An application assembled from one module, and the test doubles that replace parts of it
// (uses Storage.swift).

import Strata
import StrataModules

protocol Clock: Sendable {
  var now: Instant { get }
}

struct Instant: Sendable {
  let secondsSince1970: Double
  static let epoch = Instant(secondsSince1970: 0)
}

struct SystemClock: Clock {
  var now: Instant { Instant(secondsSince1970: 1_800_000_000) }
}

struct FixedClock: Clock {
  let now: Instant
}

struct InMemoryStorage: Storage {
  func read(_ path: String) throws -> [UInt8] { [] }
}

struct AppModule: Module {
  func register(in registry: Registrar) {
    registry.register(Clock.self, lifetime: .singleton) { _ in SystemClock() }
    registry.register(Storage.self, lifetime: .singleton) { _ in S3Storage(bucket: "app") }
  }
}

struct InMemoryStorageModule: Module {
  func register(in registry: Registrar) {
    registry.register(Storage.self, lifetime: .singleton) { _ in InMemoryStorage() }
  }
}
