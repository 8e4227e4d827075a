import Foundation

// Switches for behaviour that the reference model and Strata are known to disagree on, so that the
// generator can leave such a feature out until it is fixed, instead of encoding the wrong behaviour.

/// Which parts of Strata's behaviour the generator exercises.
struct HarnessFeatures: Sendable {
  /// Decision 5 (the lifetime rules, `LifetimeRules`): a singleton or weak instance whose factory
  /// reaches an untagged `scoped` service (directly or through transients) gets
  /// `captiveDependency`. When off, untagged scoped registrations are only generated for a
  /// service type that no factory depends on.
  var untaggedScopedUnderSingletonIsCaptive = true
  /// "Closing a scope closes its children first, newest first": newest *made*. Strata closes
  /// them newest *to first own something* (the order they joined the parent's list). When off,
  /// the harness closes a scope's open descendants itself, newest made first, before closing it,
  /// so that the order Strata picks is never observed.
  var strataClosesChildrenNewestMadeFirst = false
  /// Top-level routes through `withScope`: `@Injected` and `Scope.current`.
  var ambientRoutes = true
  /// Factories that reach a dependency through `Lazy`, `Provider` or `Scope.current` inside the
  /// factory. The model does not describe these; only the isolation property uses them.
  var indirectDependencies = false
  /// Deep acyclic chains (500 registrations) are generated now and then.
  var deepChains = true

  /// Scoped lifetimes three times as often: for properties about scoped instances.
  var scopedHeavy = false

  /// What the model-based test runs with.
  static let modelBased = HarnessFeatures(deepChains: !Sanitizers.addressSanitizerIsActive)
  /// What the isolation property runs with.
  static let isolation = HarnessFeatures(
    indirectDependencies: true, scopedHeavy: true)

  /// These features with the left-out ones named in `STRATA_HARNESS_ENABLE` (comma-separated:
  /// `untaggedScopedUnderSingletonIsCaptive`, `strataClosesChildrenNewestMadeFirst`) switched
  /// on, to check whether Strata has been fixed.
  func enabling(_ names: String?) -> HarnessFeatures {
    var features = self
    for name in (names ?? "").split(separator: ",") {
      switch name {
      case "untaggedScopedUnderSingletonIsCaptive": features.untaggedScopedUnderSingletonIsCaptive = true
      case "strataClosesChildrenNewestMadeFirst": features.strataClosesChildrenNewestMadeFirst = true
      default: break
      }
    }
    return features
  }
}

/// Which sanitizer, if any, the test process runs under.
enum Sanitizers {
  /// ThreadSanitizer's deadlock detector tracks at most 64 locks held by one thread; nested
  /// `Lazy` reads inside factories (each holding the `Lazy`'s once-guard) exceed that, and the
  /// runtime then fails a CHECK and hangs. Under it, the harness reaches such dependencies
  /// through `Provider` (no once-guard) instead.
  static let threadSanitizerIsActive = dlsym(nil, "__tsan_init") != nil
  /// Under AddressSanitizer, frames are several times larger: a 500-long chain of the harness's
  /// generic factories runs low on the test thread's stack, and Strata (rightly) stops it with
  /// `depthLimitExceeded` instead of overflowing. The campaign then leaves deep chains out.
  static let addressSanitizerIsActive = dlsym(nil, "__asan_init") != nil
}
