// Reports built per request, and a cache that (wrongly) keeps a request's context (uses
// Server.swift).

struct ReportBuilder {
  let context: RequestContext
  func build() throws -> String { "report for \(context.requestID ?? "?")" }
}

final class ResponseCache: Sendable {
  let context: RequestContext
  init(context: RequestContext) { self.context = context }
}
