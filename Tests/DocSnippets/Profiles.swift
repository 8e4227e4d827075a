// User profiles, and the log channels of the Getting Started article.

struct Profile {
  let id: Int
}

protocol ProfileRepository {
  func profile(of userID: Int) throws -> Profile
}

enum LogChannel: Hashable, Sendable {
  case app
  case audit
}
