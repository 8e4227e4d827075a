public import Strata

extension Scope {
  /// Installs `modules` and the modules they require in this scope, as one batch.
  ///
  /// ```swift
  /// try container.install(PersistenceModule(), NetworkingModule())
  /// ```
  ///
  /// See ``install(_:)-([Module])`` for the rules.
  ///
  /// - Parameter modules: The modules to install.
  /// - Throws: ``ModuleError`` for a duplicate registration, a module cycle, a stale override, a
  ///   failing hook or a closed scope; `ResolutionError` for an invalid registration or a failing
  ///   eager singleton.
  public func install(_ modules: any Module...) throws {
    try install(modules)
  }

  /// Installs `modules` and the modules they require in this scope, as one batch.
  ///
  /// ```swift
  /// try container.install([PersistenceModule(), NetworkingModule()])
  /// ```
  ///
  /// - Each module is installed once: a module whose ``Module/moduleID`` is installed in this scope
  ///   or an ancestor already, or appears twice, is skipped.
  /// - Modules load in dependency order: each after the modules it ``Module/requires``, ties
  ///   broken by the order they are given or required in.
  /// - A key registered by two modules is an error, unless one of them is an override
  ///   (`RegistrationHandle.overriding()` or ``Module/overridden(by:)``); an override
  ///   replaces the other modules' registrations of its key in the same installation, so that
  ///   `resolveAll` returns the override alone. Registrations of an ancestor scope, or of an
  ///   earlier installation in this scope, stay visible to `resolveAll`, before the override.
  /// - The batch is published atomically; then each new module's ``Module/loaded(in:)`` hook runs,
  ///   in load order.
  /// - A hook that throws stops the hooks after it (a later hook may rely on an earlier one), and
  ///   so does an eager singleton that throws: the modules stay installed, and installing them
  ///   again runs the hooks that have not run, the failed one first.
  ///
  /// - Parameter modules: The modules to install.
  /// - Throws: ``ModuleError`` for a duplicate registration, a module cycle, a stale override, a
  ///   failing hook or a closed scope; `ResolutionError` for an invalid registration or a failing
  ///   eager singleton. Nothing is registered after any of these but a failing hook or eager
  ///   singleton.
  public func install(_ modules: [any Module]) throws {
    // A closed scope takes no modules. Checked here, not only when the batch is published: a
    // module that registers nothing (a hook, or requirements installed already) published an
    // empty batch, which a closed scope accepts, and its hook ran in the closed scope.
    guard !isClosed else { throw ModuleError(code: .scopeClosed, modules: modules.map(\.moduleID)) }
    // One installation at a time, up to its publication: a second thread installing a module the
    // first is loading waits for it and then finds it installed, rather than returning before
    // the module's registrations are visible.
    let hold = ModuleInstallation.hold()
    let plan: [PendingHook]
    do {
      plan = try installRegistrations(of: modules, releasingAtPublication: hold)
    } catch {
      hold.release()
      // Installations nested in this one's modules that succeeded published their registrations
      // (in other scopes); their hooks run although this installation failed.
      if hold.outermost == nil { hold.runDeferredIgnoringFailures() }
      throw error
    }
    hold.release()
    // The hooks run after the lock is released: a hook may install modules itself, or wait for
    // another thread that does. Hooks an earlier installation of these modules left unrun go
    // first, in their load order. An installation nested in another's `register(in:)` leaves its
    // hooks to the outermost one, which runs them (first) once it has released the lock.
    let hooks = try unrunHooks(of: modules, besides: plan) + plan.map { ($0, self) }
    if let outermost = hold.outermost { return outermost.runAfterRelease { try self.run(hooks) } }
    try hold.runDeferred()
    try run(hooks)
  }

  /// Runs `hooks` in order, each unless it ran already; one that another installation runs is
  /// waited for, so that the hooks after it never run before it has (see `PendingHook`).
  /// Each hook runs in the scope whose installation listed it.
  private func run(_ hooks: [(hook: PendingHook, scope: Scope)]) throws {
    for (hook, scope) in hooks {
      // Once another installation has run it (waiting while it runs), or this thread runs it.
      guard hook.claim() else { continue }
      do {
        try hook.run(in: scope)
        hook.finish(succeeded: true)
      } catch {
        hook.finish(succeeded: false)
        throw ModuleError(code: .loadHookFailed, modules: [hook.module.moduleID], underlying: error)
      }
    }
  }

  /// The hooks of `modules` (and the modules they require) that an earlier installation in this
  /// scope or an ancestor left unrun, or that another installation has not finished running, in
  /// load order, each with the scope it belongs to; none of `plan`. (So an installation of a
  /// module that another thread still loads returns once its hook has run, there or here; and a
  /// feature a session installs does not run its hook before the hook of a module it requires
  /// that the container is still loading.)
  private func unrunHooks(
    of modules: [any Module], besides plan: [PendingHook]
  ) throws -> [(hook: PendingHook, scope: Scope)] {
    // Usually every hook but the plan's has run: then the scope chain's identities need not be
    // read. (A hook this installation must see was made under the installation lock, before this
    // one took it. The count is read before the plan's: a plan hook another thread finishes in
    // between can only make the check look further.)
    let unfinished = ModuleInstallation.unfinishedHooks.load(ordering: .acquiring)
    guard unfinished > plan.lazy.filter({ !$0.hasRun }).count else { return [] }
    let planned = Set(plan.map(ObjectIdentifier.init))
    var pending: [(hook: PendingHook, scope: Scope)] = []
    var scope: Scope? = self
    while let current = scope {
      for case let hook as PendingHook in current.installedModuleIdentities.lazy.map(\.base)
      where !hook.hasRun && !planned.contains(ObjectIdentifier(hook)) {
        pending.append((hook, current))
      }
      scope = current.parent
    }
    guard !pending.isEmpty else { return [] }
    var wanted: Set<ModuleID> = []
    for module in try LoadOrder.of(modules, skipping: { _ in false }) { wanted.formUnion(module.partIDs) }
    // A composition counts as its parts: a module requiring its base waits for (or retries) its hook.
    return pending.filter { $0.hook.module.partIDs.contains(where: wanted.contains) }.sorted {
      $0.hook.sequence < $1.hook.sequence
    }
  }

  /// Registers and publishes the modules of `modules` not installed yet, and returns them in
  /// load order, each with the modules loaded before it (whose parts a composition skips).
  private func installRegistrations(
    of modules: [any Module], releasingAtPublication hold: ModuleInstallation.Hold
  ) throws -> [PendingHook] {
    // What the scope chain has installed: each scope's set, shared, not copied (collecting every
    // identity made installing modules one at a time quadratic).
    var installed = ModuleInstallation.Installed()
    var scope: Scope? = self
    while let current = scope {
      installed.add(current.installedModuleSet)
      scope = current.parent
    }
    let order = try LoadOrder.of(modules, skipping: installed.contains)
    guard !order.isEmpty else { return [] }
    // The step that loads each module, and the modules to claim: a composition is recorded with
    // its parts, so that requiring one later loads nothing.
    var steps: [ModuleID: Int] = [:]
    var claimed: [AnyHashable] = []
    for (step, module) in order.enumerated() {
      for id in module.partIDs where steps[id] == nil && !installed.contains(id) {
        steps[id] = step
        claimed.append(AnyHashable(id))
      }
    }
    let plan = order.indices.map { index in
      let module = order[index]
      guard module is OverridingModule else {
        return ModuleInstallation.Step(module: module, loadedBefore: .nothing)
      }
      let loaded = module.partIDs.filter { steps[$0].map { $0 < index } ?? installed.contains($0) }
      return ModuleInstallation.Step(module: module, loadedBefore: .init(loaded: Set(loaded)))
    }
    // Let go of the scopes' sets first: holding one while this scope's changes would copy it.
    installed = ModuleInstallation.Installed()
    // Each step's hook is listed as to run until it has run (see `install(_:)`).
    let hooks = plan.map(PendingHook.init)
    recordInstalledModules(claimed + hooks.map(AnyHashable.init))
    var published = false
    do {
      try register(
        { registry in
          for step in plan {
            let start = registry.stagedCount
            step.module.register(in: registry, skipping: step.loadedBefore)
            registry.attribute(from: start, toModule: step.module.moduleID.attribution, isOverride: false)
          }
        },
        reviewing: { batch in
          try DuplicateCheck(batch: batch, existing: registrationLookup()).replacedPositions()
        },
        published: {
          published = true
          hold.release()
        })
    } catch {
      // Published (an eager singleton failed afterwards), the modules stay installed: their
      // registrations are live, and loading them again would register every key twice.
      if !published {
        forgetInstalledModules(Set(claimed + hooks.map(AnyHashable.init)))
      }
      throw error
    }
    return hooks
  }

  /// Creates a child scope and installs `modules` in it: a feature that exists per session,
  /// tenant or request.
  ///
  /// ```swift
  /// let session = try container.makeScope(.session, modules: [CheckoutModule()])
  /// let checkout = try session.resolve(Checkout.self)
  /// ```
  ///
  /// A module the feature requires that an ancestor has installed already is not installed again.
  ///
  /// - Parameters:
  ///   - tag: The new scope's tag.
  ///   - name: An optional label for messages.
  ///   - modules: The modules to install in it.
  /// - Returns: The new scope.
  /// - Throws: What ``install(_:)-([Module])`` throws; the new scope is closed then.
  public func makeScope(_ tag: ScopeTag, name: String? = nil, modules: [any Module]) throws -> Scope {
    let child = try makeScope(tag, name: name)
    do {
      try child.install(modules)
    } catch {
      throw child.closing(after: error)
    }
    return child
  }

  /// The identities of the modules installed in this scope (not its ancestors), in load order; a
  /// composition (``Module/overridden(by:)``) is followed by its parts, which count as installed.
  ///
  /// ```swift
  /// print(container.installedModules)   // [LoggingModule, PersistenceModule]
  /// ```
  public var installedModules: [ModuleID] {
    installedModuleIdentities.compactMap { $0 as? ModuleID }
  }
}

extension Container {
  /// Creates a container and installs `modules` in it.
  ///
  /// ```swift
  /// let container = try Container(modules: [PersistenceModule(), NetworkingModule()])
  /// try container.validate()
  /// ```
  ///
  /// - Parameter modules: The modules to install, with the modules they require.
  /// - Throws: What ``Strata/Scope/install(_:)-([Module])`` throws. The container is closed
  ///   first, so the eager singletons it made are disposed (nobody else could close it); if one of
  ///   their disposers fails too, the error is a `ScopeExitError`.
  public convenience init(modules: [any Module]) throws {
    self.init()
    do {
      try install(modules)
    } catch {
      throw ScopeExitError.closing(self, after: error)
    }
  }
}
