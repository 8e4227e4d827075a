// The placeholders of the examples in the `///` comments of Sources/, for every module. Each
// example is checked as the body of its own function, so a type it declares shadows these.
// Protocols declare no requirements (their methods are in extensions), so that an example may
// declare its own conforming type in a line.

import Foundation
import Strata
import Testing

// MARK: - Values an example refers to

var container: Container { Container() }
var registry: Registrar { fatalError("placeholder") }
var resolver: Resolver { fatalError("placeholder") }
var scope: Scope { container }
var request: Scope { container }
var log: any Logger { ConsoleLogger() }
var logger: any Logger { ConsoleLogger() }
var user: User { User(id: "ada") }
var screen: ProfileScreen { ProfileScreen() }
var storyboard: Storyboard { Storyboard() }
var socket: Socket { Socket() }
var input: String { "" }
var needed: Bool { true }
let databaseURL = "postgres://localhost/app"

func drain() async throws {}
func handle(_ request: Scope, in scope: Scope) async throws {}
func makeISOFormatter() -> DateFormatter { DateFormatter() }

struct Storyboard {
  func instantiate<T>(_ type: T.Type) -> T { fatalError("placeholder") }
}

struct Socket {
  func close() throws {}
}

// MARK: - Names and tags

enum LogChannel: Hashable, Sendable { case audit, debug }
enum Tone: Hashable, Sendable { case formal, casual }

extension ScopeTag {
  static let tenant = ScopeTag("tenant")
}

// MARK: - Services

protocol Logger: Sendable {}
extension Logger {
  func log(_ message: String) {}
  func warning(_ message: String) {}
  func error(_ message: String) {}
}
struct ConsoleLogger: Logger {}
struct AuditLogger: Logger {}

protocol Database: Sendable {}
final class Postgres: Database {
  init(url: String = databaseURL) throws {}
}

struct User: Identifiable, Sendable {
  let id: String
}
struct Profile: Sendable {}

protocol UserRepository: Sendable {}
extension UserRepository {
  func profile(_ id: User.ID) throws -> Profile { Profile() }
  func save(_ profile: Profile) throws {}
}
struct SQLUserRepository: UserRepository {
  init(database: any Database, logger: any Logger) {}
}

protocol Mailer: Sendable {}
protocol Analytics: Sendable {}
struct NoAnalytics: Analytics {}

/// One placeholder for the several shapes in which the examples build a user service.
struct UserService: Sendable {
  init(
    repository: (any UserRepository)? = nil, database: (any Database)? = nil,
    logger: (any Logger)? = nil, mailer: Lazy<any Mailer>? = nil
  ) {}
}

struct ReportService: Sendable {
  init(database: any Database, logger: any Logger, mailer: Lazy<any Mailer>) {}
}

final class ProfileScreen: Injectable {
  struct Dependencies {
    let repository: any UserRepository
    let analytics: any Analytics
  }
  func inject(_ dependencies: Dependencies) {}
}

struct Greeting: Sendable {
  init(_ name: String, _ times: Int = 1) {}
}

struct Configuration: Sendable {
  enum Environment: Sendable { case development, production }
  init(environment: Environment) {}
  static func load() -> Configuration { Configuration(environment: .production) }
}

protocol Clock: Sendable {}
struct SystemClock: Clock {}
struct FixedClock: Clock {}

final class Session: Sendable {
  init() {}
}

/// Not `Sendable`: registered with `.unchecked(…)` lifetimes.
final class LegacyCache {
  init() {}
}
final class ImageCache {
  init() {}
}

final class ReportBuilder: Sendable {
  init() {}
}

struct Pair: Sendable {
  init(_ pair: (Int, String)) {}
  init(_ id: Int, _ label: String) {}
}

protocol UserStore: Sendable {}
protocol OrderStore: Sendable {}
final class PostgresStore: UserStore, OrderStore {
  init() {}
}

final class Child: @unchecked Sendable {
  init(parent: Parent) {}
}
final class Parent: @unchecked Sendable {
  var child: Child?
  init() {}
  init(child: Lazy<Child>) {}
}

final class ReportGenerator: Sendable {
  func generate() throws {}
  func render() throws -> Data { Data() }
}

final class Job: Sendable {
  func run() throws {}
}
struct Worker: Sendable {
  init(makeJob: Provider<Job>) {}
}

final class Connection: Sendable {}

protocol HealthCheck: Sendable {}
extension HealthCheck {
  func run() async throws {}
}
struct DatabaseCheck: HealthCheck {}
struct CacheCheck: HealthCheck {}

protocol Tracer: Sendable {}
struct NoopTracer: Tracer {}

final class Metrics: Sendable {
  static func connect() throws -> Metrics { Metrics() }
}

struct Handler: Sendable {
  func handle() throws {}
  func handle(_ input: String) throws -> String { input }
}
struct RequestHandler: Sendable {
  func handle() throws {}
}
struct HTTPRequest: Sendable {}
struct HTTPResponse: Sendable {}
struct Router: Sendable {
  func route(_ request: HTTPRequest) async throws -> HTTPResponse { HTTPResponse() }
}

struct Cart: Sendable {
  var total: Int { 0 }
}

struct TenantConfig: Sendable {
  let id: String
}
protocol Storage: Sendable {}
struct S3Storage: Storage {
  let bucket: String
}

protocol FeatureFlags: Sendable {}
struct RemoteFlags: FeatureFlags {}

protocol PaymentGateway: Sendable {}
struct Checkout: Sendable {
  init(payments: any PaymentGateway) {}
}

struct App: Sendable {}

final class ProfileController {
  @Injected var repository: any UserRepository
}
