import Strata

// The one place where generated specs turn into Strata calls on concrete service types.

/// Everything the driver does with one service type, built generically once per type so that the
/// rest of the harness can work with type indices.
struct ServiceOps: Sendable {
  let isDisposable: Bool
  let register: @Sendable (Registrar, RegistrationSpec, Recorder) -> Void
  let resolve: @Sendable (Scope, KeySpec) throws -> any HarnessService
  let resolveInFactory: @Sendable (borrowing Resolver, DependencySpec) throws -> any HarnessService
  let resolveAll: @Sendable (Scope, NameSpec) throws -> [any HarnessService]
  let resolveIfRegistered: @Sendable (Scope, NameSpec) throws -> (any HarnessService)?
  /// A `Lazy` made by the scope (kept as the object) and a reader of its value.
  let lazy: @Sendable (Scope) -> (AnyObject, () throws -> any HarnessService)
  let provider: @Sendable (Scope) -> () throws -> any HarnessService
  /// In a new `.request` child with the given name, made current by `withScope`, declares an `@Injected` property and
  /// resolves it.
  let injected: @Sendable (Scope, String) throws -> (any HarnessService, String)
  /// In a new `.request` child with the given name, made current by `withScope`, resolves through `Scope.current`.
  let ambient: @Sendable (Scope, String) throws -> (any HarnessService, String)

  init<Service: HarnessService>(_: Service.Type) {
    typealias Glue = ServiceGlue<Service>
    isDisposable = Service.isDisposable
    register = { registrar, spec, recorder in Glue.register(registrar, spec, recorder) }
    resolve = { scope, key in try Glue.resolve(scope, key) }
    resolveInFactory = { resolver, dependency in try Glue.resolveInFactory(resolver, dependency) }
    resolveAll = { scope, name in try Glue.resolveAll(scope, name) }
    resolveIfRegistered = { scope, name in try Glue.resolveIfRegistered(scope, name) }
    lazy = { scope in
      let lazy = scope.lazy(Service.self)
      return (lazy, { try lazy.value })
    }
    provider = { scope in
      let provider = scope.provider(Service.self)
      return { try provider.get() }
    }
    injected = { scope, name in
      try scope.withScope(.request, name: name) { _ in
        let injected = Injected<Service>()
        return (try injected.projectedValue.resolve(), name)
      }
    }
    ambient = { scope, name in
      try scope.withScope(.request, name: name) { _ in
        guard let current = Scope.current else { throw HarnessFactoryFailure() }
        return (try current.resolve(Service.self), name)
      }
    }
  }
}

/// The service pool: eight disposable classes and one value type.
enum ServicePool {
  static let types: [ServiceOps] = [
    ServiceOps(Svc<Tag0>.self), ServiceOps(Svc<Tag1>.self), ServiceOps(Svc<Tag2>.self),
    ServiceOps(Svc<Tag3>.self), ServiceOps(Svc<Tag4>.self), ServiceOps(Svc<Tag5>.self),
    ServiceOps(Svc<Tag6>.self), ServiceOps(Svc<Tag7>.self), ServiceOps(ValueSvc.self),
  ]
  static var count: Int { types.count }
  static var valueTypeIndex: Int { ValueSvc.typeIndex }
}

/// The generic calls for one service type: a switch per name and argument list, written once.
enum ServiceGlue<Service: HarnessService> {
  static func register(_ registrar: Registrar, _ spec: RegistrationSpec, _ recorder: Recorder) {
    let name = boxedName(spec.key.name)
    if spec.isInstance {
      let info = InstanceInfo(
        registration: spec.id, type: Service.typeIndex, dependencies: [], factoryScope: nil)
      registrar.register(
        Service.self, name: name, instance: Service(id: recorder.create(info), recorder: recorder))
      return
    }
    let lifetime = spec.lifetime.lifetime
    switch spec.key.arguments {
    case .none:
      registrar.register(Service.self, name: name, lifetime: lifetime) { resolver in
        try make(resolver, spec, recorder)
      }
    case .int:
      registrar.register(Service.self, name: name, lifetime: lifetime) {
        (resolver: borrowing Resolver, _: Int) in try make(resolver, spec, recorder)
      }
    case .string:
      registrar.register(Service.self, name: name, lifetime: lifetime) {
        (resolver: borrowing Resolver, _: String) in try make(resolver, spec, recorder)
      }
    case .intString:
      registrar.register(Service.self, name: name, lifetime: lifetime) {
        (resolver: borrowing Resolver, _: Int, _: String) in try make(resolver, spec, recorder)
      }
    case .tuple:
      registrar.register(Service.self, name: name, lifetime: lifetime) {
        (resolver: borrowing Resolver, _: (Int, String)) in try make(resolver, spec, recorder)
      }
    case .void:
      registrar.register(Service.self, name: name, lifetime: lifetime) {
        (resolver: borrowing Resolver, _: Void) in try make(resolver, spec, recorder)
      }
    }
  }

  /// The name as `register(_:name:…)` receives it; text names come from a `String?` variable.
  static func boxedName(_ name: NameSpec) -> (any Hashable & Sendable)? {
    switch name {
    case .none: return nil
    case .alpha: return HarnessName.alpha
    case .beta: return HarnessName.beta
    case .other: return OtherName.alpha
    case .index(let number): return HarnessName.index(number)
    case .text(let text):
      let variable: String? = text
      return variable
    case .textNil:
      let variable: String? = nil
      return variable
    }
  }

  /// A generated factory: resolves the declared dependencies, keeping them until it is done,
  /// then throws if the registration is marked failing, or records and returns a new instance.
  static func make(
    _ resolver: borrowing Resolver, _ spec: RegistrationSpec, _ recorder: Recorder
  ) throws -> Service {
    var held: [any HarnessService] = []
    for dependency in spec.dependencies {
      held.append(try ServicePool.types[dependency.key.type].resolveInFactory(resolver, dependency))
    }
    if spec.fails { throw HarnessFactoryFailure() }
    let info = InstanceInfo(
      registration: spec.id, type: Service.typeIndex, dependencies: held.map(\.id),
      factoryScope: resolver.currentScope.name ?? "root")
    let id = recorder.create(info)
    return withExtendedLifetime(held) { Service(id: id, recorder: recorder) }
  }

  static func resolveInFactory(_ resolver: borrowing Resolver, _ dependency: DependencySpec) throws -> Service
  {
    switch dependency.access {
    case .direct: return try resolve(resolver, dependency.key)
    case .lazy: return try resolver.lazy(Service.self).value
    case .provider: return try resolver.provider(Service.self).get()
    case .ambient:
      guard let current = Scope.current else { throw HarnessFactoryFailure() }
      return try resolve(current, dependency.key)
    }
  }

  static func resolve(_ scope: Scope, _ key: KeySpec) throws -> Service {
    let arguments = key.arguments
    switch key.name {
    case .none:
      switch arguments {
      case .none: return try scope.resolve(Service.self)
      case .int: return try scope.resolve(Service.self, arguments: 7)
      case .string: return try scope.resolve(Service.self, arguments: "s")
      case .intString: return try scope.resolve(Service.self, arguments: 7, "s")
      case .tuple: return try scope.resolve(Service.self, arguments: (7, "s"))
      case .void: return try scope.resolve(Service.self, arguments: ())
      }
    case .alpha: return try resolve(scope, HarnessName.alpha, arguments)
    case .beta: return try resolve(scope, HarnessName.beta, arguments)
    case .other: return try resolve(scope, OtherName.alpha, arguments)
    case .index(let number): return try resolve(scope, HarnessName.index(number), arguments)
    case .text(let text):
      let variable: String? = text
      return try resolve(scope, variable, arguments)
    case .textNil:
      let variable: String? = nil
      return try resolve(scope, variable, arguments)
    }
  }

  static func resolve<Name: Hashable & Sendable>(
    _ scope: Scope, _ name: Name?, _ arguments: ArgumentSpec
  ) throws -> Service {
    switch arguments {
    case .none: try scope.resolve(Service.self, name: name)
    case .int: try scope.resolve(Service.self, name: name, arguments: 7)
    case .string: try scope.resolve(Service.self, name: name, arguments: "s")
    case .intString: try scope.resolve(Service.self, name: name, arguments: 7, "s")
    case .tuple: try scope.resolve(Service.self, name: name, arguments: (7, "s"))
    case .void: try scope.resolve(Service.self, name: name, arguments: ())
    }
  }

  static func resolve(_ resolver: borrowing Resolver, _ key: KeySpec) throws -> Service {
    let arguments = key.arguments
    switch key.name {
    case .none:
      switch arguments {
      case .none: return try resolver.resolve(Service.self)
      case .int: return try resolver.resolve(Service.self, arguments: 7)
      case .string: return try resolver.resolve(Service.self, arguments: "s")
      case .intString: return try resolver.resolve(Service.self, arguments: 7, "s")
      case .tuple: return try resolver.resolve(Service.self, arguments: (7, "s"))
      case .void: return try resolver.resolve(Service.self, arguments: ())
      }
    case .alpha: return try resolve(resolver, HarnessName.alpha, arguments)
    case .beta: return try resolve(resolver, HarnessName.beta, arguments)
    case .other: return try resolve(resolver, OtherName.alpha, arguments)
    case .index(let number): return try resolve(resolver, HarnessName.index(number), arguments)
    case .text(let text):
      let variable: String? = text
      return try resolve(resolver, variable, arguments)
    case .textNil:
      let variable: String? = nil
      return try resolve(resolver, variable, arguments)
    }
  }

  static func resolve<Name: Hashable & Sendable>(
    _ resolver: borrowing Resolver, _ name: Name?, _ arguments: ArgumentSpec
  ) throws -> Service {
    switch arguments {
    case .none: try resolver.resolve(Service.self, name: name)
    case .int: try resolver.resolve(Service.self, name: name, arguments: 7)
    case .string: try resolver.resolve(Service.self, name: name, arguments: "s")
    case .intString: try resolver.resolve(Service.self, name: name, arguments: 7, "s")
    case .tuple: try resolver.resolve(Service.self, name: name, arguments: (7, "s"))
    case .void: try resolver.resolve(Service.self, name: name, arguments: ())
    }
  }

  static func resolveAll(_ scope: Scope, _ name: NameSpec) throws -> [Service] {
    switch name {
    case .none: try scope.resolveAll(Service.self)
    case .alpha: try scope.resolveAll(Service.self, name: HarnessName.alpha)
    case .beta: try scope.resolveAll(Service.self, name: HarnessName.beta)
    case .other: try scope.resolveAll(Service.self, name: OtherName.alpha)
    case .index(let number): try scope.resolveAll(Service.self, name: HarnessName.index(number))
    case .text(let text): try scope.resolveAll(Service.self, name: Optional(text))
    case .textNil: try scope.resolveAll(Service.self, name: String?.none)
    }
  }

  static func resolveIfRegistered(_ scope: Scope, _ name: NameSpec) throws -> Service? {
    switch name {
    case .none: try scope.resolveIfRegistered(Service.self)
    case .alpha: try scope.resolveIfRegistered(Service.self, name: HarnessName.alpha)
    case .beta: try scope.resolveIfRegistered(Service.self, name: HarnessName.beta)
    case .other: try scope.resolveIfRegistered(Service.self, name: OtherName.alpha)
    case .index(let number): try scope.resolveIfRegistered(Service.self, name: HarnessName.index(number))
    case .text(let text): try scope.resolveIfRegistered(Service.self, name: Optional(text))
    case .textNil: try scope.resolveIfRegistered(Service.self, name: String?.none)
    }
  }
}
