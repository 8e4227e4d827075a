/// Every word Strata's ``ResolutionError`` shows: its ``ResolutionError/message``,
/// ``ResolutionError/hint`` and ``ResolutionError/description``, rendered from the error's data
/// (its `Reason`). Nothing else in Strata writes error text; to change what an error says, change
/// it here.
enum ErrorMessages {
  // MARK: Message

  /// One sentence on what went wrong.
  static func message(for error: ResolutionError) -> String {
    let key = error.key
    switch (error.code, error.reason) {
    case (.notRegistered, _): return "nothing is registered for `\(key)`"
    case (.cycle, _):
      guard let cycle = error.cycle else { return "circular dependency while resolving `\(key)`" }
      return "circular dependency: \(cycle.map(\.shortDescription).joined(separator: " → "))"
    case (.factoryFailed, _): return "the factory of `\(key)` threw: \(describe(error.underlying))"
    case (.activationFailed, _):
      return "the activation hook of `\(key)` threw: \(describe(error.underlying))"
    case (.typeMismatch, _): return "a forwarded instance could not be converted to `\(key.service.name)`"
    case (.invalidRegistration, _): return "the registration of `\(key)` is invalid"
    case (.scopeClosed, .childOfClosedScope(_, let tag)):
      return "the scope was closed; a \(tag) scope cannot be made from it"
    case (.scopeClosed, .registeredInClosedScope):
      return "the scope was closed; `\(key)` cannot be registered in it"
    case (.scopeClosed, _): return "the scope was closed; `\(key)` cannot be resolved from it"
    case (.noMatchingScope, .noCurrentScope(let tag)):
      return "the free `withScope(\(tag))` needs a current scope as the parent of its scope"
    case (.noMatchingScope, _): return "`\(key)` needs an enclosing scope that is not there"
    case (.captiveDependency, _): return "a longer-lived service would capture the shorter-lived `\(key)`"
    case (.disposalFailed, _):
      return "\(error.disposalErrors.count) disposer(s) failed while the scope closed"
    case (let code, .tooDeepInScope(let scope, _)): return "\(code) in \(scope)"
    case (let code, _): return "\(code) for `\(key)`"
    }
  }

  /// The error's own text, as stable as a name's (see `StableText`): an error of a private class
  /// prints its type, which Swift qualifies with an address that moves from run to run.
  private static func describe(_ underlying: (any Error)?) -> String {
    underlying.map { StableText.describing($0) } ?? "an error"
  }

  // MARK: Hint

  /// How to fix it, when Strata can tell.
  static func hint(for error: ResolutionError) -> String? {
    // Recursion stopped by the depth check, whose path shows a repeat, reads as a cycle.
    if error.rawCode != error.code { return cycleHint }
    switch error.reason {
    case .notRegistered(let key, let visible):
      return hint(for: Hints.nearMiss(for: key, in: visible), missing: key)
    case .bundleNotRegistered(let key, let bundle, let visible):
      return bundleHint(for: Hints.nearMiss(for: key, in: visible), missing: key, bundle: bundle)
    case .cycle(let key, acrossThreads: true):
      return "`\(key)` is being created by another thread that is waiting for a service this thread "
        + "is creating; break the cycle with Lazy or Provider, or make one of the two first (resolve "
        + "it at start-up, or register it as an eagerSingleton): an onActivated hook shares its "
        + "instance with its own thread only, until it returns"
    case .cycle: return cycleHint
    case .tooDeep(_, let depth), .tooDeepInScope(_, let depth):
      return "resolves nested \(depth) levels deep here without repeating a service, and the thread's "
        + "stack (or Strata's limit of \(Resolver.maximumDepth)) has no room for more; shorten the "
        + "chain, defer part of it with Lazy or Provider, or resolve on a thread with a larger stack"
    case .tooManyDeferred(_, let depth):
      return "`Lazy`, `Provider` and `@Injected` resolves nest \(depth) deep here, each started inside "
        + "the one before, without repeating a service, and Strata allows \(ResolutionNesting.limit) on "
        + "one thread; resolve some of these dependencies directly (as initializer parameters or "
        + "through the resolver), or read them after the factories that make them return"
    case .factoryFailed: return "the error comes from your factory; `underlying` holds it"
    case .activationFailed: return "the instance was discarded; fix the hook or the service it resolves"
    case .typeMismatch(let forward, let target, let instanceType, _):
      return "`\(target.key)` is forwarded to `\(forward.service.name)`, but `\(instanceType)` does "
        + "not conform to it; forward only to protocols the service conforms to"
    case .sharedWithArguments(let registration):
      return "a \(registration.lifetime) registration cannot take runtime arguments (which instance "
        + "would a second set of arguments get?); register it as transient or graph"
    case .forwardWithArguments: return "only a registration without runtime arguments can be forwarded"
    case .hookOnInstance(let registration):
      return "`\(registration.key)` is a ready-made instance, which Strata never makes, so an onActivated "
        + "hook on it would never run; set the instance up before registering it, or register a "
        + "factory (`lifetime: .singleton`) that makes it and add the hook there"
    case .weakValue(_, let valueType):
      return "a weak registration must make class instances, but it made a `\(valueType)`, a value; "
        + "register it as transient, singleton or scoped"
    case .lateRegistration(let key, _):
      return "`\(key)` was registered through a Registrar after its batch was published, so the "
        + "registration was never made; register only inside the closure passed to "
        + "`register(_:)` or `Container(_:)`, or start a new batch with `scope.register { … }`"
    case .lateRefinement(let refinement, let key, _):
      return "\(describe(refinement)) was added to the registration of `\(key)` after its batch was "
        + "published, so it never took effect; refine a registration only inside the closure that "
        + "registered it"
    case .resolvedFromClosedScope(_, let scope):
      return "\(scope) is closed; resolve from an open scope, and close a scope only after its last use"
    case .closedWhileCreating(let key, let scope):
      return "\(scope) closed while `\(key)` was being created; it was disposed"
    case .scopeFreed(let key, .injected):
      return "the scope this @Injected property (\(key)) resolves from has been freed; an @Injected "
        + "property does not keep its scope alive, so read it only while that scope is in use"
    case .scopeFreed(let key, let holder):
      let holder = describe(holder)
      return "the scope this \(holder)<\(key.service.name)> resolves from has been freed; a \(holder) "
        + "does not keep its scope alive, so use it only while that scope is in use"
    case .childOfClosedScope(let scope, let tag):
      return "\(scope) is closed; it cannot make a \(tag) scope"
    case .registeredInClosedScope(_, let scope):
      return "\(scope) is closed; register (or install modules) before closing it, or in an open scope"
    case .noScopeWithTag(_, let tag, let scope):
      return "no `\(tag)` scope above \(scope); resolve it from inside a \(tag) scope "
        + "(`container.makeScope(\(tag))`)"
    case .injectedWithoutScope(let key):
      let explicit = key.isNamed ? "@Injected(name: …, from: container)" : "@Injected(from: container)"
      return "an @Injected property (\(key)) was read where no scope is current; read it inside "
        + "`withScope`, or inject from an explicit scope with `\(explicit)`"
    case .noCurrentScope(let tag):
      return "no scope is current, so a \(tag) scope has no parent; call `container.withScope(\(tag))` "
        + "or run inside another withScope"
    case .captiveDependency(let captive, let captor, tag: nil):
      return "`\(captor.key)` (\(captor.lifetime), registered at \(captor.registeredAt)) depends on "
        + "`\(captive.key)` (scoped, registered at \(captive.registeredAt)); a scoped instance "
        + "belongs to the scope a resolve starts in, and a \(captor.lifetime) is resolved in the "
        + "scope that registered it, so it would keep that scope's instance for good. Give "
        + "`\(captive.key.service.name)` a tag (`.scoped(.request)`), or make "
        + "`\(captor.key.service.name)` scoped as well"
    case .captiveDependency(let captive, let captor, let tag?):
      return "`\(captor.key)` (\(captor.lifetime), registered at \(captor.registeredAt)) depends on "
        + "`\(captive.key)` (\(captive.lifetime), registered at \(captive.registeredAt)); it would "
        + "outlive every \(tag) scope and keep one of their instances. Make "
        + "`\(captor.key.service.name)` \(captive.lifetime) as well, or pass the \(tag) value to it "
        + "as an argument"
    case .disposalFailed(let scope, _): return "every other disposer of \(scope) still ran"
    }
  }

  static var cycleHint: String {
    "break the cycle: inject one side as Lazy or Provider, or set it in an onActivated hook of a "
      + "graph, singleton or scoped registration"
  }

  /// The hint for the missing bundle `key` of ``Scope/inject(into:)``, which resolves it without a
  /// name or arguments, whose closest registration is `nearMiss`.
  private static func bundleHint(
    for nearMiss: Hints.NearMiss, missing key: ServiceKey, bundle: String
  ) -> String {
    let register = "`registry.register(\(bundle).self, \(bundle).init)`"
    switch nearMiss {
    case .named(let name):
      return "`inject(into:)` resolves `\(bundle)` without a name, and it is registered only under the "
        + "name `\(name)`: register it without a name, e.g. \(register)"
    case .otherArguments(let other):
      return "`inject(into:)` resolves `\(bundle)` without runtime arguments, and it is registered with "
        + "arguments \(other.arguments.tupleName): register it without, e.g. \(register)"
    case .extendedType, .sameNamedType, .similarType, .optionalOfRegistered, .registeredAsOptional:
      return hint(for: nearMiss, missing: key)
    case .unnamed, .otherName, .none:
      return "register the bundle `\(bundle)` so Strata can build it, e.g. \(register)"
    }
  }

  /// The hint for a missing `key` whose closest registration is `nearMiss`.
  static func hint(for nearMiss: Hints.NearMiss, missing key: ServiceKey) -> String {
    let wanted = key.service.name
    switch nearMiss {
    case .otherArguments(let other) where other.arguments.tupleName == key.arguments.tupleName:
      // Argument types that print alike (`Config` of two modules): written with their modules.
      return "`\(wanted)` is registered with arguments \(other.arguments.qualifiedTupleName), "
        + "resolved with \(key.arguments.qualifiedTupleName)"
    case .otherArguments(let other):
      return "`\(wanted)` is registered with arguments \(other.arguments.tupleName), "
        + "resolved with \(key.arguments.tupleName)"
    case .named(let name): return "a registration named `\(name)` exists; resolve it with `name: \(name)`"
    case .otherName(let name, let wantedName)
    where name.description == wantedName.description && name.typeID != wantedName.typeID:
      // Equal texts, different types: a name's type is part of the key.
      return "`\(wanted)` is registered under the name `\(name)` of type `\(name.typeName)`, not "
        + "`\(wantedName)` of type `\(wantedName.typeName)`: a name's type is part of the key"
    case .otherName(let name, let wantedName) where name == wantedName:
      // Equal, and not found: the name type's hash disagrees with its `==`.
      return "`\(wanted)` is registered under a name equal (`==`) to `\(wantedName)` but with another "
        + "hash value: `\(name.typeName)`'s `hash(into:)` must combine exactly what its `==` compares"
    case .otherName(let name, let wantedName) where name.description == wantedName.description:
      // Equal texts, one type, values not `==`.
      return "`\(wanted)` is registered under a name of type `\(name.typeName)` that prints as `\(name)` "
        + "but is not equal (`==`) to the `\(wantedName)` resolved with: a name is found only by a value "
        + "`==` to it (`Double.nan` equals nothing; an object compared by identity, only itself)"
    case .otherName(let name, let wantedName):
      return "`\(wanted)` is registered under the name `\(name)`, not `\(wantedName)`"
    case .unnamed: return "an unnamed registration of `\(wanted)` exists; resolve it without a name"
    case .extendedType(let similar):
      return "`\(similar)` is registered; did you mean to register it as `\(wanted)` "
        + "(`.forwarding(to: \(wanted).self)`) or to resolve `\(similar)`?"
    case .sameNamedType(let registered, let wantedType):
      return "`\(registered)` is registered, another type named `\(wanted)`; `\(wantedType)` is not: "
        + "resolve the registered type, or register this one"
    case .similarType(let similar): return "did you mean `\(similar)`? It is registered; `\(wanted)` is not"
    case .optionalOfRegistered(let wrapped):
      return "`\(wrapped)` is registered, but `\(wanted)` is a key of its own (a resolve never unwraps an "
        + "Optional): ask for `\(wrapped)`, or, for `nil` when it is not registered, make this service "
        + "with a closure factory that calls `try resolver.resolveIfRegistered(\(wrapped).self)`"
    case .registeredAsOptional(let optional):
      return "`\(optional)` is registered, a key of its own: resolve `\(optional)`, or register `\(wanted)`"
    case .none:
      return "register it, e.g. `registry.register(\(wanted).self) { resolver in … }`, or check that "
        + "the module providing it is loaded in this scope or one above it"
    }
  }

  private static func describe(_ refinement: ResolutionError.LateRefinement) -> String {
    switch refinement {
    case .forward(let key): "A forward to `\(key)`"
    case .activationHook: "An `onActivated` hook"
    case .overriding: "`.overriding()`"
    }
  }

  private static func describe(_ holder: ResolutionError.Holder) -> String {
    switch holder {
    case .lazy: "Lazy"
    case .provider: "Provider"
    case .injected: "Injected"
    }
  }

  // MARK: Description

  /// The full report: code, message, path, registration site and hint, one per line.
  static func description(of error: ResolutionError) -> String {
    let code = error.code
    var lines = ["\(code): \(message(for: error))"]
    let path = error.path
    if path.count > 1 { lines.append("  path: " + path.map(\.shortDescription).joined(separator: " → ")) }
    if let registeredAt = error.registeredAt {
      let role = code == .notRegistered ? "requested by the registration at" : "registered at"
      lines.append("  \(role) \(registeredAt)")
    }
    if let hint = error.hint { lines.append("  hint: \(hint)") }
    for disposalError in error.disposalErrors { lines.append("  disposer error: \(disposalError)") }
    return lines.joined(separator: "\n")
  }
}
