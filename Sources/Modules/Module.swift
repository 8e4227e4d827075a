public import Strata

/// A named group of registrations that an application installs as a unit.
///
/// ```swift
/// struct PersistenceModule: Module {
///   func register(in registry: Registrar) {
///     registry.register(Database.self, lifetime: .singleton) { _ in try Postgres() }
///     registry.register(UserRepository.self, SQLUserRepository.init)
///   }
/// }
/// try container.install(PersistenceModule(), NetworkingModule())
/// ```
public protocol Module: Sendable {
  /// Registers the module's services.
  ///
  /// - Parameter registry: The batch the module's registrations are added to.
  func register(in registry: Registrar)
}

extension Scope {
  /// Installs `modules` in this scope as one batch, in the order given.
  ///
  /// ```swift
  /// try container.install(PersistenceModule(), NetworkingModule())
  /// ```
  ///
  /// - Parameter modules: The modules to install.
  /// - Throws: `ResolutionError` for an invalid registration or a failing eager singleton.
  public func install(_ modules: any Module...) throws {
    try register { registry in
      for module in modules { module.register(in: registry) }
    }
  }
}
