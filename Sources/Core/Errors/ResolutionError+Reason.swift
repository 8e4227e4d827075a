extension ResolutionError {
  /// What failed, as data: one case per kind of failure, carrying the keys, lifetimes, scopes and
  /// registration sites involved. Sites that throw build a reason and nothing else; every word of
  /// the text is written in `ErrorMessages.swift`.
  ///
  /// A scope is carried as its chain description (`root → session("s1")`), taken when the error is
  /// made: the error must not keep the scope alive.
  indirect enum Reason: Sendable {
    // MARK: notRegistered

    /// Nothing registers `key` in the scope chain whose registries are `visible` (searched for
    /// near misses only when the hint is read).
    case notRegistered(ServiceKey, visible: [Registry])
    /// ``Scope/inject(into:)`` found no registration of the bundle `key`, `bundle` by name
    /// (`ProfileScreen.Dependencies`), in the scope chain whose registries are `visible`.
    case bundleNotRegistered(ServiceKey, bundle: String, visible: [Registry])

    // MARK: cycle, depthLimitExceeded

    /// `key` was asked for while it was being created: by this thread, or by another thread that
    /// waits for this one (`acrossThreads`).
    case cycle(ServiceKey, acrossThreads: Bool)
    /// The resolve reached `key` `depth` levels deep, with no room for more.
    case tooDeep(ServiceKey, depth: Int)
    /// A shared instance's factory would have started `depth` levels deep in `scope`, with no
    /// room for more, and no registration to blame.
    case tooDeepInScope(scope: String, depth: Int)
    /// A `Lazy`, `Provider` or `@Injected` resolve of `key` would have started inside `depth`
    /// others on one thread, Strata's limit (``ResolutionNesting/limit``).
    case tooManyDeferred(ServiceKey, depth: Int)

    // MARK: factoryFailed, activationFailed, typeMismatch

    /// The factory of `registration` threw (the error is ``ResolutionError/underlying``).
    case factoryFailed(RegistrationDescriptor)
    /// The activation hook of `registration` threw (the error is ``ResolutionError/underlying``).
    case activationFailed(RegistrationDescriptor)
    /// The forward `forward`, made at `forwardedAt`, got an instance of `instanceType` from
    /// `target` that does not convert to `forward`'s service.
    case typeMismatch(
      forward: ServiceKey, target: RegistrationDescriptor, instanceType: String,
      forwardedAt: SourceLocation)

    // MARK: invalidRegistration

    /// A registration with a shared lifetime takes runtime arguments.
    case sharedWithArguments(RegistrationDescriptor)
    /// A registration that takes runtime arguments was given forwards.
    case forwardWithArguments(RegistrationDescriptor)
    /// A registration of a ready-made instance was given an activation hook, which would never run.
    case hookOnInstance(RegistrationDescriptor)
    /// A `weak` registration made a value of `valueType`, not a class instance.
    case weakValue(RegistrationDescriptor, valueType: String)
    /// `key` was registered, at `site`, through a registrar whose batch was already published.
    case lateRegistration(ServiceKey, at: SourceLocation)
    /// `refinement` was made, at `site`, to the registration of `registration` after its batch
    /// was published.
    case lateRefinement(LateRefinement, of: ServiceKey, at: SourceLocation)

    // MARK: scopeClosed

    /// `key` was resolved from `scope`, closed.
    case resolvedFromClosedScope(ServiceKey, scope: String)
    /// `scope` closed while an instance of `key` was created for it; the instance was disposed.
    case closedWhileCreating(ServiceKey, scope: String)
    /// A ``Lazy``, ``Provider`` or ``Injected`` (`holder`) of `key` was used after its scope was
    /// freed.
    case scopeFreed(ServiceKey, holder: Holder)
    /// `scope`, closed, was asked to make a child scope tagged `tag`.
    case childOfClosedScope(scope: String, tag: ScopeTag)
    /// A batch holding `key` was registered (or a module installed) in `scope`, closed.
    case registeredInClosedScope(ServiceKey, scope: String)

    // MARK: noMatchingScope, captiveDependency

    /// `registration`, `scoped(tag)`, was resolved from `scope`, which has no `tag` scope at or
    /// above it.
    case noScopeWithTag(RegistrationDescriptor, tag: ScopeTag, scope: String)
    /// An ``Injected`` property of `key` was read with no scope of its own and none current.
    case injectedWithoutScope(ServiceKey)
    /// A free ``withScope(_:name:_:)`` for a `tag` scope ran where no scope is current.
    case noCurrentScope(tag: ScopeTag)
    /// `captor`, longer-lived, depends on `captive`, `scoped(tag)`, or, with no `tag`, an untagged
    /// `scoped` registration that a singleton or weak instance would keep.
    case captiveDependency(
      captive: RegistrationDescriptor, captor: RegistrationDescriptor, tag: ScopeTag?)

    // MARK: disposalFailed

    /// Disposers failed while `scope` closed (the errors are ``ResolutionError/disposalErrors``);
    /// `firstKey` is the service of the first failing disposer, if a ``DisposalError`` names it.
    case disposalFailed(scope: String, firstKey: ServiceKey?)
  }

  /// A change to a registration made through its ``RegistrationHandle`` after its batch was
  /// published.
  enum LateRefinement: Sendable {
    /// A forward to `key`.
    case forward(ServiceKey)
    /// An ``RegistrationHandle/onActivated(_:)`` hook.
    case activationHook
    /// `.overriding()`.
    case overriding
  }

  /// What holds a deferred resolve whose scope may be freed before it runs.
  enum Holder: Sendable {
    case lazy, provider, injected
  }
}

extension ResolutionError.Reason {
  /// The code the failure reports.
  var code: ResolutionError.Code {
    switch self {
    case .notRegistered, .bundleNotRegistered: .notRegistered
    case .cycle: .cycle
    case .tooDeep, .tooDeepInScope, .tooManyDeferred: .depthLimitExceeded
    case .factoryFailed: .factoryFailed
    case .activationFailed: .activationFailed
    case .typeMismatch: .typeMismatch
    case .sharedWithArguments, .forwardWithArguments, .hookOnInstance, .weakValue, .lateRegistration,
      .lateRefinement:
      .invalidRegistration
    case .resolvedFromClosedScope, .closedWhileCreating, .scopeFreed, .childOfClosedScope,
      .registeredInClosedScope:
      .scopeClosed
    case .noScopeWithTag, .injectedWithoutScope, .noCurrentScope: .noMatchingScope
    case .captiveDependency: .captiveDependency
    case .disposalFailed: .disposalFailed
    }
  }

  /// What the failure is about.
  var subject: ResolutionError.Subject {
    switch self {
    case .tooDeepInScope(let scope, _), .childOfClosedScope(let scope, _),
      .disposalFailed(let scope, firstKey: _):
      .scope(scope)
    case .noCurrentScope: .currentScope
    case .notRegistered(let key, _), .bundleNotRegistered(let key, _, _), .cycle(let key, _),
      .tooDeep(let key, _), .tooManyDeferred(let key, _), .lateRegistration(let key, _),
      .resolvedFromClosedScope(let key, _),
      .registeredInClosedScope(let key, _),
      .closedWhileCreating(let key, _), .scopeFreed(let key, _), .injectedWithoutScope(let key),
      .typeMismatch(forward: let key, _, _, _):
      .service(key)
    case .factoryFailed(let registration), .activationFailed(let registration),
      .sharedWithArguments(let registration), .forwardWithArguments(let registration),
      .hookOnInstance(let registration), .weakValue(let registration, _),
      .noScopeWithTag(let registration, _, _), .captiveDependency(captive: let registration, _, _):
      .service(registration.key)
    case .lateRefinement(let refinement, of: let key, _):
      if case .forward(let forward) = refinement { .service(forward) } else { .service(key) }
    }
  }

  /// ``ResolutionError/key``: the subject's key, or, for a failure about a scope, the first
  /// failing disposer's service or `Scope` (what Strata reported before it had subjects).
  var key: ServiceKey {
    switch (self, subject) {
    case (_, .service(let key)): key
    case (.disposalFailed(_, firstKey: let key?), _): key
    default: ServiceKey(Scope.self, name: nil)
    }
  }

  /// The registration site the error reports at first (``ResolutionError/registeredAt``).
  var site: SourceLocation? {
    switch self {
    case .factoryFailed(let registration), .activationFailed(let registration),
      .sharedWithArguments(let registration), .forwardWithArguments(let registration),
      .hookOnInstance(let registration), .weakValue(let registration, _),
      .noScopeWithTag(let registration, _, _):
      registration.registeredAt
    case .captiveDependency(_, let captor, _): captor.registeredAt
    case .typeMismatch(_, _, _, let site), .lateRegistration(_, let site), .lateRefinement(_, _, let site):
      site
    default: nil
    }
  }

  /// ``ResolutionError/registrations``: the registrations at fault, outermost first.
  var registrations: [RegistrationDescriptor] {
    switch self {
    case .factoryFailed(let registration), .activationFailed(let registration),
      .sharedWithArguments(let registration), .forwardWithArguments(let registration),
      .hookOnInstance(let registration), .weakValue(let registration, _),
      .noScopeWithTag(let registration, _, _), .typeMismatch(_, target: let registration, _, _):
      [registration]
    case .captiveDependency(let captive, let captor, _): [captor, captive]
    default: []
    }
  }
}
