// expected-error: stored property 'counter' of 'Sendable'-conforming struct 'Handler' contains non-Sendable type 'Counter'
import Strata

final class Counter {
  var hits = 0
}

// A `Lazy` hands its one cached value to every thread that reads it: for a value that is not
// Sendable, the `Lazy` is not Sendable, and a Sendable service cannot hold it.
struct Handler: Sendable {
  let counter: Lazy<Counter>
}
