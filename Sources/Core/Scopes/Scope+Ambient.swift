import Synchronization

extension Scope {
  /// The scope that code running in this task resolves from when given none: set by the
  /// `withScope` functions (synchronous and asynchronous) and inherited by child tasks.
  ///
  /// ```swift
  /// try await container.withScope(.request) { _ in
  ///   let handler = try Scope.current?.resolve(Handler.self)   // this request's scope
  /// }
  /// ```
  ///
  /// While the factory of a shared instance (a singleton, a weak or a scoped instance) runs, it is
  /// the scope that will own that instance, whatever scope the caller had made current: a
  /// longer-lived instance must not find a shorter-lived scope through it; a task the factory
  /// starts inherits that scope too (or none, if no scope was current). `@Injected` properties
  /// without an explicit scope use the scope that was current when their holder was created (or,
  /// if none was, the one current at their first access). It is the only ambient state Strata has;
  /// there is no global container.
  public static var current: Scope? {
    if let owner = ThreadContext.ambientOwner { return owner.scope }
    // Read through the runtime (see `withAmbientTaskLocal`): `TaskLocal.get()` runs unspecialised.
    let key = ambientScopeKey.load(ordering: .acquiring)
    return key == 0 ? nil : ThreadContext.boundScope(atTaskLocal: key)
  }

  /// The scope made current by `withScope`, inherited by child tasks. Declared without the
  /// `@TaskLocal` wrapper, whose projected value cannot be used from inlinable code, so that
  /// `withScope` is inlined into the caller (one async frame and one executor check fewer).
  @usableFromInline static let ambientScope = TaskLocal<Scope?>(wrappedValue: nil)

  /// Runs `body`, which runs a factory with `owner` as ``current`` (through the thread's ambient
  /// owner), with the task-local ``ambientScope`` bound to `owner` too when another scope is
  /// bound to it.
  ///
  /// A task that the factory starts inherits the task-local, not the thread's ambient owner:
  /// without this, a singleton's background task (a flusher, a refresher) found the request that
  /// happened to make the singleton as its current scope, and resolved (and kept) that request's
  /// instances. When no scope is bound, nothing is: such a task finds no current scope, which
  /// reaches nothing shorter-lived either. When `owner` is already bound (a request's scoped
  /// instance made inside its `withScope`, the common case), nothing is pushed: one task-local
  /// read is the whole cost. A program that never called `withScope` has no scope bound
  /// anywhere, and skips even that read. The read is one call into the concurrency runtime
  /// (`ThreadContext.boundObject(atTaskLocal:)`), not `TaskLocal.get()`, which runs unspecialised (about
  /// 170 instructions, twice per `server-request-async` request).
  @inlinable @inline(__always)
  static func withAmbientTaskLocal<Result>(_ owner: Scope, _ body: () throws -> Result) rethrows -> Result {
    let key = ambientScopeKey.load(ordering: .acquiring)
    guard key != 0 else { return try body() }
    let bound = ThreadContext.boundObject(atTaskLocal: key)
    guard bound != 0, bound != UInt(bitPattern: ObjectIdentifier(owner)) else { return try body() }
    return try ambientScope.withValue(owner, operation: body)
  }

  /// The address of ``ambientScope`` (its key in the runtime's task-local bindings) once a
  /// `withScope` has bound it in this process; 0 before. Set before the first binding, in the task
  /// that makes it, so a task that can see a bound scope (that task, or one it started
  /// afterwards) sees it set too; never cleared. One load answers both whether anything was ever
  /// bound and where to look, without the lazy global's accessor (a `swift_once` check).
  @usableFromInline static let ambientScopeKey = Atomic<UInt>(0)

  /// Notes that ``ambientScope`` is about to be bound (see ``ambientScopeKey``).
  @inlinable @inline(__always)
  static func willBindAmbientScope() {
    if ambientScopeKey.load(ordering: .relaxed) == 0 {
      ambientScopeKey.store(UInt(bitPattern: ObjectIdentifier(ambientScope)), ordering: .releasing)
    }
  }

  /// Creates a child scope, makes it ``current`` while `body` runs, and closes it when `body`
  /// returns or throws.
  ///
  /// ```swift
  /// let response = try container.withScope(.request) { request in
  ///   try request.resolve(Handler.self).handle(input)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - tag: The kind of scope, such as ``ScopeTag/request``.
  ///   - name: An optional label for messages.
  ///   - body: Runs with the new scope, which is also ``current``.
  /// - Returns: What `body` returns.
  /// - Throws: What `body` throws, unchanged if the scope then closes cleanly, or wrapped in a
  ///   ``ScopeExitError`` with the disposer errors if it does not; otherwise a ``ResolutionError``
  ///   from making or closing the scope.
  ///
  /// Unavailable in async code: there, `try await withScope` closes the scope awaiting
  /// asynchronous disposers, even when `body` itself never awaits.
  // Disfavored: in async code, a body that never awaits must still get the asynchronous variant,
  // whose close awaits asynchronous disposers and survives cancellation.
  @_disfavoredOverload
  @available(
    *, noasync,
    message:
      "in async code use `try await withScope`, which awaits AsyncDisposable instances (in top-level code, Swift picks this overload anyway: make that call from an async function)"
  )
  public final func withScope<Result>(
    _ tag: ScopeTag, name: String? = nil, _ body: (Scope) throws -> Result
  ) throws -> Result {
    let scope = try makeScope(tag, name: name)
    let result: Result
    do {
      // Inside a shared instance's factory, the new scope (not the factory's owner) is current.
      let outerOwner = ThreadContext.ambientOwner
      ThreadContext.ambientOwner = nil
      defer { ThreadContext.ambientOwner = outerOwner }
      Scope.willBindAmbientScope()
      result = try Scope.ambientScope.withValue(scope) { try body(scope) }
    } catch {
      throw ScopeExitError.closing(scope, after: error)
    }
    try scope.close()
    return result
  }

  /// Creates a child scope, makes it ``current`` while the asynchronous `body` runs (child tasks
  /// inherit it), and closes it — awaiting asynchronous disposers — when `body` returns, throws
  /// or is cancelled.
  ///
  /// ```swift
  /// func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
  ///   try await container.withScope(.request) { scope in
  ///     try await scope.resolve(Router.self).route(request)
  ///   }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - tag: The kind of scope.
  ///   - name: An optional label for messages.
  ///   - isolation: The caller's actor, inherited so that `body` runs where the caller does.
  ///   - body: Runs with the new scope, which is also ``current``.
  /// The close is not cut short when the calling task is cancelled (a client that went away):
  /// asynchronous disposers run to their end; see ``Scope/close()-70h7``.
  ///
  /// - Returns: What `body` returns.
  /// - Throws: What `body` throws, unchanged if the scope then closes cleanly, or wrapped in a
  ///   ``ScopeExitError`` with the disposer errors if it does not; otherwise a ``ResolutionError``
  ///   from making or closing the scope.
  @inlinable
  public final func withScope<Result>(
    _ tag: ScopeTag, name: String? = nil, isolation: isolated (any Actor)? = #isolation,
    _ body: (Scope) async throws -> Result
  ) async throws -> Result {
    let scope = try makeScope(tag, name: name)
    let result: Result
    do {
      Scope.willBindAmbientScope()
      result = try await Scope.ambientScope.withValue(scope) { try await body(scope) }
    } catch {
      throw await ScopeExitError.awaitingClose(of: scope, after: error)
    }
    if isolation == nil {
      // A non-isolated caller already runs where the close's non-isolated start would run: begun
      // here, a scope whose disposers are all synchronous closes without an async call. (An
      // isolated caller's close starts off its actor: disposers never run on the caller's actor.)
      let pending = try scope.beginAwaitedClose()
      if !pending.isFinished { try await scope.finishAwaitedClose(pending) }
    } else {
      try await scope.closeAwaitingDisposers()
    }
    return result
  }
}

/// Creates a child of the ``Scope/current`` scope, makes it current while `body` runs, and closes it
/// afterwards.
///
/// ```swift
/// try await container.withScope(.session) { _ in
///   try await withScope(.request) { request in   // a child of the session
///     try request.resolve(Handler.self).handle()
///   }
/// }
/// ```
///
/// - Parameters:
///   - tag: The kind of scope.
///   - name: An optional label for messages.
///   - isolation: The caller's actor, inherited so that `body` runs where the caller does.
///   - body: Runs with the new scope.
/// - Returns: What `body` returns.
/// - Throws: ``ResolutionError`` with code ``ResolutionError/Code/noMatchingScope`` if no scope is
///   current; otherwise as ``Scope/withScope(_:name:_:)``.
@inlinable
public func withScope<Result>(
  _ tag: ScopeTag, name: String? = nil, isolation: isolated (any Actor)? = #isolation,
  _ body: (Scope) async throws -> Result
) async throws -> Result {
  guard let parent = Scope.current else { throw noCurrentScope(tag) }
  return try await parent.withScope(tag, name: name, isolation: isolation, body)
}

/// Creates a child of the ``Scope/current`` scope for a synchronous `body`; see the asynchronous
/// variant.
///
/// ```swift
/// let total = try withScope(.request) { request in try request.resolve(Cart.self).total }
/// ```
///
/// - Throws: ``ResolutionError`` if no scope is current, or as ``Scope/withScope(_:name:_:)``.
///
/// Unavailable in async code; see ``Scope/withScope(_:name:_:)``.
@_disfavoredOverload  // see `Scope.withScope(_:name:_:)`
@available(
  *, noasync,
  message:
    "in async code use `try await withScope`, which awaits AsyncDisposable instances (in top-level code, Swift picks this overload anyway: make that call from an async function)"
)
public func withScope<Result>(
  _ tag: ScopeTag, name: String? = nil, _ body: (Scope) throws -> Result
) throws -> Result {
  guard let parent = Scope.current else { throw noCurrentScope(tag) }
  return try parent.withScope(tag, name: name, body)
}

@usableFromInline
func noCurrentScope(_ tag: ScopeTag) -> ResolutionError {
  ResolutionError(.noCurrentScope(tag: tag))
}
