// expected-error: instance method 'withScope' is unavailable from asynchronous contexts
import Strata

// A synchronous closure calling the synchronous `withScope`, inside async code.
func handle(_ container: Container) async throws {
  let run: () throws -> Int = { 1 }
  defer { _ = try? container.withScope(.request) { _ in try run() } }
  _ = container.isClosed
}
