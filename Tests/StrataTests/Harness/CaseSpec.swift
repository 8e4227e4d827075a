import Strata

// The vocabulary of a generated case: keys, registrations, operations. Plain values, printable.

/// A registration name as the generator chooses it.
enum NameSpec: Hashable, Sendable, CustomStringConvertible {
  case none
  case alpha
  case beta
  case other
  case index(Int)
  /// A `String?` variable holding a string.
  case text(String)
  /// A `String?` variable holding `nil`: the same as no name.
  case textNil

  /// The name as the model compares it: `textNil` is no name.
  var normalized: NameSpec { self == .textNil ? .none : self }

  var description: String {
    switch self {
    case .none: "-"
    case .alpha: ".alpha"
    case .beta: ".beta"
    case .other: "Other.alpha"
    case .index(let number): ".index(\(number))"
    case .text(let text): "\"\(text)\"?"
    case .textNil: "nil as String?"
    }
  }
}

/// The runtime arguments of a registration or resolve.
enum ArgumentSpec: Hashable, Sendable, CaseIterable, CustomStringConvertible {
  case none
  case int
  case string
  /// Two arguments, `Int, String`.
  case intString
  /// One tuple argument, `(Int, String)`.
  case tuple
  /// One `Void` argument.
  case void

  var description: String {
    switch self {
    case .none: "()"
    case .int: "(Int)"
    case .string: "(String)"
    case .intString: "(Int, String)"
    case .tuple: "((Int, String))"
    case .void: "(Void)"
    }
  }
}

/// A key: service type, name and argument types.
struct KeySpec: Hashable, Sendable, CustomStringConvertible {
  var type: Int
  var name: NameSpec = .none
  var arguments: ArgumentSpec = .none

  /// The key as the model compares it.
  var normalized: KeySpec { KeySpec(type: type, name: name.normalized, arguments: arguments) }

  var description: String {
    let typeName = type == ServicePool.valueTypeIndex ? "Value" : "S\(type)"
    let named = name == .none ? "" : "[\(name)]"
    return typeName + named + (arguments == .none ? "" : arguments.description)
  }
}

/// The tag of a scope the generator makes.
enum TagSpec: Hashable, Sendable, CaseIterable, CustomStringConvertible {
  case root
  case session
  case request
  case tenant

  var tag: ScopeTag {
    switch self {
    case .root: .root
    case .session: .session
    case .request: .request
    case .tenant: .tenant
    }
  }

  var description: String {
    switch self {
    case .root: ".root"
    case .session: ".session"
    case .request: ".request"
    case .tenant: ".tenant"
    }
  }
}

/// A lifetime as the generator chooses it.
enum LifetimeSpec: Hashable, Sendable, CustomStringConvertible {
  case transient
  case singleton
  case eagerSingleton
  case weak
  case graph
  case scoped(TagSpec?)

  var lifetime: Lifetime {
    switch self {
    case .transient: .transient
    case .singleton: .singleton
    case .eagerSingleton: .eagerSingleton
    case .weak: .weak
    case .graph: .graph
    case .scoped(nil): .scoped
    case .scoped(let tag?): .scoped(tag.tag)
    }
  }

  /// Whether the container keeps the instance beyond one resolve (no runtime arguments allowed).
  var isShared: Bool {
    switch self {
    case .transient, .graph: false
    default: true
    }
  }

  var isSingleton: Bool { self == .singleton || self == .eagerSingleton }

  var description: String {
    switch self {
    case .transient: "transient"
    case .singleton: "singleton"
    case .eagerSingleton: "eagerSingleton"
    case .weak: "weak"
    case .graph: "graph"
    case .scoped(nil): "scoped"
    case .scoped(let tag?): "scoped(\(tag))"
    }
  }
}

/// How a factory reaches one dependency.
enum AccessSpec: Hashable, Sendable {
  /// `resolver.resolve(…)`.
  case direct
  /// `resolver.lazy(…).value`, read inside the factory (unnamed keys without arguments only).
  case lazy
  /// `resolver.provider(…).get()`, inside the factory (unnamed keys without arguments only).
  case provider
  /// `Scope.current?.resolve(…)`, inside the factory.
  case ambient
}

/// One dependency of a generated factory.
struct DependencySpec: Hashable, Sendable, CustomStringConvertible {
  var key: KeySpec
  var access: AccessSpec = .direct

  var description: String { access == .direct ? "\(key)" : "\(access):\(key)" }
}

/// One generated registration.
struct RegistrationSpec: Hashable, Sendable, CustomStringConvertible {
  /// Unique within a case; every instance the registration makes records it.
  var id: Int
  var key: KeySpec
  var lifetime: LifetimeSpec
  var dependencies: [DependencySpec] = []
  /// The factory throws after resolving its dependencies.
  var fails = false
  /// Registered with `register(_:name:instance:)`: a ready-made instance, never disposed.
  var isInstance = false

  var description: String {
    if isInstance { return "r\(id) \(key) = instance" }
    let dependencies =
      self.dependencies.isEmpty ? "" : " <- " + self.dependencies.map(\.description).joined(separator: ", ")
    return "r\(id) \(key) \(lifetime)\(fails ? " FAILS" : "")" + dependencies
  }
}

/// How a top-level operation reaches its service.
enum RouteSpec: Hashable, Sendable, CustomStringConvertible {
  case resolve
  /// `scope.lazy(T.self)`, read `reads` times.
  case lazy(reads: Int)
  /// `scope.provider(T.self)`, called twice.
  case provider
  /// `@Injected` declared while the scope is `Scope.current`, then `$value.resolve()`.
  case injected
  /// `Scope.current?.resolve(T.self)` while the scope is current.
  case ambient
  case resolveIfRegistered

  var description: String {
    switch self {
    case .resolve: "resolve"
    case .lazy(let reads): "lazy×\(reads)"
    case .provider: "provider×2"
    case .injected: "@Injected"
    case .ambient: "Scope.current"
    case .resolveIfRegistered: "resolveIfRegistered"
    }
  }
}

/// One step of a case. Scopes are numbered in the order they were made (0 is the container);
/// a step names one by an index taken modulo the number of scopes that exist when it runs.
enum OperationSpec: Hashable, Sendable, CustomStringConvertible {
  case register(scope: Int, [RegistrationSpec])
  case makeScope(parent: Int, TagSpec, [RegistrationSpec]?)
  case resolve(scope: Int, KeySpec, RouteSpec, keep: Bool)
  case resolveAll(scope: Int, type: Int, NameSpec)
  case close(scope: Int)
  /// Drops every instance (and `Lazy`) the harness kept, so that `weak` instances can go.
  case releaseHeld

  var description: String {
    switch self {
    case .register(let scope, let batch):
      "register into #\(scope):\n" + batch.map { "      \($0)" }.joined(separator: "\n")
    case .makeScope(let parent, let tag, nil): "makeScope(\(tag)) under #\(parent)"
    case .makeScope(let parent, let tag, let batch?):
      "makeScope(\(tag)) under #\(parent) with:\n" + batch.map { "      \($0)" }.joined(separator: "\n")
    case .resolve(let scope, let key, let route, let keep):
      "\(route) \(key) from #\(scope)\(keep ? " (kept)" : "")"
    case .resolveAll(let scope, let type, let name):
      "resolveAll \(KeySpec(type: type, name: name)) from #\(scope)"
    case .close(let scope): "close #\(scope)"
    case .releaseHeld: "release kept instances"
    }
  }
}

/// A whole generated case.
struct CaseSpec: Hashable, Sendable, CustomStringConvertible {
  var seed: UInt64
  var operations: [OperationSpec]

  var description: String {
    "seed \(seed):\n"
      + operations.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
  }
}
