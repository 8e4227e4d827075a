import Strata

// A service that is not Sendable may be transient or graph, or shared through `.unchecked`; a
// Sendable service takes any lifetime. None of this warns.
final class ReportBuilder {
  var lines: [String] = []
  init() {}
  init(clock: Clock) {}
}

/// Checked by hand: every access goes through `lock`.
final class LegacyCache {
  private let lock = NSLockLike()
  private var entries: [String: Int] = [:]
  init() {}
}

final class NSLockLike {}

final class Clock: Sendable {
  init() {}
}

actor Ledger {
  init() {}
}

@MainActor final class ViewModel {
  init() {}
}

protocol Store: Sendable {}
struct MemoryStore: Store {}

enum Channel: Hashable, Sendable { case audit }

func register(_ registry: Registrar, lifetime: Lifetime) {
  // Not Sendable, not shared.
  registry.register(ReportBuilder.self) { _ in ReportBuilder() }
  registry.register(ReportBuilder.self, name: Channel.audit, lifetime: .transient) { _ in ReportBuilder() }
  registry.register(ReportBuilder.self, lifetime: .graph) { _ in ReportBuilder() }
  registry.register(ReportBuilder.self) { (_, title: String) in ReportBuilder() }
  registry.register(ReportBuilder.self, lifetime: .graph) { (_, a: Int, b: String, c: Double) in
    ReportBuilder()
  }
  registry.register(ReportBuilder.self, ReportBuilder.init(clock:))
  registry.register(ReportBuilder.self, lifetime: .graph, ReportBuilder.init(clock:))
  registry.register(ReportBuilder.self, dependsOn: [.service(Clock.self)]) { _ in ReportBuilder() }

  // Not Sendable, shared on the engineer's word.
  registry.register(LegacyCache.self, lifetime: .unchecked(.singleton)) { _ in LegacyCache() }
  registry.register(LegacyCache.self, lifetime: .unchecked(.scoped(.request)), LegacyCache.init)
  registry.register(LegacyCache.self, lifetime: .unchecked(lifetime)) { _ in LegacyCache() }
  registry.register(
    LegacyCache.self, lifetime: .unchecked(.weak), dependsOn: []
  ) { _ in LegacyCache() }
  registry.register(uncheckedInstance: LegacyCache())

  // Sendable: any lifetime.
  registry.register(Clock.self, lifetime: .singleton) { _ in Clock() }
  registry.register(Clock.self, lifetime: .eagerSingleton, Clock.init)
  registry.register(Clock.self, lifetime: .weak, dependsOn: []) { _ in Clock() }
  registry.register(Clock.self, lifetime: .scoped(.request)) { _ in Clock() }
  registry.register(Clock.self, lifetime: lifetime) { _ in Clock() }
  registry.register(Clock.self, name: Channel.audit, lifetime: lifetime, Clock.init)
  registry.register(Ledger.self, lifetime: .singleton) { _ in Ledger() }
  registry.register(ViewModel.self, lifetime: .singleton) { _ in
    MainActor.assumeIsolated { ViewModel() }
  }
  registry.register((any Store).self, lifetime: .singleton) { _ in MemoryStore() }
  registry.register(Int.self, lifetime: .scoped) { (_: borrowing Resolver) in 42 }
  registry.register(instance: Clock())
  registry.register((any Store).self, name: Channel.audit, instance: MemoryStore())
}
