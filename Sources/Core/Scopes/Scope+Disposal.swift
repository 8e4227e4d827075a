import Synchronization

extension Scope {
  /// Closes the scope: closes its open children, then disposes every instance it owns in reverse
  /// creation order, each exactly once.
  ///
  /// ```swift
  /// let request = try container.makeScope(.request)
  /// defer { try? request.close() }
  /// ```
  ///
  /// After `close()` begins, resolving from the scope or making a child of it throws
  /// ``ResolutionError/Code/scopeClosed``. A resolve racing with the close either returns an
  /// instance that the close then disposes, or throws that error. A second `close()` — on another
  /// thread, or from a parent closing its children — waits until the first has disposed
  /// everything, and reports nothing (the first reports the errors); a disposer that closes its
  /// own scope returns at once.
  ///
  /// Asynchronous disposers (``AsyncDisposable``) cannot be awaited here: they run in a
  /// background task, and the close reports them as errors so you can switch to
  /// `try await close()`. The order still holds there: what the scope made before an
  /// asynchronous instance (what it may be built from) is disposed in that task after it, not
  /// here; and every ancestor's instances follow that task, however the ancestor is closed later.
  ///
  /// - Throws: ``ResolutionError`` with code ``ResolutionError/Code/disposalFailed`` listing every
  ///   disposer error (``ResolutionError/disposalErrors``), after all disposers ran.
  ///
  /// Unavailable in async code, where `try await close()` awaits asynchronous disposers instead
  /// of leaving them to a background task whose errors nobody sees. Waiting for another close
  /// blocks the calling thread, so keep this overload off the task pool's threads by any route (a
  /// synchronous helper called from a task, a `deinit` run in one): the asynchronous disposers of
  /// an awaited close resume on those threads, and enough blocked callers leave them none.
  @_disfavoredOverload  // in async code, `close()` means the one that awaits disposers
  @available(
    *, noasync,
    message:
      "in async code use `try await close()`, which awaits AsyncDisposable instances (in top-level code, Swift picks this overload anyway: make that call from an async function)"
  )
  public final func close() throws {
    let start = lifecycle.beginClose()
    if case .anotherCloseRuns = start { return waitUntilClosed() }
    defer {
      releaseCachedInstancesThenFinish()
    }
    // A scope that never owned anything closes with two atomic writes and two loads. (Not
    // `closeAsChild`, which also returns the children's background work: through it, a plain
    // request scope's close cost about 70 more instructions.)
    guard case .dispose = start else { return }
    var errors: [any Error] = []
    _ = disposeOwned(collecting: &errors)
    try throwIfFailed(errors)
  }

  /// ``close()-5plpz`` for a closing parent: adds the errors to `errors`.
  ///
  /// - Returns: The background task disposing what could not be disposed here (an
  ///   ``AsyncDisposable`` instance and everything older), which the parent's own disposals must
  ///   follow; `nil` if everything was disposed here. When another close of this scope ran, what
  ///   that close left behind.
  private func closeAsChild(collecting errors: inout [any Error]) -> LeftDisposal? {
    let start = lifecycle.beginClose()
    if case .anotherCloseRuns = start {
      waitUntilClosed()
      return leftBehindByClose
    }
    defer {
      releaseCachedInstancesThenFinish()
    }
    guard case .dispose = start else { return nil }
    return disposeOwned(collecting: &errors)
  }

  /// Closes the children and disposes what the scope owns, once this thread began the close (see
  /// ``closeAsChild(collecting:)`` for the result).
  private func disposeOwned(collecting errors: inout [any Error]) -> LeftDisposal? {
    var own = DisposalStack()
    guard let taken = takeOwned(&own, synchronousCloser: currentThreadID()) else { return nil }
    let left = disposingOnThisThread { () -> LeftDisposal? in
      guard !taken.isEmpty else { return disposeInReverse(&own, errors: &errors) }
      let childrenLeft = taken.children.compactMap { $0.closeAsChild(collecting: &errors) }
      return disposeInReverse(&own, errors: &errors, after: taken.leftBehind + childrenLeft)
    }
    detachFromParent(leaving: left)
    return left
  }

  /// Runs `body`, which disposes this scope's instances on this thread, with the thread marked as
  /// closing this scope: a disposer that closes this scope or an ancestor returns at once (see
  /// `isClosedByCaller`), even if another close of that ancestor, on another thread or in another
  /// task, waits for this one.
  @inline(__always)
  private func disposingOnThisThread<Result>(_ body: () -> Result) -> Result {
    let outer = ThreadContext.closingScope
    ThreadContext.closingScope = UInt(bitPattern: ObjectIdentifier(self))
    defer { ThreadContext.closingScope = outer }
    return body()
  }

  /// Disposes `disposals` in reverse order on this thread and adds their errors to `errors`.
  ///
  /// An ``AsyncDisposable`` instance cannot be awaited here: it is reported as
  /// ``AsyncDisposalRequired`` and disposed in a background task, followed there by every older
  /// instance (it may be built from them, so they must outlive its disposer). If `earlier` (what
  /// the children left behind) is not empty, every disposal waits for it in that task.
  ///
  /// - Returns: The background task, or `nil` if everything was disposed here.
  private func disposeInReverse(
    _ disposals: inout DisposalStack, errors: inout [any Error], after earlier: [LeftDisposal] = []
  ) -> LeftDisposal? {
    var disposed = DisposedObjects(count: disposals.count)
    var background: [Disposal] = []
    if earlier.isEmpty {
      // Here, newest first, up to the first asynchronous instance.
      while let disposal = disposals.popNewest() {
        guard disposed.isFirst(disposal) else { continue }
        guard case .sync(let disposable) = disposal.action else {
          errors.append(DisposalError(key: disposal.key, underlying: AsyncDisposalRequired()))
          background.append(disposal)
          break
        }
        do { try disposable.dispose() } catch {
          errors.append(DisposalError(key: disposal.key, underlying: error))
        }
      }
    }
    // The rest in the background task, in the same order.
    while let disposal = disposals.popNewest() {
      guard disposed.isFirst(disposal) else { continue }
      if disposal.isAsync {
        errors.append(DisposalError(key: disposal.key, underlying: AsyncDisposalRequired()))
      }
      background.append(disposal)
    }
    guard !(background.isEmpty && earlier.isEmpty) else { return nil }
    // Taken out of the box by the task, so that the instances are freed inside it, where it runs
    // as a close of this scope: a `deinit` that closes an ancestor whose awaited close waits for
    // this task then returns at once. Captured as such, they were freed only when the finished
    // task dropped its closure, and that ancestor's close waited for that too.
    let pending = PendingDisposals(background)
    return LeftDisposal(of: self, after: earlier) { _ = await Scope.runAsync(pending.take()) }
  }

  /// Closes the scope, awaiting asynchronous disposers: closes its open children, then disposes
  /// every instance it owns in reverse creation order, each exactly once.
  ///
  /// ```swift
  /// func endSession(_ session: Scope) async throws {
  ///   try await session.close()
  /// }
  /// ```
  ///
  /// Call it from an `async` function: in the top-level code of a `main.swift` the compiler picks
  /// the synchronous overload even after `await`, and reports it as unavailable there.
  ///
  /// - Throws: ``ResolutionError`` with code ``ResolutionError/Code/disposalFailed`` listing every
  ///   disposer error, after all disposers ran.
  ///
  /// The caller's cancellation does not cut disposal short: when the calling task is cancelled, or
  /// the scope owns asynchronous disposers, the disposers run in a task of their own (with the
  /// caller's task-local values and priority), which nobody cancels.
  public final func close() async throws {
    try await closeAwaitingDisposers()
  }

  /// ``close()-70h7`` under a name the synchronous overload cannot take.
  @usableFromInline
  func closeAwaitingDisposers() async throws {
    try await finishAwaitedClose(try beginAwaitedClose())
  }

  /// The synchronous start of ``close()-70h7``: begins the close and, when nothing needs
  /// awaiting, finishes it here (see `closeUnlessAwaiting`). Lets the asynchronous `withScope`
  /// of a non-isolated caller close a request scope without an async call.
  @usableFromInline
  func beginAwaitedClose() throws -> PendingClose {
    PendingClose(start: try closeUnlessAwaiting())
  }

  /// The rest of ``close()-70h7`` after ``beginAwaitedClose()``: waits for another close, or
  /// awaits what the scope owns.
  @usableFromInline
  func finishAwaitedClose(_ pending: PendingClose) async throws {
    let owned: Owned
    switch pending.start {
    case .closed: return
    case .anotherCloseRuns:
      // And for what that close left behind, if it was a synchronous one.
      await waitUntilClosed()
      await leftBehindByClose?.wait()
      return
    case .awaiting(let taken): owned = taken
    }
    defer {
      releaseCachedInstancesThenFinish()
    }
    let chain = ClosingChain(scope: self, next: Scope.closingChain)
    let dispose = { @Sendable () async -> [any Error] in
      await Scope.$closingChain.withValue(chain) {
        var errors: [any Error] = []
        for child in owned.children {
          do { try await child.closeAwaitingDisposers() } catch { errors += Scope.flatten(error) }
        }
        for left in owned.leftBehind { await left.wait() }
        return errors + (await Scope.runAsync(owned.own.newestFirst()))
      }
    }
    // In a task of its own, which nobody cancels, whenever the close may suspend (an asynchronous
    // disposer, or a child's close): a cancellation arriving meanwhile must not reach the
    // disposers that run after it.
    let errors =
      Task.isCancelled || owned.awaitsAnything || !owned.children.isEmpty || !owned.leftBehind.isEmpty
      ? await Task { await dispose() }.value : await dispose()
    // A task a disposer started, and which outlives this close, is no longer part of it.
    chain.end()
    detachFromParent()
    try throwIfFailed(errors)
  }

  /// What an asynchronous close still has to do after its synchronous start.
  @usableFromInline
  struct PendingClose {
    fileprivate let start: AsyncCloseStart

    /// Whether the close ran to its end in its synchronous start.
    @usableFromInline var isFinished: Bool {
      if case .closed = start { true } else { false }
    }
  }

  /// How an asynchronous close goes on after its synchronous start.
  fileprivate enum AsyncCloseStart {
    /// The close ran to its end: nothing to dispose, or only synchronous disposers, run here.
    case closed
    /// Another close began first.
    case anotherCloseRuns
    /// What is left to dispose needs awaiting (a child, an asynchronous disposer) or a task of
    /// its own (the caller is cancelled); the scope is closing and this close must finish it.
    case awaiting(Owned)
  }

  /// Begins an asynchronous close and, when nothing needs awaiting, finishes it here as a
  /// synchronous close does: a request scope whose disposers are all synchronous closes without
  /// a task, a task-local value or an allocated closure.
  fileprivate func closeUnlessAwaiting() throws -> AsyncCloseStart {
    if case .anotherCloseRuns = lifecycle.beginClose() { return .anotherCloseRuns }
    // A cancelled caller's disposers run in a task of their own (see `close()`), even synchronous ones.
    let closer = ThreadContext.isCurrentTaskCancelled ? 0 : currentThreadID()
    var finishesHere = true
    defer {
      if finishesHere {
        releaseCachedInstancesThenFinish()
      }
    }
    var own = DisposalStack()
    guard let taken = takeOwned(&own, synchronousCloser: closer, onlyIfAllSynchronous: true) else {
      return .closed
    }
    guard closer != 0, taken.isEmpty, !own.awaitsAnything else {
      finishesHere = false
      return .awaiting(Owned(children: taken.children, leftBehind: taken.leftBehind, own: own))
    }
    var errors: [any Error] = []
    _ = disposingOnThisThread { disposeInReverse(&own, errors: &errors) }
    detachFromParent()
    try throwIfFailed(errors)
    return .closed
  }

  /// What a closing scope disposes: its linked children, then (after what children closed before
  /// left behind) its own instances.
  fileprivate struct Owned: Sendable {
    let children: [Scope]
    let leftBehind: [LeftDisposal]
    let own: DisposalStack

    /// Whether any own instance is an ``AsyncDisposable``.
    var awaitsAnything: Bool { own.awaitsAnything }
  }

  /// Takes what the scope must close, once this thread has set `closing`: its linked children and
  /// what children closed before left behind, returned, and its disposal stack, moved into `own`;
  /// `nil` if there is nothing to close (then the scope is already detached from its parent).
  ///
  /// - Parameters:
  ///   - own: An empty stack, which receives the scope's own disposals.
  ///   - synchronousCloser: The thread that will run the disposers itself, without suspending
  ///     (see ``Scope/synchronousCloser``); 0 if none will.
  ///   - onlyIfAllSynchronous: Records `synchronousCloser` only if there is no child, nothing left
  ///     behind and no asynchronous disposer (an asynchronous close disposes on this thread only
  ///     then).
  private func takeOwned(
    _ own: inout DisposalStack, synchronousCloser: UInt, onlyIfAllSynchronous: Bool = false
  ) -> Taken? {
    guard lifecycle.everOwnedOrLinked else {
      // Nothing to dispose, no linked child was ever taken, and none can be now; never linked.
      return nil
    }
    var overflow: [ScopedSlot] = []
    var taken = Taken()
    // Closing is set: no child links, and none hands anything over, after this.
    if let all = childShards.withObjectIfMade({ $0?.takeAll() }) {
      (taken.children, taken.leftBehind) = all
    }
    withStateIfMade { state in
      swap(&own, &guardedDisposals)
      if synchronousCloser != 0, !onlyIfAllSynchronous || (taken.isEmpty && !own.awaitsAnything) {
        self.synchronousCloser = synchronousCloser
      }
      // Dropped after the lock is released: freeing an instance runs its `deinit`.
      if let state { swap(&overflow, &state.scoped) }
    }
    overflow.removeAll()
    guard !(taken.isEmpty && own.isEmpty) else {
      detachFromParent()
      return nil
    }
    return taken
  }

  /// What ``takeOwned(_:synchronousCloser:onlyIfAllSynchronous:)`` took besides the disposals.
  private struct Taken {
    var children: [Scope] = []
    var leftBehind: [LeftDisposal] = []

    var isEmpty: Bool { children.isEmpty && leftBehind.isEmpty }
  }

  private func throwIfFailed(_ errors: [any Error]) throws {
    guard let first = errors.first else { return }
    throw ResolutionError(
      .disposalFailed(scope: chainDescription, firstKey: (first as? DisposalError)?.key),
      disposalErrors: errors)
  }

  /// A child's aggregate error as its disposer errors; any other error as itself.
  static func flatten(_ error: any Error) -> [any Error] {
    if let error = error as? ResolutionError, error.code == .disposalFailed { return error.disposalErrors }
    return [error]
  }

  /// Disposes an instance nobody will receive: synchronously, or, for an ``AsyncDisposable``, in a
  /// background task (reported as ``AsyncDisposalRequired``, since its errors cannot be).
  static func disposeNow(_ disposal: Disposal) -> [any Error] {
    guard case .async = disposal.action else { return runSync([disposal]) }
    Task { _ = await runAsync([disposal]) }
    return [DisposalError(key: disposal.key, underlying: AsyncDisposalRequired())]
  }

  /// Runs synchronous disposers in the given order, collecting their errors.
  static func runSync(_ disposals: [Disposal]) -> [any Error] {
    var errors: [any Error] = []
    for disposal in disposals {
      guard case .sync(let disposable) = disposal.action else { continue }
      do { try disposable.dispose() } catch {
        errors.append(DisposalError(key: disposal.key, underlying: error))
      }
    }
    return errors
  }

  /// Runs disposers of either kind in the given order, collecting their errors.
  static func runAsync(_ disposals: some Collection<Disposal>) async -> [any Error] {
    var errors: [any Error] = []
    var disposed = DisposedObjects(count: disposals.count)
    for disposal in disposals where disposed.isFirst(disposal) {
      do {
        switch disposal.action {
        case .sync(let disposable): try disposable.dispose()
        case .async(let disposable): try await disposable.dispose()
        }
      } catch {
        errors.append(DisposalError(key: disposal.key, underlying: error))
      }
    }
    return errors
  }
}

/// Reported by a synchronous ``Scope/close()-5plpz`` for each ``AsyncDisposable`` instance: it is
/// disposed in a background task, whose errors cannot be reported.
public struct AsyncDisposalRequired: Error, CustomStringConvertible {
  /// Explains the fix.
  public var description: String {
    "an AsyncDisposable instance was disposed in a background task; close this scope with "
      + "`try await scope.close()` to await it and see its errors"
  }
}
