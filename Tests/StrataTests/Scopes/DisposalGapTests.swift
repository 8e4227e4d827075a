import Foundation
import Strata
import Testing

/// Nothing made is left undisposed, nothing is disposed out of order, and no disposal error is lost.
@Suite struct DisposalGapTests {
  /// Made eagerly before the failing one.
  final class EarlyResource: Disposable, Sendable {
    let disposed = Flag()
    func dispose() throws { disposed.raise() }
  }

  @Test func aContainerWhoseLaterEagerSingletonThrowsDisposesTheEarlierOnes() throws {
    let made = Slot<EarlyResource>()
    let error = try #require(throws: ResolutionError.self) {
      _ = try Container { registry in
        registry.register(EarlyResource.self, lifetime: .eagerSingleton) { _ in
          let resource = EarlyResource()
          made.value = resource
          return resource
        }
        registry.register(Widget.self, lifetime: .eagerSingleton) { _ in throw FixtureError(code: 7) }
      }
    }
    #expect(error.code == .factoryFailed)
    #expect(made.value?.disposed.isRaised == true, "an eager singleton of a failed container leaked")
  }

  @Test func anInstanceWhoseActivationHookThrowsIsDisposed() throws {
    for lifetime in [Lifetime.transient, .singleton, .scoped, .graph] {
      let log = Collector<String>()
      let container = try Container { registry in
        registry.register(TrackedResource.self, lifetime: lifetime) { _ in TrackedResource("made", log: log) }
          .onActivated { _, _ in throw FixtureError(code: 2) }
      }
      let error = try #require(throws: ResolutionError.self) { try container.resolve(TrackedResource.self) }
      #expect(error.code == .activationFailed)
      #expect(log.elements == ["dispose made"], "\(lifetime): the discarded instance was not disposed")
      try container.close()
      #expect(log.elements == ["dispose made"], "\(lifetime): disposed twice")
    }
  }

  @Test func aSecondCloseWaitsForTheFirstToFinish() async throws {
    for _ in 0..<5 {
      let log = Collector<String>()
      let started = Flag()
      let container = try Container { registry in
        registry.register(SlowResource.self, lifetime: .scoped(.request)) { _ in
          SlowResource("slow", log: log, started: started)
        }
      }
      let request = try container.makeScope(.request)
      _ = try request.resolve(SlowResource.self)
      let finished = await runOnThreads(2) { index in
        if index == 0 {
          try? request.close()
        } else {
          while !started.isRaised { usleep(100) }
          try? request.close()
          log.append("second close returned")
        }
      }
      #expect(finished)
      #expect(log.elements == ["dispose slow", "second close returned"])
    }
  }

  @Test func aParentClosingWhileAnotherThreadClosesAChildDisposesTheChildFirst() async throws {
    for _ in 0..<5 {
      let log = Collector<String>()
      let started = Flag()
      let container = try Container { registry in
        registry.register(TrackedResource.self, lifetime: .singleton) { _ in TrackedResource("root", log: log)
        }
        registry.register(SlowResource.self, lifetime: .scoped(.request)) { _ in
          SlowResource("request", log: log, started: started)
        }
      }
      _ = try container.resolve(TrackedResource.self)
      let request = try container.makeScope(.request)
      _ = try request.resolve(SlowResource.self)
      let finished = await runOnThreads(2) { index in
        if index == 0 {
          try? request.close()
        } else {
          while !started.isRaised { usleep(100) }
          try? container.close()
        }
      }
      #expect(finished)
      #expect(log.elements == ["dispose request", "dispose root"])
    }
  }

  @Test func anAsyncSecondCloseWaitsForTheFirstToFinish() async throws {
    let log = Collector<String>()
    let started = Flag()
    let container = try Container { registry in
      registry.register(SlowResource.self, lifetime: .scoped(.request)) { _ in
        SlowResource("slow", log: log, started: started)
      }
    }
    let request = try container.makeScope(.request)
    _ = try request.resolve(SlowResource.self)
    async let first: Void = request.close()
    while !started.isRaised { try await Task.sleep(for: .microseconds(100)) }
    try await request.close()
    log.append("second close returned")
    try await first
    #expect(log.elements == ["dispose slow", "second close returned"])
  }

  @Test func aDisposerThatClosesItsOwnScopeDoesNotWaitForItself() async throws {
    final class SelfCloser: Disposable, Sendable {
      let scope = Slot<Scope>()
      func dispose() throws { try scope.value?.close() }
    }
    let container = try Container { registry in
      registry.register(SelfCloser.self, lifetime: .scoped(.request)) { _ in SelfCloser() }
    }
    let outcome = await withDeadline(.seconds(5)) { () -> Bool in
      do {
        let request = try container.makeScope(.request)
        try request.resolve(SelfCloser.self).scope.value = request
        try request.close()
        return true
      } catch {
        return false
      }
    }
    #expect(outcome == true, "a disposer closing its own scope deadlocked or failed")
  }

  @Test func cancellingTheHandlerDoesNotCutItsScopesDisposalShort() async throws {
    for _ in 0..<50 {
      let completed = Flag()
      let container = try Container { registry in
        registry.register(RollbackResource.self, lifetime: .scoped(.request)) { _ in
          RollbackResource(completed: completed)
        }
      }
      let handler = Task {
        try await container.withScope(.request) { scope in
          _ = try scope.resolve(RollbackResource.self)
          withUnsafeCurrentTask { $0?.cancel() }  // the client went away
          try await Task.sleep(for: .seconds(10))
        }
      }
      let result = await handler.result
      #expect(throws: CancellationError.self) { try result.get() }
      #expect(completed.isRaised, "the rollback was cut short by the handler's cancellation")
    }
  }

  @Test func anAsyncWithScopeWhoseBodyNeverAwaitsStillAwaitsItsDisposers() async throws {
    let completed = Flag()
    let container = try Container { registry in
      registry.register(RollbackResource.self, lifetime: .scoped(.request)) { _ in
        RollbackResource(completed: completed)
      }
    }
    let handler = Task {
      try await container.withScope(.request) { scope in
        _ = try scope.resolve(RollbackResource.self)
        withUnsafeCurrentTask { $0?.cancel() }
        throw HandlerFailure()
      }
    }
    await #expect(throws: HandlerFailure.self) { try await handler.value }
    #expect(completed.isRaised, "a body without await picked the synchronous withScope")
  }

  @Test func aDisposalErrorOnTheThrowPathReachesTheCaller() async throws {
    let container = try Container { registry in
      registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
        TrackedResource("failing", fails: true)
      }
    }
    do {
      try await container.withScope(.request) { scope in
        _ = try scope.resolve(TrackedResource.self)
        try await Task.sleep(for: .microseconds(1))
        throw HandlerFailure()
      }
      Issue.record("the body's error was lost")
    } catch let error as ScopeExitError {
      #expect(error.bodyError is HandlerFailure)
      #expect(error.disposalErrors.count == 1)
    }
  }

  @Test func aWeakRegistrationOfAValueIsInvalid() throws {
    let container = try Container { registry in
      registry.register(Greeting.self, lifetime: .weak) { _ in Greeting(text: "hi") }
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve(Greeting.self) }
    #expect(error.code == .invalidRegistration)
    #expect(error.hint?.contains("value") == true)
  }
}
