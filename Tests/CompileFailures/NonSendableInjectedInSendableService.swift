// expected-error: stored property '_counter' of 'Sendable'-conforming struct 'Handler' contains non-Sendable type 'Counter'
import Strata

final class Counter {
  var hits = 0
}

// Every copy of an `@Injected` property hands out the one cached instance: for a value that is not
// Sendable, the property is not Sendable, and a Sendable service cannot hold it.
struct Handler: Sendable {
  @Injected var counter: Counter
}
