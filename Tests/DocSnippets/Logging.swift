// Loggers of the examples: `Logger` is registered under names (`LogChannel.audit`) and injected.

protocol Logger: Sendable {
  func log(_ message: String)
}

struct ConsoleLogger: Logger {
  func log(_ message: String) { print(message) }
}

struct FileLogger: Logger {
  let path: String
  func log(_ message: String) { print("\(path): \(message)") }
}

struct AuditLogger: Logger {
  func log(_ message: String) { print("audit: \(message)") }
}
