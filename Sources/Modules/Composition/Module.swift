public import Strata

/// A group of registrations that an application assembles itself from: persistence, networking,
/// billing, a checkout feature.
///
/// A module has an identity (``moduleID``), the modules it ``requires``, a configure step
/// (``register(in:)``) and a hook run once every module of the same installation is registered
/// (``loaded(in:)``):
///
/// ```swift
/// struct PersistenceModule: Module {
///   var requires: [any Module] { [LoggingModule()] }
///
///   func register(in registry: Registrar) {
///     registry.register(Database.self, lifetime: .singleton) { _ in try Postgres() }
///     registry.register(UserRepository.self, SQLUserRepository.init)
///   }
/// }
/// let container = try Container(modules: [PersistenceModule(), NetworkingModule()])
/// ```
///
/// Only ``register(in:)`` is required; the other members have defaults.
public protocol Module: Sendable {
  /// What tells this module apart from others: installing a module whose identity is already
  /// installed (in the scope or an ancestor) does nothing.
  ///
  /// The default is the module's type. A module with parameters that may be installed several
  /// times with different values gives the values as part of its identity:
  ///
  /// ```swift
  /// struct DatabaseModule: Module {
  ///   let region: String
  ///   var moduleID: ModuleID { ModuleID(Self.self, region) }
  ///   func register(in registry: Registrar) { … }
  /// }
  /// ```
  var moduleID: ModuleID { get }

  /// The modules this one needs: installed before it, once, wherever they are required.
  ///
  /// ```swift
  /// struct CheckoutModule: Module {
  ///   var requires: [any Module] { [PaymentsModule(), CartModule()] }
  ///   func register(in registry: Registrar) { … }
  /// }
  /// ```
  ///
  /// The default is none.
  var requires: [any Module] { get }

  /// Registers the module's services: the configure step.
  ///
  /// ```swift
  /// func register(in registry: Registrar) {
  ///   registry.register(Database.self, lifetime: .singleton) { _ in try Postgres() }
  /// }
  /// ```
  ///
  /// Each registration is attributed to this module, for errors, validation and graph export.
  ///
  /// - Parameter registry: The batch the module's registrations are added to.
  func register(in registry: Registrar)

  /// Runs once every module of the same installation is registered and published: resolve what
  /// must exist at start-up, start background work, warm caches.
  ///
  /// ```swift
  /// func loaded(in scope: Scope) throws {
  ///   try scope.resolve(MigrationRunner.self).run()
  /// }
  /// ```
  ///
  /// The default does nothing. Hooks run in load order, each once. A hook that throws stops the
  /// hooks after it in the same installation; installing those modules again runs the hooks that
  /// have not run yet, this one first.
  ///
  /// - Parameter scope: The scope the module was installed in.
  /// - Throws: Any error; installation reports it as ``ModuleError/Code/loadHookFailed``.
  func loaded(in scope: Scope) throws
}

extension Module {
  /// The module's type.
  ///
  /// ```swift
  /// #expect(PersistenceModule().moduleID == ModuleID(PersistenceModule.self))
  /// ```
  public var moduleID: ModuleID { ModuleID(Self.self) }

  /// None.
  ///
  /// ```swift
  /// #expect(LoggingModule().requires.isEmpty)
  /// ```
  public var requires: [any Module] { [] }

  /// Does nothing.
  ///
  /// ```swift
  /// try LoggingModule().loaded(in: container)   // no effect
  /// ```
  ///
  /// - Parameter scope: The scope the module was installed in.
  public func loaded(in scope: Scope) throws {}
}
