// expected-warning: 'register(_:name:instance:fileID:line:)' is deprecated: a registered instance is shared by every thread that resolves it, but this service is not Sendable
import Strata

// A ready-made instance is a singleton: every resolve, on any thread, returns this object.
final class Settings {
  var theme = "light"
}

func register(_ registry: Registrar) {
  registry.register(instance: Settings())
}
