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
  /// `try await close()`.
  ///
  /// - Throws: ``ResolutionError`` with code ``ResolutionError/Code/disposalFailed`` listing every
  ///   disposer error (``ResolutionError/disposalErrors``), after all disposers ran.
  ///
  /// Unavailable in async code, where `try await close()` awaits asynchronous disposers instead
  /// of leaving them to a background task whose errors nobody sees.
  @_disfavoredOverload  // in async code, `close()` means the one that awaits disposers
  @available(
    *, noasync, message: "in async code use `try await close()`, which awaits AsyncDisposable instances"
  )
  public final func close() throws {
    let start = lifecycle.beginClose()
    if case .anotherCloseRuns = start { return waitUntilClosed() }
    defer {
      releaseCachedInstances()
      lifecycle.finishClose()
    }
    // A scope that never owned anything closes with two atomic writes and two loads.
    if case .dispose = start { try finishClose() }
  }

  /// The rest of ``close()-5plpz`` once `closing` is set: disposes what the scope owns.
  private func finishClose() throws {
    guard let owned = takeOwned(synchronousCloser: currentThreadID()) else { return }
    var errors: [any Error] = []
    for child in owned.children { errors += Scope.collect { try child.close() } }
    var background: [Disposal] = []
    for index in owned.own.indices.reversed() {
      switch owned.own[index].action {
      case .sync(let disposable):
        do { try disposable.dispose() } catch {
          errors.append(DisposalError(key: owned.own[index].key, underlying: error))
        }
      case .async:
        background.append(owned.own[index])
        errors.append(DisposalError(key: owned.own[index].key, underlying: AsyncDisposalRequired()))
      }
    }
    if !background.isEmpty {
      let pending = background
      Task { _ = await Scope.runAsync(pending) }
    }
    detachFromParent()
    try throwIfFailed(errors)
  }

  /// Closes the scope, awaiting asynchronous disposers: closes its open children, then disposes
  /// every instance it owns in reverse creation order, each exactly once.
  ///
  /// ```swift
  /// try await scope.close()
  /// ```
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
  func closeAwaitingDisposers() async throws {
    if case .anotherCloseRuns = lifecycle.beginClose() { return await waitUntilClosed() }
    defer {
      releaseCachedInstances()
      lifecycle.finishClose()
    }
    guard let disposals = takeOwned() else { return }
    let chain = ClosingChain(scope: self, next: Scope.closingChain)
    let dispose = { @Sendable () async -> [any Error] in
      await Scope.$closingChain.withValue(chain) {
        var errors: [any Error] = []
        for child in disposals.children {
          do { try await child.closeAwaitingDisposers() } catch { errors += Scope.flatten(error) }
        }
        return errors + (await Scope.runAsync(disposals.own.reversed()))
      }
    }
    let awaitsAnything = disposals.own.contains { if case .async = $0.action { true } else { false } }
    let errors = Task.isCancelled || awaitsAnything ? await Task { await dispose() }.value : await dispose()
    detachFromParent()
    try throwIfFailed(errors)
  }

  /// Takes what the scope must close, once this thread has set `closing`; `nil` if there is
  /// nothing to close (then the scope is already detached from its parent).
  ///
  /// - Parameter synchronousCloser: The closing thread, for a synchronous close (see
  ///   ``ScopeState/synchronousCloser``); 0 for an asynchronous one.
  private func takeOwned(synchronousCloser: UInt = 0) -> (children: [Scope], own: [Disposal])? {
    guard lifecycle.everTookSomething else {
      // Nothing to dispose and no linked child was ever taken, and none can be now.
      if lifecycle.everAskedForLink { detachFromParent() }
      return nil
    }
    var overflow: [ScopedSlot] = []
    let taken = withStateIfMade { state -> (children: [Scope], own: [Disposal])? in
      guard let state else { return nil }
      if synchronousCloser != 0 { state.synchronousCloser = synchronousCloser }
      let own = state.disposals
      state.disposals = []
      // Dropped after the lock is released: freeing an instance runs its `deinit`.
      swap(&overflow, &state.scoped)
      return (state.children.isEmpty ? [] : state.children.takeAll(), own)
    }
    overflow.removeAll()
    guard let taken, !(taken.children.isEmpty && taken.own.isEmpty) else {
      if lifecycle.everAskedForLink { detachFromParent() }
      return nil
    }
    return taken
  }

  private func throwIfFailed(_ errors: [any Error]) throws {
    guard let first = errors.first else { return }
    throw ResolutionError(
      .disposalFailed(scope: chainDescription, firstKey: (first as? DisposalError)?.key),
      disposalErrors: errors)
  }

  static func collect(_ body: () throws -> Void) -> [any Error] {
    do {
      try body()
      return []
    } catch {
      return flatten(error)
    }
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
  static func runAsync(_ disposals: some Sequence<Disposal>) async -> [any Error] {
    var errors: [any Error] = []
    for disposal in disposals {
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
