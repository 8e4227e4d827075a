import Foundation
import Strata
import StrataModules

// A seeded random service graph for the differential tests of validation: keys, lifetimes,
// declared dependencies (direct and deferred), spread over modules of the container and of a
// session. Every factory resolves exactly what it declares.

/// A deterministic generator (a 64-bit LCG), so that every seed builds the same graph.
struct SeededRandom {
  private var state: UInt64

  init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }

  mutating func next(_ bound: Int) -> Int {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Int((state >> 33) % UInt64(bound))
  }

  mutating func chance(_ percent: Int) -> Bool { next(100) < percent }

  mutating func shuffled<T>(_ items: [T]) -> [T] {
    var items = items
    for index in items.indices.reversed() where index > 0 { items.swapAt(index, next(index + 1)) }
    return items
  }
}

// Distinct service types: a `Lazy` or `Provider` resolves unnamed keys only, so deferred edges
// lead to these. Named keys of `Slot<Named>` give the graph more keys.
enum P0 {}
enum P1 {}
enum P2 {}
enum P3 {}
enum P4 {}
enum P5 {}
enum Named {}

final class Slot<Tag>: Sendable {
  let info: NodeInfo
  init(_ info: NodeInfo) { self.info = info }
}

/// A deferred dependency an instance holds, and how to read it.
struct HeldDeferred: Sendable {
  let target: Int
  let read: @Sendable () throws -> NodeInfo
}

/// What an instance was made from: its key, lifetime, the instances it resolved while it was made,
/// its deferred dependencies, and the scope chain that owned it while its factory ran.
final class NodeInfo: Sendable {
  let key: Int
  let lifetime: Lifetime
  let direct: [NodeInfo]
  let deferred: [HeldDeferred]
  /// `Scope.current` and its ancestors while the factory ran (outermost last).
  let ownerChain: [ObjectIdentifier]
  /// Whether it was made past an error of its own resolve, or from such an instance.
  let isTainted: Bool

  init(
    key: Int, lifetime: Lifetime, direct: [NodeInfo], deferred: [HeldDeferred],
    ownerChain: [ObjectIdentifier],
    isTainted: Bool
  ) {
    self.isTainted = isTainted
    self.key = key
    self.lifetime = lifetime
    self.direct = direct
    self.deferred = deferred
    self.ownerChain = ownerChain
  }

  var isShared: Bool { lifetime != .transient && lifetime != .graph }
}

typealias Make = @Sendable (borrowing Resolver) throws -> NodeInfo

/// The operations on one key, whatever its type.
struct KeyOps: Sendable {
  let resolve: @Sendable (borrowing Resolver) throws -> NodeInfo
  let resolveFrom: @Sendable (Scope) throws -> NodeInfo
  let resolveAllFrom: @Sendable (Scope) throws -> [NodeInfo]
  /// A `Lazy` (false) or `Provider` (true) of the key, made now, and how to read it.
  let deferred: (@Sendable (borrowing Resolver, Bool) -> @Sendable () throws -> NodeInfo)?
  let dependency: @Sendable (_ deferred: Bool, _ asParameterType: Bool) -> ServiceDependency
  let register: @Sendable (Registrar, Lifetime, [ServiceDependency]?, @escaping Make) -> Void
  let key: ServiceKey
  var description: String { "\(key)" }

  static func unnamed<Tag>(_: Tag.Type) -> KeyOps {
    KeyOps(
      resolve: { try $0.resolve(Slot<Tag>.self).info },
      resolveFrom: { try $0.resolve(Slot<Tag>.self).info },
      resolveAllFrom: { try $0.resolveAll(Slot<Tag>.self).map(\.info) },
      deferred: { resolver, isProvider in
        if isProvider {
          let provider = resolver.provider(Slot<Tag>.self)
          return { try provider().info }
        }
        let lazy = resolver.lazy(Slot<Tag>.self)
        return { try lazy.value.info }
      },
      dependency: { deferred, asType in
        guard deferred else { return .service(Slot<Tag>.self) }
        return asType ? .service(Lazy<Slot<Tag>>.self) : .deferred(Slot<Tag>.self)
      },
      register: { registry, lifetime, dependencies, make in
        if let dependencies {
          registry.register(Slot<Tag>.self, lifetime: lifetime, dependsOn: dependencies) {
            try Slot(make($0))
          }
        } else {
          registry.register(Slot<Tag>.self, lifetime: lifetime) { try Slot(make($0)) }
        }
      },
      key: ServiceDependency.service(Slot<Tag>.self).key)
  }

  static func named(_ name: Int) -> KeyOps {
    KeyOps(
      resolve: { try $0.resolve(Slot<Named>.self, name: name).info },
      resolveFrom: { try $0.resolve(Slot<Named>.self, name: name).info },
      resolveAllFrom: { try $0.resolveAll(Slot<Named>.self, name: name).map(\.info) },
      deferred: nil,
      dependency: { _, _ in .service(Slot<Named>.self, name: name) },
      register: { registry, lifetime, dependencies, make in
        if let dependencies {
          registry.register(Slot<Named>.self, name: name, lifetime: lifetime, dependsOn: dependencies) {
            try Slot(make($0))
          }
        } else {
          registry.register(Slot<Named>.self, name: name, lifetime: lifetime) { try Slot(make($0)) }
        }
      },
      key: ServiceDependency.service(Slot<Named>.self, name: name).key)
  }

  /// Keys 0..<6 are the unnamed types, the rest named.
  static func forKey(_ key: Int) -> KeyOps {
    switch key {
    case 0: unnamed(P0.self)
    case 1: unnamed(P1.self)
    case 2: unnamed(P2.self)
    case 3: unnamed(P3.self)
    case 4: unnamed(P4.self)
    case 5: unnamed(P5.self)
    default: named(key)
    }
  }
}

/// One resolve error a factory met, or a top-level resolve or a deferred read threw.
struct MetError: Sendable {
  let code: ResolutionError.Code
  let key: ServiceKey?
  let path: [ServiceKey]
  let text: String
}

/// The errors met and the factory runs, shared by every factory of one graph.
final class GraphLog: @unchecked Sendable {
  /// Whether factories carry on past an error, to meet every problem of the graph; if not, a
  /// resolve fails at its first, with its whole path.
  let collects: Bool
  private let lock = NSLock()

  init(collects: Bool = true) { self.collects = collects }

  private var errors: [MetError] = []
  private var runCount = 0

  func tick() { lock.withLock { runCount += 1 } }
  var runs: Int { lock.withLock { runCount } }
  /// Whether so many factories ran that a walk stops at the first cycle: then some problems
  /// behind a cycle may not have been met.
  var isOverBudget: Bool { runs > 1000 }

  func record(_ error: any Error) {
    let met: MetError
    if let error = error as? ResolutionError {
      met = MetError(code: error.code, key: error.key, path: error.path, text: "\(error)")
    } else {
      met = MetError(code: .factoryFailed, key: nil, path: [], text: "\(error)")
    }
    lock.withLock { errors.append(met) }
  }

  var all: [MetError] { lock.withLock { errors } }
}

/// One registration of the graph.
struct Spec: Sendable {
  struct Edge: Sendable {
    let target: Int
    let isDeferred: Bool
    let isProvider: Bool
    /// Declared as `.service(Lazy<T>.self)` rather than `.deferred(T.self)`.
    let asParameterType: Bool
  }

  let key: Int
  let lifetime: Lifetime
  let edges: [Edge]
  /// Without `dependsOn:`: unchecked (such a registration gets no edges).
  let declares: Bool

  func register(in registry: Registrar, log: GraphLog) {
    let ops = KeyOps.forKey(key)
    let direct = edges.filter { !$0.isDeferred }.map { KeyOps.forKey($0.target) }
    let deferred = edges.filter(\.isDeferred).map { ($0, KeyOps.forKey($0.target)) }
    let key = key
    let lifetime = lifetime
    let make: Make = { resolver in
      log.tick()
      var made: [NodeInfo] = []
      var cycle: ResolutionError?
      var isTainted = false
      for dependency in direct {
        do {
          made.append(try dependency.resolve(resolver))
        } catch  where !log.collects {
          throw error
        } catch let error as ResolutionError where error.code == .cycle || error.code == .depthLimitExceeded {
          // Thrown once the other dependencies are tried, so that their problems are met too;
          // past a budget at once, as failing shared instances are made again on every path.
          if log.isOverBudget { throw error }
          cycle = cycle ?? error
        } catch {
          log.record(error)  // collect every problem of the graph, not only the first
          isTainted = true
        }
      }
      if let cycle { throw cycle }
      let held = deferred.compactMap { edge, target in
        target.deferred.map { HeldDeferred(target: edge.target, read: $0(resolver, edge.isProvider)) }
      }
      var chain: [ObjectIdentifier] = []
      var scope = Scope.current
      while let current = scope {
        chain.append(ObjectIdentifier(current))
        scope = current.parent
      }
      return NodeInfo(
        key: key, lifetime: lifetime, direct: made, deferred: held, ownerChain: chain,
        isTainted: isTainted || made.contains(where: \.isTainted))
    }
    let declared = edges.map { KeyOps.forKey($0.target).dependency($0.isDeferred, $0.asParameterType) }
    ops.register(registry, lifetime, declares ? declared : nil, make)
  }
}

/// A module of the generated graph, told apart by its number.
struct GraphModule: Module {
  let number: Int
  let specs: [Spec]
  let required: [GraphModule]
  let log: GraphLog
  /// Named keys registered only with a runtime argument: a dependency on them without one is an
  /// `argumentMismatch`.
  var argumentKeys: [Int] = []

  var moduleID: ModuleID { ModuleID(Self.self, number) }
  var requires: [any Module] { required }

  func register(in registry: Registrar) {
    for spec in specs { spec.register(in: registry, log: log) }
    for key in argumentKeys {
      registry.register(Slot<Named>.self, name: key, dependsOn: []) { (_, argument: Int) in
        log.tick()
        return Slot(
          NodeInfo(
            key: argument, lifetime: .transient, direct: [], deferred: [], ownerChain: [], isTainted: false))
      }
    }
  }
}
