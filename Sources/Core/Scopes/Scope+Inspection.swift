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

  /// Records `ids` as installed in this scope, after those installed before.
  package func recordInstalledModules(_ ids: [AnyHashable]) {
    withState { state in
      state.installedModules += ids
      state.installedModuleSet.formUnion(ids)
    }
  }

  /// Forgets `ids` (an installation that failed before its registrations were published).
  package func forgetInstalledModules(_ ids: Set<AnyHashable>) {
    withState { state in
      state.installedModules.removeAll { ids.contains($0) }
      state.installedModuleSet.subtract(ids)
    }
  }

  /// The identities of the modules installed in this scope, as a set: a copy that shares the
  /// scope's storage (copy-on-write), so that an installation checks what its scope chain holds
  /// without collecting it anew.
  package var installedModuleSet: Set<AnyHashable> {
    withStateIfMade { $0?.installedModuleSet ?? [] }
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
