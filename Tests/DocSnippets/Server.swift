// A server's services: a connection pool for the application, a context and a transaction per
// request, and a transient handler built from them.

import Strata
import Synchronization

struct HTTPRequest: Sendable {
  let id: String
  let path: String
}

struct HTTPResponse: Sendable {
  let status: Int
}

/// The request being handled.
let incoming = HTTPRequest(id: "r1", path: "/orders")

final class ConnectionPool: Sendable {
  let size: Int
  init(size: Int = 4) throws { self.size = size }
  func begin() throws -> Transaction { Transaction() }
}

final class Transaction: AsyncDisposable, Sendable {
  func commit() async throws {}
  func dispose() async throws {}  // rolls back what was not committed
}

final class RequestContext: Sendable {
  private let id = Mutex<String?>(nil)
  var requestID: String? {
    get { id.withLock { $0 } }
    set { id.withLock { $0 = newValue } }
  }
}

struct OrderHandler {
  let context: RequestContext
  let transaction: Transaction
  func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await transaction.commit()
    return HTTPResponse(status: 200)
  }
}
