// The reference model of Strata's semantics: plain dictionaries and arrays, one rule per line.

/// A resolution error as the model predicts it.
struct ModelError: Error {
  let code: String
  /// A second code the decisions accept as well.
  var alternative: String? = nil
}

/// The reference model: which registration a lookup finds, which instance a resolve returns,
/// which error it throws, and what closing a scope disposes, in which order.
final class ReferenceModel {
  /// A shared instance's state: being made (asking again is a cycle) or made.
  enum Slot: Equatable {
    case creating
    case ready(Int)
  }

  /// One node of the scope tree.
  final class ModelScope {
    let parent: Int?
    let tag: TagSpec
    /// Children in creation order.
    var children: [Int] = []
    /// Registrations in registration order (across batches).
    var registrations: [RegistrationSpec] = []
    /// Set when `close()` starts; the scope and its descendants are closed from then on.
    var closed = false
    /// Disposable instances this scope owns, in creation order.
    var owned: [Int] = []
    /// The scoped instances this scope holds, by registration.
    var scoped: [Int: Slot] = [:]

    init(parent: Int?, tag: TagSpec) {
      self.parent = parent
      self.tag = tag
    }
  }

  /// Where a resolve runs: the scope lookups start from, the shared registration being built
  /// (whose lifetime a scoped dependency must not be shorter than), the `graph` cache, and the
  /// scope the top-level resolve started in.
  struct Context {
    var scope: Int
    var captor: RegistrationSpec?
    var graph: Int
    var top: Int
  }

  /// A transient factory running in a context: meeting the same one again never terminates.
  struct Frame: Equatable {
    let registration: Int
    let scope: Int
    let captor: Int?
    let graph: Int
  }

  let features: HarnessFeatures
  /// Every scope ever made, the container first.
  private(set) var allScopes = [ModelScope(parent: nil, tag: .root)]
  /// The scopes operations can name, in creation order (a failed `makeScope` adds none).
  private(set) var visible = [0]
  /// Every instance made, numbered from 1.
  private(set) var instances: [InstanceShape] = []
  private var singletons: [Int: Slot] = [:]
  private var weakInstances: [Int: Int] = [:]
  private var weakCreating: Set<Int> = []
  private var graphs: [[Int: Slot]] = []
  private var frames: [Frame] = []
  /// Ready-made instances of `register(instance:)` registrations.
  private var readyMade: [Int: Int] = [:]
  /// Instances the harness keeps (so `weak` instances stay alive).
  private var held: [Int] = []
  /// Instances alive while factories or a `resolveAll` run: the dependencies they resolved.
  private var localHeld: [Int] = []
  private var disposals: [Int] = []

  init(features: HarnessFeatures) {
    self.features = features
  }

  // MARK: Operations

  /// Runs one operation and reports what it did.
  func step(_ operation: OperationSpec) -> StepResult {
    let before = disposals.count
    let outcome: StepOutcome
    do {
      outcome = try run(operation)
    } catch let error as ModelError {
      outcome = .failure(error.code, alternative: error.alternative)
    } catch {
      outcome = .failure("model: \(error)")
    }
    return StepResult(outcome: outcome, disposals: Array(disposals[before...]))
  }

  private func visibleScope(_ index: Int) -> Int { visible[index % visible.count] }

  private func run(_ operation: OperationSpec) throws -> StepOutcome {
    switch operation {
    case .register(let scope, let batch):
      try register(batch, into: visibleScope(scope))
      return .done
    case .makeScope(let parent, let tag, let batch):
      let child = try makeScope(under: visibleScope(parent), tag: tag)
      if let batch {
        do {
          try register(batch, into: child)
        } catch {
          close(child)
          throw error
        }
      }
      visible.append(child)
      return .done
    case .resolve(let scope, let key, let route, let keep):
      return try resolve(key, from: visibleScope(scope), route: route, keep: keep)
    case .resolveAll(let scope, let type, let name):
      return try resolveAll(KeySpec(type: type, name: name), from: visibleScope(scope))
    case .close(let scope):
      if !features.strataClosesChildrenNewestMadeFirst { closeDescendants(of: visibleScope(scope)) }
      close(visibleScope(scope))
      return .done
    case .releaseHeld:
      held = []
      return .done
    }
  }

  private func makeScope(under parent: Int, tag: TagSpec) throws -> Int {
    if isClosed(parent) { throw ModelError(code: "scopeClosed") }
    allScopes.append(ModelScope(parent: parent, tag: tag))
    allScopes[parent].children.append(allScopes.count - 1)
    return allScopes.count - 1
  }

  /// A batch: every ready-made instance is made while the batch is built; an invalid
  /// registration rejects the whole batch; a closed scope takes none; then the batch is visible
  /// and its eager singletons are made in order.
  private func register(_ batch: [RegistrationSpec], into scope: Int) throws {
    for registration in batch where registration.isInstance {
      readyMade[registration.id] = make(
        InstanceShape(registration: registration.id, type: registration.key.type, dependencies: []))
    }
    for registration in batch where !registration.isInstance {
      if registration.key.arguments != .none && registration.lifetime.isShared {
        throw ModelError(code: "invalidRegistration")
      }
    }
    if isClosed(scope) { throw ModelError(code: "scopeClosed") }
    allScopes[scope].registrations += batch
    for registration in batch where registration.lifetime == .eagerSingleton && !registration.isInstance {
      _ = try singleton(registration, owner: scope, top: scope)
    }
  }

  /// Closing: mark closed, close the children newest first, then dispose what the scope owns,
  /// newest first. A closed scope closes again as a no-op.
  private func close(_ scope: Int) {
    let state = allScopes[scope]
    guard !state.closed else { return }
    state.closed = true
    for child in state.children.reversed() { close(child) }
    disposals += state.owned.reversed()
    state.owned = []
  }

  /// What the harness does before closing a scope when Strata's child order is left out: closes
  /// the open descendants itself, each scope's children newest made first.
  private func closeDescendants(of scope: Int) {
    for child in allScopes[scope].children.reversed() {
      closeDescendants(of: child)
      close(child)
    }
  }

  private func resolve(_ key: KeySpec, from scope: Int, route: RouteSpec, keep: Bool) throws -> StepOutcome {
    switch route {
    case .resolve:
      let id = try resolveTopLevel(key, from: scope)
      if keep { held.append(id) }
      return .instance(id)
    case .lazy(let reads):
      var cached: Int?
      var outcomes: [StepOutcome] = []
      for _ in 0..<reads {
        if let cached {
          outcomes.append(.instance(cached))
          continue
        }
        outcomes.append(
          capture {
            let id = try resolveTopLevel(key, from: scope)
            cached = id
            return .instance(id)
          })
      }
      if keep, let cached { held.append(cached) }
      return .many(outcomes)
    case .provider:
      var outcomes: [StepOutcome] = []
      for _ in 0..<2 {
        outcomes.append(
          capture {
            let id = try resolveTopLevel(key, from: scope)
            if keep { held.append(id) }
            return .instance(id)
          })
      }
      return .many(outcomes)
    case .injected, .ambient:
      // `withScope(.request)`: a new child, current while the body resolves from it, then closed.
      let child = try makeScope(under: scope, tag: .request)
      defer { close(child) }
      let id = try resolveTopLevel(key, from: child)
      if keep { held.append(id) }
      return .instance(id)
    case .resolveIfRegistered:
      if isClosed(scope) { throw ModelError(code: "scopeClosed") }
      guard lookup(key, from: scope) != nil else { return .absent }
      let id = try resolveTopLevel(key, from: scope)
      if keep { held.append(id) }
      return .instance(id)
    }
  }

  private func capture(_ body: () throws -> StepOutcome) -> StepOutcome {
    do {
      return try body()
    } catch let error as ModelError {
      return .failure(error.code, alternative: error.alternative)
    } catch {
      return .failure("model: \(error)")
    }
  }

  /// Every registration of the key, the root's first, each scope's in registration order, in
  /// one top-level resolve; results stay alive until it ends.
  private func resolveAll(_ key: KeySpec, from scope: Int) throws -> StepOutcome {
    if isClosed(scope) { throw ModelError(code: "scopeClosed") }
    let context = Context(scope: scope, captor: nil, graph: newGraph(), top: scope)
    let mark = localHeld.count
    defer { localHeld.removeSubrange(mark...) }
    var results: [StepOutcome] = []
    for owner in chain(from: scope).reversed() {
      for registration in allScopes[owner].registrations where registration.key.normalized == key.normalized {
        let id = try instance(of: registration, owner: owner, in: context)
        localHeld.append(id)
        results.append(.instance(id))
      }
    }
    return .many(results)
  }

  // MARK: Resolution

  private func resolveTopLevel(_ key: KeySpec, from scope: Int) throws -> Int {
    if isClosed(scope) { throw ModelError(code: "scopeClosed") }
    return try resolve(key, in: Context(scope: scope, captor: nil, graph: newGraph(), top: scope))
  }

  /// The nearest registration from the context's scope up, then its lifetime's instance.
  private func resolve(_ key: KeySpec, in context: Context) throws -> Int {
    guard let (registration, owner) = lookup(key, from: context.scope) else {
      throw ModelError(code: "notRegistered")
    }
    if allScopes[owner].closed { throw ModelError(code: "scopeClosed") }
    return try instance(of: registration, owner: owner, in: context)
  }

  private func instance(of registration: RegistrationSpec, owner: Int, in context: Context) throws -> Int {
    if registration.isInstance, let id = readyMade[registration.id] { return id }
    // A graph registration with runtime arguments is made for each resolve, as a transient is.
    let lifetime =
      registration.lifetime == .graph && registration.key.arguments != .none
      ? .transient : registration.lifetime
    switch lifetime {
    case .transient:
      let frame = Frame(
        registration: registration.id, scope: context.scope, captor: context.captor?.id, graph: context.graph)
      if frames.contains(frame) { throw ModelError(code: "cycle") }
      frames.append(frame)
      defer { frames.removeLast() }
      return try make(registration, in: context)
    case .singleton, .eagerSingleton:
      return try singleton(registration, owner: owner, top: context.top)
    case .weak:
      if let id = weakInstances[registration.id], held.contains(id) || localHeld.contains(id) { return id }
      if weakCreating.contains(registration.id) { throw ModelError(code: "cycle") }
      weakCreating.insert(registration.id)
      defer { weakCreating.remove(registration.id) }
      // A weak instance's dependencies come from the registering scope, as a singleton's do.
      let id = try make(
        registration, in: Context(scope: owner, captor: registration, graph: newGraph(), top: context.top))
      if registration.key.type == ServicePool.valueTypeIndex { throw ModelError(code: "invalidRegistration") }
      weakInstances[registration.id] = id
      return id
    case .graph:
      switch graphs[context.graph][registration.id] {
      case .ready(let id): return id
      case .creating: throw ModelError(code: "cycle")
      case nil:
        graphs[context.graph][registration.id] = .creating
        do {
          let id = try make(registration, in: context)
          graphs[context.graph][registration.id] = .ready(id)
          return id
        } catch {
          graphs[context.graph][registration.id] = nil
          throw error
        }
      }
    case .scoped(let tag):
      let scope = try owningScope(tag, in: context)
      switch allScopes[scope].scoped[registration.id] {
      case .ready(let id): return id
      case .creating: throw ModelError(code: "cycle")
      case nil:
        allScopes[scope].scoped[registration.id] = .creating
        do {
          // A scoped instance's dependencies come from the scope that owns it.
          let id = try make(
            registration, in: Context(scope: scope, captor: registration, graph: newGraph(), top: context.top)
          )
          allScopes[scope].scoped[registration.id] = .ready(id)
          if ServicePool.types[registration.key.type].isDisposable { allScopes[scope].owned.append(id) }
          return id
        } catch {
          allScopes[scope].scoped[registration.id] = nil
          throw error
        }
      }
    }
  }

  /// The scope that owns a `scoped` instance: the resolving scope (untagged), or the nearest
  /// enclosing scope with the tag. A shared instance being built may not capture one it outlives.
  private func owningScope(_ tag: TagSpec?, in context: Context) throws -> Int {
    guard let tag else {
      // The lifetime rules: a singleton or weak instance may not keep an untagged scoped one.
      if features.untaggedScopedUnderSingletonIsCaptive, let captor = context.captor,
        captor.lifetime.isSingleton || captor.lifetime == .weak
      {
        throw ModelError(code: "captiveDependency")
      }
      return context.scope
    }
    if let found = nearest(tag, from: context.scope) { return found }
    guard context.captor != nil else { throw ModelError(code: "noMatchingScope") }
    let noneAtTop = nearest(tag, from: context.top) == nil
    throw ModelError(code: "captiveDependency", alternative: noneAtTop ? "noMatchingScope" : nil)
  }

  /// A singleton: one per registration, kept by the scope that registered it, which also
  /// resolves its dependencies and disposes it.
  private func singleton(_ registration: RegistrationSpec, owner: Int, top: Int) throws -> Int {
    switch singletons[registration.id] {
    case .ready(let id): return id
    case .creating: throw ModelError(code: "cycle")
    case nil: break
    }
    singletons[registration.id] = .creating
    let id: Int
    do {
      id = try make(
        registration, in: Context(scope: owner, captor: registration, graph: newGraph(), top: top))
    } catch {
      singletons[registration.id] = nil
      throw error
    }
    singletons[registration.id] = .ready(id)
    if ServicePool.types[registration.key.type].isDisposable { allScopes[owner].owned.append(id) }
    return id
  }

  /// A factory run: dependencies in order (kept alive until it ends), then the failure or a new
  /// instance.
  private func make(_ registration: RegistrationSpec, in context: Context) throws -> Int {
    let mark = localHeld.count
    defer { localHeld.removeSubrange(mark...) }
    var dependencies: [Int] = []
    for dependency in registration.dependencies {
      let id = try resolve(dependency.key, in: context)
      dependencies.append(id)
      localHeld.append(id)
    }
    if registration.fails { throw ModelError(code: "factoryFailed") }
    return make(
      InstanceShape(registration: registration.id, type: registration.key.type, dependencies: dependencies))
  }

  private func make(_ shape: InstanceShape) -> Int {
    instances.append(shape)
    return instances.count
  }

  private func newGraph() -> Int {
    graphs.append([:])
    return graphs.count - 1
  }

  // MARK: The scope tree

  /// The nearest registration of `key` from `scope` up to the root; within a scope, the last.
  private func lookup(_ key: KeySpec, from scope: Int) -> (RegistrationSpec, Int)? {
    let wanted = key.normalized
    for candidate in chain(from: scope) {
      if let found = allScopes[candidate].registrations.last(where: { $0.key.normalized == wanted }) {
        return (found, candidate)
      }
    }
    return nil
  }

  /// `scope` and its ancestors, nearest first.
  private func chain(from scope: Int) -> [Int] {
    var result: [Int] = []
    var current: Int? = scope
    while let index = current {
      result.append(index)
      current = allScopes[index].parent
    }
    return result
  }

  private func nearest(_ tag: TagSpec, from scope: Int) -> Int? {
    chain(from: scope).first { allScopes[$0].tag == tag }
  }

  private func isClosed(_ scope: Int) -> Bool {
    chain(from: scope).contains { allScopes[$0].closed }
  }

  /// The shape of instance `id`.
  func shape(of id: Int) -> InstanceShape? {
    instances.indices.contains(id - 1) ? instances[id - 1] : nil
  }
}
