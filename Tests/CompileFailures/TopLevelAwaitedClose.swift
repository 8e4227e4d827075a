// expected-error: instance method 'close' is unavailable from asynchronous contexts; in async code use `try await close()`, which awaits AsyncDisposable instances (in top-level code, Swift picks this overload anyway: make that call from an async function)
import Strata

// Top-level code, as in a server's main.swift: Swift picks the synchronous `close()` even after
// `await`, so the error must say what to do there.
let container = Container()
try await container.close()
