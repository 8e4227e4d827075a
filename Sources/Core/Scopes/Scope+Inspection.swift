/// What StrataModules needs from a scope beyond the public API: a registration batch it can review
/// before publication, the registrations of each scope of the chain, and the modules installed.
extension Scope {
  /// The scopes from the root down to this one, each with its registrations in registration order.
  package var registrationsByScope: [(scope: Scope, registrations: [RegistrationDescriptor])] {
    var chain: [Scope] = []
    var current: Scope? = self
    while let scope = current {
      chain.append(scope)
      current = scope.parent
    }
    return chain.reversed().map { scope in
      (
        scope,
        scope.registry.current?.registrations.map(\.descriptor) ?? []
      )
    }
  }

  /// A lookup of the registrations of a key from this scope up to the root (root first, each
  /// scope's in registration order), over the snapshots current now: costs the chain's depth per
  /// key, not the number of registrations.
  package func registrationLookup() -> (ServiceKey) -> [RegistrationDescriptor] {
    let chain = registryChain().reversed()
    return { key in chain.flatMap { $0.all(for: key).map(\.descriptor) } }
  }

  /// Runs `body` on the identities of the modules installed in this scope (in installation
  /// order), under the scope's state lock: `body` must not run user code or touch another scope.
  package func withInstalledModules<Result>(_ body: (inout [AnyHashable]) throws -> Result) rethrows -> Result
  {
    try withState { state in try body(&state.installedModules) }
  }

  /// The identities of the modules installed in this scope, read without making the scope's
  /// guarded state if it has none (a plain request scope).
  package var installedModuleIdentities: [AnyHashable] {
    withStateIfMade { $0?.installedModules ?? [] }
  }

  /// Closes this scope after `error` (made by a failed set-up), and returns the error to throw.
  package func closing(after error: any Error) -> any Error {
    ScopeExitError.closing(self, after: error)
  }
}
