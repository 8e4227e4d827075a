// The placeholders of the README's quick start, which declares the services that use them.

final class Database: Sendable {
  let url: String
  init(url: String) throws { self.url = url }
  func query(_ sql: String) throws -> String { "Ada" }
}

let databaseURL = "postgres://localhost/app"

struct Greeting {
  let text: String
  init(_ name: String) { text = "Hello, \(name)!" }
}
