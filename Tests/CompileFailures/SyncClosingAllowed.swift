import Strata

// Synchronous code keeps the synchronous variants; async code gets the awaiting ones.
func handle(_ container: Container) throws -> Int {
  let request = try container.makeScope(.request)
  defer { try? request.close() }
  return try container.withScope(.request) { _ in 1 }
}

func handle(_ container: Container) async throws -> Int {
  let request = try container.makeScope(.request)
  try await request.close()
  return try await container.withScope(.request) { _ in 1 }
}
