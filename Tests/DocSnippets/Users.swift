// The services of the Getting Started article, for the articles that build on them.

protocol Database: Sendable {
  func fetchName(ofUser id: Int) throws -> String
  func migrate() throws
}

final class PostgresDatabase: Database {
  let url: String
  init(url: String) throws { self.url = url }
  func fetchName(ofUser id: Int) throws -> String { "Ada" }
  func migrate() throws {}
}

protocol UserService {
  func displayName(ofUser id: Int) throws -> String
}

struct UserServiceImpl: UserService {
  let database: Database
  func displayName(ofUser id: Int) throws -> String { try database.fetchName(ofUser: id) }
}

protocol UserRepository {
  func name(of id: Int) throws -> String
}

struct SQLUserRepository: UserRepository {
  let database: Database
  func name(of id: Int) throws -> String { try database.fetchName(ofUser: id) }
}
