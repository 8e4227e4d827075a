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
  /// What the batch holds besides plain registrations, noted as they are staged or refined so
  /// that publishing a batch without them does not visit every registration to find out: a
  /// container of 10,000 no longer fits in the processor's cache, and each pass over it missed.
  /// Written only while the batch is open, by the thread running the registrar's closure.
  var hasForwards = false
  var hasOverrides = false
  var hasEagerSingletons = false
  /// A registration with runtime arguments and a shared lifetime, which materializing rejects.
  var hasSharedWithArguments = false
  /// A ready-made instance given an activation hook, which materializing rejects.
  var hasHookOnInstance = false

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

  /// A registration for `key` whose factory throws `reason` (an `invalidRegistration` about `key`).
  static func failing<Service, each Argument>(
    _ type: Service.Type, arguments: repeat (each Argument).Type, key: ServiceKey,
    at location: SourceLocation, reason: ResolutionError.Reason
  ) -> AnyRegistration {
    let factory = {
      @Sendable (resolver: borrowing Resolver, arguments: repeat each Argument) throws -> Service in
      throw ResolutionError(reason, insideFactory: true)
    }
    return Registration<Service, repeat each Argument>(
      key: key, lifetime: .transient, location: location, dependencies: { [] }, factory: factory)
  }

}
