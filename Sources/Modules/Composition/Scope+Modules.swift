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
  /// - Throws: ``ModuleError`` for a duplicate registration, a module cycle, a stale override or
  ///   a failing hook; `ResolutionError` for an invalid registration or a failing eager singleton.
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
  ///
  /// - Parameter modules: The modules to install.
  /// - Throws: ``ModuleError`` for a duplicate registration, a module cycle, a stale override or
  ///   a failing hook; `ResolutionError` for an invalid registration or a failing eager singleton.
  ///   Nothing is registered after any of these but a failing hook or eager singleton.
  public func install(_ modules: [any Module]) throws {
    var installed: [ModuleID] = []
    var scope: Scope? = self
    while let current = scope {
      installed += current.installedModuleIdentities.compactMap { $0 as? ModuleID }
      scope = current.parent
    }
    var plan = try LoadOrder.of(modules, skipping: Set(installed))
    // Claimed under the lock, so that two threads installing one module into one scope load it once.
    plan = withInstalledModules { ids in
      // A set, not `ids.contains` per module: that compared every pair, boxed in `AnyHashable`.
      let claimed = Set(ids)
      let fresh = plan.filter { !claimed.contains(AnyHashable($0.moduleID)) }
      // A composition is recorded with its parts, so that requiring one later loads nothing.
      ids += fresh.flatMap { $0.partIDs.map(AnyHashable.init) }
      return fresh
    }
    guard !plan.isEmpty else { return }
    var moduleIDs: [String: ModuleID] = [:]
    for id in installed + plan.flatMap(\.partIDs) { moduleIDs[id.description] = id }
    do {
      try register(
        { registry in
          for module in plan {
            let start = registry.stagedCount
            module.register(in: registry)
            registry.attribute(from: start, toModule: module.moduleID.description, isOverride: false)
          }
        },
        reviewing: { batch in
          try DuplicateCheck(batch: batch, existing: registrationLookup(), moduleIDs: moduleIDs)
            .replacedPositions()
        })
    } catch {
      let claimed = Set(plan.flatMap { $0.partIDs.map(AnyHashable.init) })
      withInstalledModules { ids in ids.removeAll { claimed.contains($0) } }
      throw error
    }
    for module in plan {
      do {
        try module.loaded(in: self)
      } catch {
        throw ModuleError(code: .loadHookFailed, modules: [module.moduleID], underlying: error)
      }
    }
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
  /// - Throws: What ``Strata/Scope/install(_:)-([Module])`` throws.
  public convenience init(modules: [any Module]) throws {
    self.init()
    try install(modules)
  }
}
