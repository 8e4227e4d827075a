// expected-error: instance method 'close' is unavailable from asynchronous contexts
import Strata

// In async code, a synchronous close would leave AsyncDisposable instances to a background task.
func handle(_ container: Container) async throws {
  let request = try container.makeScope(.request)
  defer { try? request.close() }
  _ = request.isClosed
}
