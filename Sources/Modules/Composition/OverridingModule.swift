import Strata

extension Module {
  /// This module with `replacements` overriding it, Guice-style: every registration the
  /// replacements make is an override of the key this module (or another) registers.
  ///
  /// ```swift
  /// let container = try Container(modules: [
  ///   AppModule().overridden(by: FixedClockModule(), InMemoryMailModule())
  /// ])
  /// ```
  ///
  /// A replacement registration whose key nobody registers is reported as a stale override.
  /// Compositions layer: in `AppModule().overridden(by: TestDoubles()).overridden(by: FixedClock())`
  /// the clock of `FixedClock` replaces the one of `TestDoubles`, which replaces the app's; two
  /// replacements of one composition registering the same key are a `duplicateOverride`.
  ///
  /// - Parameter replacements: Modules whose registrations replace this module's.
  /// - Returns: A module that installs this one and the replacements.
  public func overridden(by replacements: any Module...) -> any Module {
    OverridingModule(base: self, replacements: replacements)
  }
}

/// A module with replacements: see ``Module/overridden(by:)``.
struct OverridingModule: Module {
  let base: any Module
  let replacements: [any Module]

  var moduleID: ModuleID {
    let parts = [base.moduleID] + replacements.map(\.moduleID)
    let name = "\(parts[0]) overridden by " + parts.dropFirst().map(\.description).joined(separator: ", ")
    return ModuleID(composite: name, parts: parts)
  }

  var requires: [any Module] { base.requires + replacements.flatMap(\.requires) }

  func register(in registry: Registrar) { register(in: registry, skipping: .nothing) }

  /// Registers the base, unless it is in `loaded` (installed already, or loaded earlier in this
  /// installation: a composition counts as its parts, and a module is never loaded twice), then
  /// the replacements as overrides.
  ///
  /// The replacements always register: they are what the composition is for.
  func register(in registry: Registrar, skipping loaded: ModuleInstallation.LoadedBefore) {
    // The replacements override one layer above whatever the base overrides itself (a base that
    // is a composition has overrides of its own, which these replace).
    // A base loaded earlier in this installation (listed beside, or required) registered before
    // this composition: the replacements then rank above everything staged so far.
    let baseRank: UInt32
    if loaded.contains(base.moduleID) {
      baseRank = registry.highestOverrideRank(from: 0)
    } else {
      let start = registry.stagedCount
      base.register(in: registry, skipping: loaded)
      registry.attribute(from: start, toModule: base.moduleID.attribution, isOverride: false)
      baseRank = registry.highestOverrideRank(from: start)
    }
    for replacement in replacements {
      let start = registry.stagedCount
      replacement.register(in: registry, skipping: loaded)
      registry.attribute(
        from: start, toModule: replacement.moduleID.attribution,
        raisingOverridesBy: baseRank == .max ? .max : baseRank + 1)
    }
  }

  /// Its own identity and its parts', nested compositions' parts included.
  var partIDs: [ModuleID] { [moduleID] + base.partIDs + replacements.flatMap(\.partIDs) }

  func loaded(in scope: Scope) throws { try loaded(in: scope, skipping: .nothing) }

  /// Runs the hooks of the parts loaded for the first time. A replacement registers again even if
  /// it was installed before (its registrations must come after the base's to replace them), but
  /// its hook, like every module's, runs once.
  func loaded(in scope: Scope, skipping loaded: ModuleInstallation.LoadedBefore) throws {
    if !loaded.contains(base.moduleID) { try base.loaded(in: scope, skipping: loaded) }
    for replacement in replacements where !loaded.contains(replacement.moduleID) {
      try replacement.loaded(in: scope, skipping: loaded)
    }
  }
}

extension Module {
  /// The identities this module's registrations may be attributed to: its own, and for a
  /// composition, those of its parts.
  var partIDs: [ModuleID] { (self as? OverridingModule)?.partIDs ?? [moduleID] }
}
