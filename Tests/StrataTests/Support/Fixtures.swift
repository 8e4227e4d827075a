import Strata

// The services, names and tags the suites resolve. Shared vocabulary: a suite declares its own
// service types only when they say something about that suite's feature.

// MARK: - An application graph

protocol Database: AnyObject, Sendable {}

final class InMemoryDatabase: Database {
  init() {}
}

protocol UserRepository: AnyObject, Sendable {
  var database: any Database { get }
}

final class UserRepositoryImpl: UserRepository {
  let database: any Database

  init(database: any Database) {
    self.database = database
  }
}

protocol EventLogger: AnyObject, Sendable {}

final class ConsoleLogger: EventLogger {
  init() {}
}

protocol TimeSource: AnyObject, Sendable {}

final class FixedTimeSource: TimeSource {
  init() {}
}

protocol UserService: AnyObject, Sendable {
  var repository: any UserRepository { get }
  var logger: any EventLogger { get }
  var timeSource: any TimeSource { get }
}

final class UserServiceImpl: UserService {
  let repository: any UserRepository
  let logger: any EventLogger
  let timeSource: any TimeSource

  init(repository: any UserRepository, logger: any EventLogger, timeSource: any TimeSource) {
    self.repository = repository
    self.logger = logger
    self.timeSource = timeSource
  }
}

final class App: Sendable {
  let userService: any UserService

  init(userService: any UserService) {
    self.userService = userService
  }
}

/// A service that knows which factory run made it.
final class Widget: Sendable {
  let id: Int

  init(id: Int) {
    self.id = id
  }
}

/// A value-type service, made with runtime arguments.
struct Greeting: Equatable, Sendable {
  let text: String
}

/// Two name types whose cases print the same (`.primary`), and must never be confused.
enum DatabaseRole: Hashable, Sendable {
  case primary
  case replica
}

enum CacheRole: Hashable, Sendable {
  case primary
  case replica
}

/// An error a factory throws, to check that Strata hands it back untouched.
struct FixtureError: Error, Equatable {
  let code: Int
}

// MARK: - Services for the scope tree

/// A plain service that knows where it came from.
final class LabeledService: Sendable {
  let label: String

  init(_ label: String) {
    self.label = label
  }
}

/// A dependency that child scopes override.
final class Dependency: Sendable {
  let origin: String

  init(origin: String) {
    self.origin = origin
  }
}

/// A service holding a ``Dependency``.
final class Consumer: Sendable {
  let dependency: Dependency

  init(dependency: Dependency) {
    self.dependency = dependency
  }
}

// MARK: - Tags and names

extension ScopeTag {
  /// A custom tag, as an application would declare one.
  static let customTenant = ScopeTag("tenant")
}

/// Names for several registrations of one type.
enum Ordinal: Hashable, Sendable {
  case first
  case second
  case third
}

// MARK: - Services for the regression suites

/// A scoped service whose instance must never be handed out as another type.
final class FirstScoped: Sendable {
  let label = "first"
}

/// Laid out differently from `FirstScoped`, so reading one as the other shows.
final class SecondScoped: Sendable {
  let numbers = [1, 2, 3]
  let tag = 0x5EC0_0D
}

/// A service that receives its arguments as given, to tell argument lists apart.
struct ArgumentEcho: Sendable, Equatable {
  let text: String
}

/// A service that holds a `Provider` and a `Lazy` of a plain dependency.
final class ProviderHolder: Sendable {
  let provider: Provider<Widget>
  let lazy: Lazy<Widget>

  init(provider: Provider<Widget>, lazy: Lazy<Widget>) {
    self.provider = provider
    self.lazy = lazy
  }
}

/// A singleton that holds a `Lazy` of itself's neighbour: the cycle-breaking recipe.
final class LazyHoldingSingleton: Sendable {
  let neighbour: Lazy<Widget>

  init(neighbour: Lazy<Widget>) {
    self.neighbour = neighbour
  }
}

/// One link of a chain of distinct service types: `Link<Link<…<ChainEnd>>>`.
final class Link<Inner>: Sendable {
  let depth: Int

  init(depth: Int) {
    self.depth = depth
  }
}

/// The innermost service of a chain of `Link`s.
final class ChainEnd: Sendable {
  init() {}
}

/// A marker error thrown by a request handler.
struct HandlerFailure: Error {}
