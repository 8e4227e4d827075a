import Strata
import Testing

/// The awaited close disposes each instance once, newest first, and returns only when every
/// disposer (asynchronous ones included) has finished: with slow, throwing, resolving and
/// closing disposers, with disposers that close their own scope or the container, with many
/// closes (cancelled ones too) waiting for one, and with requests racing the container's close.
@Suite struct AssaultAsyncCloseTests {
  /// Asynchronous disposers that sleep, throw, resolve from their closing scope and close a
  /// sibling scope: each runs once, newest first; the one failure is reported; the resolve is
  /// `scopeClosed`; closing the container afterwards disposes nothing again.
  @Test func awaitedCloseRunsSlowThrowingResolvingAndClosingDisposersOnceInReverseOrder() async throws {
    let log = Collector<String>()
    let requestSlot = Slot<Scope>()
    let siblingSlot = Slot<Scope>()
    let resolveOutcome = Slot<String>()
    let container = try Container { registry in
      registry.register(RecordingAsyncDisposer.self, name: "conn", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("conn", log: log) { try await Task.sleep(for: .milliseconds(10)) }
      }
      registry.register(RecordingAsyncDisposer.self, name: "fails", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("fails", log: log) { throw DisposalFailure(label: "fails") }
      }
      registry.register(RecordingAsyncDisposer.self, name: "resolver", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("resolver", log: log) {
          do {
            _ = try requestSlot.value?.resolve(Widget.self)
            resolveOutcome.value = "resolved"
          } catch let error as ResolutionError {
            resolveOutcome.value = error.code.description
          } catch {
            resolveOutcome.value = "other \(error)"
          }
        }
      }
      registry.register(RecordingAsyncDisposer.self, name: "closer", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("closer", log: log) { try await siblingSlot.value?.close() }
      }
      registry.register(RecordingAsyncDisposer.self, name: "sibling", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("sibling", log: log) { try await Task.sleep(for: .milliseconds(10)) }
      }
      registry.register(Widget.self, lifetime: .scoped(.request)) { _ in Widget(id: 0) }
    }
    let request = try container.makeScope(.request)
    let sibling = try container.makeScope(.request)
    requestSlot.value = request
    siblingSlot.value = sibling
    let siblingProbe = try sibling.resolve(RecordingAsyncDisposer.self, name: "sibling")
    let probes = try ["conn", "fails", "resolver", "closer"].map {
      try request.resolve(RecordingAsyncDisposer.self, name: $0)
    }

    let error = await asyncResolutionError { try await request.close() }

    #expect(error?.code == .disposalFailed)
    #expect(error?.disposalErrors.count == 1)
    let failures = underlyingErrors(error?.disposalErrors ?? []).compactMap { $0 as? DisposalFailure }
    #expect(failures == [DisposalFailure(label: "fails")])
    #expect(log.elements == ["sibling", "closer", "resolver", "fails", "conn"])
    #expect(probes.map(\.disposeCount) == [1, 1, 1, 1])
    #expect(siblingProbe.disposeCount == 1)
    #expect(resolveOutcome.value == "scopeClosed")
    try await container.close()
    #expect(probes.map(\.disposeCount) == [1, 1, 1, 1])
    #expect(siblingProbe.disposeCount == 1)
  }

  /// An asynchronous disposer that awaits the close of its own scope, directly and from a child
  /// task: the close returns without an error, and every disposer ran, newest first.
  @Test func anAsyncDisposerAwaitingTheCloseOfItsOwnScopeReturns() async throws {
    let log = Collector<String>()
    let scopeSlot = Slot<Scope>()
    let container = try Container { registry in
      registry.register(RecordingAsyncDisposer.self, name: "old", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("old", log: log)
      }
      registry.register(RecordingAsyncDisposer.self, name: "self-closer", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("self-closer", log: log) {
          try await scopeSlot.value?.close()
          // And from a child task, which counts as the disposer.
          try await Task { try await scopeSlot.value?.close() }.value
        }
      }
    }
    let request = try container.makeScope(.request)
    scopeSlot.value = request
    _ = try request.resolve(RecordingAsyncDisposer.self, name: "old")
    _ = try request.resolve(RecordingAsyncDisposer.self, name: "self-closer")

    let result = await taskResult { try await request.close() }

    #expect(result != nil, "the close hung")
    if case .failure(let error)? = result { Issue.record("close threw \(error)") }
    #expect(log.elements == ["self-closer", "old"])
  }

  /// An asynchronous request disposer that awaits the container's close: no hang, no error, the
  /// container ends closed, and the singleton and both request instances are disposed once.
  @Test func anAsyncDisposerClosingItsParentDoesNotHangAndDisposesEverythingOnce() async throws {
    let log = Collector<String>()
    let containerSlot = Slot<Scope>()
    let container = try Container { registry in
      registry.register(RecordingDisposer.self, lifetime: .singleton) { _ in
        RecordingDisposer("root-singleton", log: log)
      }
      registry.register(RecordingAsyncDisposer.self, name: "old", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("old", log: log)
      }
      registry.register(RecordingAsyncDisposer.self, name: "closes-root", lifetime: .scoped(.request)) { _ in
        RecordingAsyncDisposer("closes-root", log: log) { try await containerSlot.value?.close() }
      }
    }
    containerSlot.value = container
    let singleton = try container.resolve(RecordingDisposer.self)
    let request = try container.makeScope(.request)
    let old = try request.resolve(RecordingAsyncDisposer.self, name: "old")
    let closer = try request.resolve(RecordingAsyncDisposer.self, name: "closes-root")

    let result = await taskResult { try await request.close() }

    #expect(result != nil, "the close hung")
    if case .failure(let error)? = result { Issue.record("close threw \(error)") }
    #expect(singleton.disposeCount == 1)
    #expect(old.disposeCount == 1)
    #expect(closer.disposeCount == 1)
    #expect(container.isClosed)
    #expect(log.elements.contains("root-singleton"))
  }

  /// Twenty awaited closes of one scope whose disposer sleeps 20 ms: none returns before that
  /// disposer finished, and it runs once. 5 rounds.
  @Test func concurrentAwaitedClosesAllReturnOnlyAfterTheSlowDisposerFinished() async throws {
    for round in 0..<5 {
      let log = Collector<String>()
      let container = try Container { registry in
        registry.register(RecordingAsyncDisposer.self, lifetime: .scoped(.request)) { _ in
          RecordingAsyncDisposer("slow", log: log) { try await Task.sleep(for: .milliseconds(20)) }
        }
      }
      let request = try container.makeScope(.request)
      let probe = try request.resolve(RecordingAsyncDisposer.self)
      let early = Counter()
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<20 {
          group.addTask {
            try await request.close()
            if probe.disposeCount != 1 || log.elements.isEmpty { early.increment() }
          }
        }
        try await group.waitForAll()
      }
      #expect(early.value == 0, "round \(round): \(early.value) closes returned before the disposer finished")
      #expect(probe.disposeCount == 1)
    }
  }

  /// Eight awaited closes that wait for a first, held one and are cancelled while they wait:
  /// none throws or returns before the held disposer finished, and it runs once. Whether a close
  /// is cancelled before or during its wait, it must wait. 5 rounds.
  @Test func cancelledWaitingClosesStillReturnOnlyAfterTheFirstCloseFinished() async throws {
    for round in 0..<5 {
      let log = Collector<String>()
      let started = OneShotGate()
      let release = OneShotGate()
      let container = try Container { registry in
        registry.register(RecordingAsyncDisposer.self, lifetime: .scoped(.request)) { _ in
          RecordingAsyncDisposer("slow", log: log) {
            started.open()
            await release.wait()
          }
        }
      }
      let request = try container.makeScope(.request)
      let probe = try request.resolve(RecordingAsyncDisposer.self)
      let first = Task { try await request.close() }
      await started.wait()
      let closing = Counter()
      let early = Counter()
      let errors = Collector<String>()
      var waiters: [Task<Void, Never>] = []
      for _ in 0..<8 {
        waiters.append(
          Task {
            closing.increment()
            do { try await request.close() } catch { errors.append("\(error)") }
            if log.elements.isEmpty { early.increment() }
          })
      }
      #expect(await eventually { closing.value == 8 })
      // Lets the waiters reach their wait; a waiter cancelled before it must wait all the same.
      try await Task.sleep(for: .milliseconds(2))
      for waiter in waiters { waiter.cancel() }
      try await Task.sleep(for: .milliseconds(2))
      release.open()
      try await first.value
      for waiter in waiters { await waiter.value }
      #expect(
        early.value == 0, "round \(round): \(early.value) cancelled closes returned before the disposal ended"
      )
      #expect(errors.elements.isEmpty, "round \(round): \(errors.elements)")
      #expect(probe.disposeCount == 1)
    }
  }

  // MARK: - A storm of requests while the container closes

  /// 200 tasks each running a request through `withScope` while the container closes: every
  /// request either runs or fails with `scopeClosed`; each instance handed out before the close
  /// began is disposed when the close returns, before the root singleton; in the end every
  /// instance made is disposed once. 3 rounds, the close starting later each round.
  @Test(.timeLimit(.minutes(1)))
  func twoHundredRequestsWhileTheContainerClosesDisposeEverythingOnceAndBeforeCloseReturns() async throws {
    for round in 0..<3 {
      let log = Collector<String>()
      let made = Collector<RecordingAsyncDisposer>()
      let madeSync = Collector<RecordingDisposer>()
      let returned = Collector<RecordingAsyncDisposer>()
      let container = try Container { registry in
        registry.register(RecordingDisposer.self, name: "root", lifetime: .singleton) { _ in
          RecordingDisposer("root", log: log)
        }
        registry.register(RecordingAsyncDisposer.self, lifetime: .scoped(.request)) { _ in
          let probe = RecordingAsyncDisposer("request", log: log) {
            try await Task.sleep(for: .milliseconds(1))
          }
          made.append(probe)
          return probe
        }
        registry.register(RecordingDisposer.self, lifetime: .scoped(.request)) { _ in
          let probe = RecordingDisposer("request-sync", log: log)
          madeSync.append(probe)
          return probe
        }
      }
      let root = try container.resolve(RecordingDisposer.self, name: "root")
      let started = Counter()
      let unexpected = Collector<String>()
      var closeError: (any Error)?
      await withTaskGroup(of: Void.self) { group in
        for index in 0..<200 {
          group.addTask {
            started.increment()
            do {
              try await container.withScope(.request) { scope in
                if index % 2 == 0 { _ = try scope.resolve(RecordingDisposer.self) }
                let probe = try scope.resolve(RecordingAsyncDisposer.self)
                returned.append(probe)
                try await Task.sleep(for: .microseconds(200))
                _ = try scope.resolve(RecordingAsyncDisposer.self)
              }
            } catch let error as ResolutionError where error.code == .scopeClosed {
              // The container closed before the request began, or while its body ran.
            } catch let error as ScopeExitError {
              if (error.bodyError as? ResolutionError)?.code != .scopeClosed {
                unexpected.append("exit: \(error)")
              }
            } catch {
              unexpected.append("\(error)")
            }
          }
        }
        #expect(await eventually { started.value >= 60 + round * 40 })
        let snapshot = returned.elements
        do { try await container.close() } catch { closeError = error }
        let notYet = snapshot.filter { $0.disposeCount != 1 }
        let undisposed = "\(notYet.count) of \(snapshot.count) instances handed out before the close"
        #expect(notYet.isEmpty, "round \(round): \(undisposed) were not disposed when it returned")
        #expect(root.disposeCount == 1)
        let lastRequest = snapshot.map(\.disposedAt).max() ?? 0
        #expect(root.disposedAt > lastRequest, "the root singleton was disposed before a request's instance")
        await group.waitForAll()
      }
      if let closeError { Issue.record("round \(round): the container's close threw \(closeError)") }
      #expect(unexpected.elements.isEmpty, "round \(round): \(unexpected.elements.prefix(3))")
      #expect(await eventually(timeout: .seconds(5)) { made.elements.allSatisfy { $0.disposeCount == 1 } })
      #expect(madeSync.elements.allSatisfy { $0.disposeCount == 1 })
      #expect(root.disposeCount == 1)
    }
  }
}
