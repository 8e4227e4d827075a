import Strata

/// The check an installation's batch passes before it is published: no key registered by two
/// modules unless one is an override, and no override that replaces nothing.
struct DuplicateCheck {
  /// The batch, in load order.
  let batch: ReviewedBatch
  /// What the scope and its ancestors hold already for a key, root first.
  let existing: (ServiceKey) -> [RegistrationDescriptor]

  /// The positions in `batch` of registrations an override replaces: left out of the batch, so
  /// that `resolveAll` returns the override alone.
  ///
  /// Linear in the batch (times the depth of the scope chain): the batch's keys are indexed once
  /// (no key hashed with SipHash, none copied; the registry level the batch becomes reuses the
  /// index), and only keys registered more than once, or overridden, or registered before, are
  /// looked at closely, through their full descriptions.
  ///
  /// - Throws: ``ModuleError`` for a duplicate, a duplicate override or a stale override.
  func replacedPositions() throws -> Set<Int> {
    var existingByKey: [ServiceKey: [RegistrationDescriptor]] = [:]
    // The keys that need a closer look, in batch order.
    let indexed = batch.indexedKeys
    var closer: [ServiceKey] = []
    var marked: Set<ServiceKey> = []
    for index in 0..<batch.count {
      let key = batch.key(at: index)
      if indexed.isFirstOccurrence(index) {
        let earlier = existing(key)
        if !earlier.isEmpty { existingByKey[key] = earlier }
        // A key met for the first time needs a look only as an override or over earlier ones.
        guard batch.isOverride(at: index) || !earlier.isEmpty else { continue }
      }
      if marked.insert(key).inserted { closer.append(key) }
    }
    guard !closer.isEmpty else { return [] }
    var positions: [ServiceKey: [Int]] = [:]
    for index in 0..<batch.count where marked.contains(batch.key(at: index)) {
      positions[batch.key(at: index), default: []].append(index)
    }

    var replaced: Set<Int> = []
    for key in closer {
      let registrations = (positions[key] ?? []).map { ($0, batch.descriptor(at: $0)) }
      // The highest override rank wins: a composition overriding a composition replaces its
      // overrides too.
      let top = registrations.map(\.1.attributes.overrideRank).max() ?? 0
      let overrides = top == 0 ? [] : registrations.filter { $0.1.attributes.overrideRank == top }.map(\.1)
      let plain = registrations.filter { $0.1.attributes.overrideRank < top || top == 0 }
      let earlier = existingByKey[key] ?? []
      if let (first, second) = twoModules(among: overrides) {
        throw error(.duplicateOverride, key, first, second)
      }
      if overrides.isEmpty, let (first, second) = twoModules(among: plain.map(\.1)) {
        throw error(.duplicateRegistration, key, first, second)
      }
      if let override = overrides.first {
        // Only another module's registration (or one made outside modules) counts as replaced: a
        // replacement listed beside its composition, or installed before it, registers the key
        // itself, and an override of nothing but its own copy replaces nothing.
        let module = override.moduleAttribution
        guard
          plain.contains(where: { $0.1.moduleAttribution != module })
            || earlier.contains(where: { $0.moduleAttribution != module })
        else {
          throw ModuleError(
            code: .staleOverride, modules: [id(override)], key: key, sites: [override.registeredAt])
        }
        replaced.formUnion(plain.map(\.0))
        // One replacement module in two compositions registers twice, from the same lines: the
        // copies of its last run stand for both. Each run attributes its registrations to an
        // attribution object of its own, so several registrations from one line in one run (a
        // loop, for `resolveAll`) all stand.
        let topRank = registrations.filter { $0.1.attributes.overrideRank == top }
        var lastRun: [SiteOfModule: ObjectIdentifier?] = [:]
        for (_, registration) in topRank {
          lastRun[SiteOfModule(registration)] = registration.moduleAttribution.map(ObjectIdentifier.init)
        }
        for (position, registration) in topRank
        where lastRun[SiteOfModule(registration)] != registration.moduleAttribution.map(ObjectIdentifier.init)
        {
          replaced.insert(position)
        }
      } else if let added = plain.first?.1,
        let clash = earlier.last(where: {
          $0.moduleAttribution != nil && $0.moduleAttribution != added.moduleAttribution && !$0.isOverride
        })
          ?? earlier.last(where: {
            $0.moduleAttribution != nil && $0.moduleAttribution != added.moduleAttribution
          })
      {
        throw error(.duplicateRegistration, key, clash, added)
      }
    }
    return replaced
  }

  /// A registration site within one module: two registrations that share it are one registration
  /// made twice.
  private struct SiteOfModule: Hashable {
    let module: ModuleAttribution?
    let site: SourceLocation

    init(_ registration: RegistrationDescriptor) {
      module = registration.moduleAttribution
      site = registration.registeredAt
    }
  }

  /// The first registrations of the first two different modules among `registrations`.
  private func twoModules(among registrations: [RegistrationDescriptor])
    -> (RegistrationDescriptor, RegistrationDescriptor)?
  {
    guard let first = registrations.first,
      let second = registrations.first(where: { $0.moduleAttribution != first.moduleAttribution })
    else { return nil }
    return (first, second)
  }

  private func error(
    _ code: ModuleError.Code, _ key: ServiceKey, _ first: RegistrationDescriptor,
    _ second: RegistrationDescriptor
  ) -> ModuleError {
    ModuleError(
      code: code, modules: [id(first), id(second)], key: key,
      sites: [first.registeredAt, second.registeredAt])
  }

  /// The module of a registration, for the error.
  private func id(_ registration: RegistrationDescriptor) -> ModuleID {
    registration.moduleAttribution?.identity as? ModuleID ?? ModuleID(composite: "(no module)", parts: [])
  }
}
