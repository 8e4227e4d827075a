// expected-warning: conformance of 'Lifetime' to 'UnsharedLifetimeConvertible' is deprecated: a lifetime known only at run time may share the instance between threads, but this service is not Sendable
import Strata

final class Buffer {
  var bytes: [UInt8] = []
}

// The compiler cannot tell whether a lifetime held in a variable is shared, so it warns.
func register(_ registry: Registrar, lifetime: Lifetime) {
  registry.register(Buffer.self, lifetime: lifetime) { _ in Buffer() }
}
