// expected-error: instance method 'withScope' is unavailable from asynchronous contexts; in async code use `try await withScope`, which awaits AsyncDisposable instances (in top-level code, Swift picks this overload anyway: make that call from an async function)
import Strata

// Top-level code, as in a server's main.swift: Swift picks the synchronous `withScope` even after
// `await`, so the error must say what to do there.
let container = Container()
let answer = try await container.withScope(.request) { _ in 42 }
