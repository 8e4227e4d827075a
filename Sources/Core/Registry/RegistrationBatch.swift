/// The fate of one ``Registrar``'s batch: open while the closure that received the registrar
/// runs, then published into a scope, or abandoned if the closure (or a registration) failed.
///
/// A registrar or ``RegistrationHandle`` kept past that closure and used later cannot change the
/// published batch any more. Rather than drop the call silently, the batch publishes a
/// registration for each key concerned that throws `invalidRegistration` when resolved, naming
/// the late call and how to fix it. (A call cannot throw itself: registering is not throwing.)
final class RegistrationBatch {
  /// Whether the closure that received the registrar is still running.
  private(set) var isOpen = true
  /// The scope the batch was published to; `nil` before, or if abandoned.
  ///
  /// Strong, not `weak`: a weak reference would give the scope (usually the container) a side
  /// table, which slows every retain and release of it for its whole life. A registrar is dropped
  /// when its closure returns; one kept past it (the misuse this type reports) keeps its scope
  /// alive as long as it is kept.
  private var scope: Scope?

  init() {}

  /// Ends the batch: published to `scope`, or abandoned when `scope` is `nil`.
  func close(publishedTo scope: Scope?) {
    isOpen = false
    self.scope = scope
  }

  /// Publishes `failures`, registrations that throw, in the scope the batch went to. An abandoned
  /// batch or a closed scope has nobody to resolve them: nothing to do then.
  func reportLateUse(_ failures: () -> [AnyRegistration]) {
    guard let scope else { return }
    try? scope.publish(failures())
  }

  /// A registration for `key` whose factory throws `invalidRegistration` with `hint`.
  static func failing<Service, each Argument>(
    _ type: Service.Type, arguments: repeat (each Argument).Type, key: ServiceKey,
    at location: SourceLocation, hint: String
  ) -> AnyRegistration {
    let factory = {
      @Sendable (resolver: borrowing Resolver, arguments: repeat each Argument) throws -> Service in
      throw ResolutionError(
        code: .invalidRegistration, key: key, registeredAt: location, hintSource: .text(hint),
        insideFactory: true)
    }
    return Registration<Service, repeat each Argument>(
      key: key, lifetime: .transient, location: location, dependencies: [], factory: factory,
      activation: nil)
  }

  /// The hint for a registration made through a registrar after its batch closed.
  static func lateRegistrationHint(_ key: ServiceKey) -> String {
    "`\(key)` was registered through a Registrar after its batch was published, so the "
      + "registration was never made; register only inside the closure passed to "
      + "`register(_:)` or `Container(_:)`, or start a new batch with `scope.register { … }`"
  }

  /// The hint for a ``RegistrationHandle`` refined after its batch closed.
  static func lateRefinementHint(_ change: String, of key: ServiceKey) -> String {
    "\(change) was added to the registration of `\(key)` after its batch was published, so it "
      + "never took effect; refine a registration only inside the closure that registered it"
  }
}
