/// The services the workloads resolve: small final classes, so that every variant really
/// allocates and initializes an object.

import Strata
import Synchronization

/// A service without dependencies (`transient`, `named`, `registry-10k`, `concurrent-transient`).
final class Foo: Sendable {
  let value: Int

  init() {
    value = 42
  }
}

/// The singleton of the `singleton` workload.
final class Bar: Sendable {
  let value: Int

  init() {
    value = 7
  }
}

/// The root of the `graph` workload: `GraphA(GraphB(GraphC), GraphD)`.
final class GraphA: Sendable {
  let b: GraphB
  let d: GraphD

  init(b: GraphB, d: GraphD) {
    self.b = b
    self.d = d
  }
}

/// The middle of the `graph` workload.
final class GraphB: Sendable {
  let c: GraphC

  init(c: GraphC) {
    self.c = c
  }
}

/// A leaf of the `graph` workload.
final class GraphC: Sendable {
  let value = 3
}

/// A leaf of the `graph` workload.
final class GraphD: Sendable {
  let value = 4
}

/// The service of the `arguments` workload, made from two runtime arguments.
final class Greeting: Sendable {
  let name: String
  let times: Int

  init(_ name: String, _ times: Int) {
    self.name = name
    self.times = times
  }
}

/// The connection pool of the `server-request` workloads: a singleton.
final class Pool: Sendable {
  let size = 16
}

/// The per-request state of the `server-request` workloads: request-scoped.
final class RequestContext: Sendable {
  let requestID = 11
}

/// The request's transaction in the `server-request` workloads: request-scoped, disposed when the
/// request's scope closes (by hand in the baselines).
final class Transaction: Disposable, Sendable {
  private let finished = Atomic<Bool>(false)

  var isFinished: Bool { finished.load(ordering: .relaxed) }

  func dispose() { finished.store(true, ordering: .relaxed) }
}

/// The handler of the `server-request` workloads: transient, auto-wired with its initializer.
final class Handler: Sendable {
  let context: RequestContext
  let tx: Transaction
  let pool: Pool

  init(context: RequestContext, tx: Transaction, pool: Pool) {
    self.context = context
    self.tx = tx
    self.pool = pool
  }
}

/// The type nobody registers (`failed-resolve`).
final class Missing: Sendable {}

/// The names of the `named` workload.
enum Channel: Hashable, Sendable {
  case primary
  case secondary
}

/// The service registered 10,000 times under `Int` names by `registry-10k --registry-fill names`.
final class FillerService: Sendable {}

/// A family of distinct types for `registry-10k`: `FillerBit1<FillerBit0<…<FillerLeaf>>>`, one
/// per number, made at run time from the number's bits (``fillerType(_:)``).
protocol Filler: Sendable {
  init()
}

/// The innermost filler type.
struct FillerLeaf: Filler {}

/// A 0 bit of a filler type's number.
struct FillerBit0<Next: Filler>: Filler {}

/// A 1 bit of a filler type's number.
struct FillerBit1<Next: Filler>: Filler {}

/// How many bits filler type numbers have: 2^14 = 16,384 distinct types.
let fillerBits = 14

/// The distinct filler type for `number` (0 ..< 2^``fillerBits``).
func fillerType(_ number: Int) -> any Filler.Type {
  var type: any Filler.Type = FillerLeaf.self
  for bit in 0..<fillerBits {
    type = wrap(type, bit: (number >> bit) & 1)
  }
  return type
}

private func wrap<Next: Filler>(_ next: Next.Type, bit: Int) -> any Filler.Type {
  bit == 0 ? FillerBit0<Next>.self : FillerBit1<Next>.self
}
