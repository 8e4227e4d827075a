import Strata

/// Runs a case's operations against Strata and reports each step in the model's words.
final class StrataDriver {
  let recorder = Recorder()
  /// The scopes operations can name, in creation order; the container first.
  private(set) var scopes: [Scope] = [Container()]
  /// Instances and `Lazy` values the harness keeps alive.
  private var held: [Any] = []
  private var disposalsSeen = 0
  /// The name of the `withScope` child the last `@Injected` or `Scope.current` route resolved
  /// from.
  private(set) var lastAmbientChild: String?
  /// Every scope's parent, by the unique names the driver gives scopes (the container: "root").
  private(set) var parents: [String: String] = [:]
  private var scopesNamed = 0

  /// A new unique scope name, recorded as a child of `parent`.
  private func nameChild(of parent: Scope) -> String {
    scopesNamed += 1
    let name = "s\(scopesNamed)"
    parents[name] = parent.name ?? "root"
    return name
  }
  let features: HarnessFeatures

  init(features: HarnessFeatures) {
    self.features = features
  }

  /// Runs one operation.
  func step(_ operation: OperationSpec) -> StepResult {
    lastAmbientChild = nil
    let outcome = Self.capture { try run(operation) }
    let disposals = recorder.disposals
    defer { disposalsSeen = disposals.count }
    return StepResult(outcome: outcome, disposals: Array(disposals[disposalsSeen...]))
  }

  /// Closes the container, ignoring errors: the end of a case that stopped early.
  func tearDown() {
    try? scopes[0].close()
  }

  private func scope(_ index: Int) -> Scope { scopes[index % scopes.count] }

  private static func capture(_ body: () throws -> StepOutcome) -> StepOutcome {
    do {
      return try body()
    } catch let error as ResolutionError {
      return .failure(error.code.rawValue)
    } catch {
      return .failure("\(type(of: error)): \(error)")
    }
  }

  private func run(_ operation: OperationSpec) throws -> StepOutcome {
    switch operation {
    case .register(let index, let batch):
      let recorder = self.recorder
      try scope(index).register { registrar in
        for registration in batch {
          ServicePool.types[registration.key.type].register(registrar, registration, recorder)
        }
      }
      return .done
    case .makeScope(let parent, let tag, nil):
      let parent = scope(parent)
      scopes.append(try parent.makeScope(tag.tag, name: nameChild(of: parent)))
      return .done
    case .makeScope(let parent, let tag, let batch?):
      let recorder = self.recorder
      let parent = scope(parent)
      let child = try parent.makeScope(tag.tag, name: nameChild(of: parent)) { registrar in
        for registration in batch {
          ServicePool.types[registration.key.type].register(registrar, registration, recorder)
        }
      }
      scopes.append(child)
      return .done
    case .resolve(let index, let key, let route, let keep):
      return try resolve(key, from: scope(index), route: route, keep: keep)
    case .resolveAll(let index, let type, let name):
      let all = try ServicePool.types[type].resolveAll(scope(index), name)
      return .many(all.map { .instance($0.id) })
    case .close(let index):
      if !features.strataClosesChildrenNewestMadeFirst { try closeDescendants(of: scope(index)) }
      try scope(index).close()
      return .done
    case .releaseHeld:
      held = []
      return .done
    }
  }

  /// Closes the open descendants of `scope` that operations can name, each scope's children
  /// newest made first (see ``HarnessFeatures/strataClosesChildrenNewestMadeFirst``).
  private func closeDescendants(of scope: Scope) throws {
    for child in scopes.reversed() where child.parent === scope {
      try closeDescendants(of: child)
      try child.close()
    }
  }

  private func resolve(_ key: KeySpec, from scope: Scope, route: RouteSpec, keep: Bool) throws -> StepOutcome
  {
    let service = ServicePool.types[key.type]
    switch route {
    case .resolve:
      return keeping(try service.resolve(scope, key), keep)
    case .lazy(let reads):
      let (lazy, read) = service.lazy(scope)
      if keep { held.append(lazy) }
      return .many((0..<reads).map { _ in Self.capture { .instance(try read().id) } })
    case .provider:
      let get = service.provider(scope)
      return .many((0..<2).map { _ in Self.capture { keeping(try get(), keep) } })
    case .injected:
      let (instance, child) = try service.injected(scope, nameChild(of: scope))
      lastAmbientChild = child
      return keeping(instance, keep)
    case .ambient:
      let (instance, child) = try service.ambient(scope, nameChild(of: scope))
      lastAmbientChild = child
      return keeping(instance, keep)
    case .resolveIfRegistered:
      guard let found = try service.resolveIfRegistered(scope, key.name) else { return .absent }
      return keeping(found, keep)
    }
  }

  private func keeping(_ instance: any HarnessService, _ keep: Bool) -> StepOutcome {
    if keep { held.append(instance) }
    return .instance(instance.id)
  }

  /// The shape of instance `id`, from the recorder.
  func shape(of id: Int) -> InstanceShape? {
    recorder.info(id).map {
      InstanceShape(registration: $0.registration, type: $0.type, dependencies: $0.dependencies)
    }
  }
}
