import Strata

// What the error for top-level code advises: the awaited close, called from an async function.
let container = Container()

func shutDown(_ container: Container) async throws {
  try await container.withScope(.request) { _ in }
  try await container.close()
}

try await shutDown(container)
