// The placeholders of the Getting Started article, besides the services it declares itself.

struct Greeting {
  let text: String
  init(name: String) { text = "Hello, \(name)!" }
}

struct AppConfig: Sendable {
  let environment: String
}

final class Tracer {
  func start() {}
}
