import Dispatch
import Foundation
import Strata
import Testing

// A close does not wait for a singleton factory running on another thread (the factory may be
// waiting for the closer), and what that factory makes is not kept by the closed scope.

@Suite(.serialized) struct CloseDuringCreationTests {
  /// The factory waits for the queue that runs the close: if the close waited for the factory,
  /// neither would ever finish.
  @Test func closingAScopeDoesNotWaitForItsSingletonsFactory() throws {
    for _ in 0..<5 {
      let queue = DispatchQueue(label: "owned state")
      let started = DispatchSemaphore(value: 0)
      let tenant = try Container().makeScope(.session) { registry in
        registry.register(LabeledService.self, lifetime: .singleton) { _ in
          started.signal()
          usleep(20_000)
          return LabeledService(queue.sync { "made" })  // needs the queue the close runs on
        }
      }
      let resolving = ResolveOnThread(tenant)
      started.wait()
      let closed = DispatchSemaphore(value: 0)
      queue.async {
        try? tenant.close()
        closed.signal()
      }
      #expect(closed.wait(timeout: .now() + 10) == .success, "the close waited for the factory")
      #expect(resolving.finished(within: 10), "the factory never finished")
      // The resolve got its instance, and the closed scope (still held here) does not keep it.
      #expect(resolving.didResolve)
      #expect(resolving.instanceIsFreed, "the closed scope kept the singleton made during its close")
      withExtendedLifetime(tenant) {}
    }
  }

  /// The same with the closer blocked until the factory has returned: the close finishes first,
  /// then the late instance is released, and a later resolve is `scopeClosed`.
  @Test func aSingletonMadeWhileItsScopeClosedIsNotKept() throws {
    let started = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let returned = Flag()
    let tenant = try Container().makeScope(.session) { registry in
      registry.register(LabeledService.self, lifetime: .singleton) { _ in
        started.signal()
        _ = proceed.wait(timeout: .now() + 5)
        returned.raise()
        return LabeledService("late")
      }
    }
    let resolving = ResolveOnThread(tenant)
    started.wait()
    try tenant.close()
    #expect(!returned.isRaised, "the close waited for the factory")
    proceed.signal()
    #expect(resolving.finished(within: 10))
    #expect(resolving.didResolve)
    #expect(resolving.instanceIsFreed)
    #expect(resolutionError { _ = try tenant.resolve(LabeledService.self) }?.code == .scopeClosed)
  }

  /// A disposable singleton whose factory returns after its scope closed is disposed exactly once,
  /// at once, and its resolve is `scopeClosed`: the close did not wait for it, and nothing of the
  /// closed scope keeps or disposes it again.
  @Test func aDisposableSingletonMadeWhileItsScopeClosedIsDisposedOnce() throws {
    let started = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let made = Slot<TrackedResource>()
    let tenant = try Container().makeScope(.session) { registry in
      registry.register(TrackedResource.self, lifetime: .singleton) { _ in
        started.signal()
        _ = proceed.wait(timeout: .now() + 5)
        let resource = TrackedResource("late")
        made.value = resource
        return resource
      }
    }
    let outcome = Slot<String>()
    let done = DispatchSemaphore(value: 0)
    Thread {
      outcome.value =
        (resolutionError { _ = try tenant.resolve(TrackedResource.self) }?.code).map { "\($0)" } ?? "ok"
      done.signal()
    }.start()
    started.wait()
    try tenant.close()
    proceed.signal()
    #expect(done.wait(timeout: .now() + 10) == .success)
    #expect(outcome.value == "scopeClosed")
    #expect(made.value?.disposeCount == 1)
    try tenant.close()
    #expect(made.value?.disposeCount == 1)
  }

  /// A scoped instance whose factory returns after its scope closed is handed to the resolve, but
  /// the closed scope (still held) does not keep it.
  @Test func aScopedInstanceMadeWhileItsScopeClosedIsNotKept() throws {
    for _ in 0..<20 {
      let started = DispatchSemaphore(value: 0)
      let proceed = DispatchSemaphore(value: 0)
      let container = try Container { registry in
        registry.register(LabeledService.self, lifetime: .scoped(.request)) { _ in
          started.signal()
          _ = proceed.wait(timeout: .now() + 5)
          return LabeledService("late")
        }
      }
      let request = try container.makeScope(.request)
      let resolving = ResolveOnThread(request)
      started.wait()
      try request.close()
      proceed.signal()
      #expect(resolving.finished(within: 10))
      #expect(resolving.didResolve)
      #expect(resolving.instanceIsFreed, "the closed scope kept the scoped instance made during its close")
      withExtendedLifetime(request) {}
    }
  }
}

/// Resolves `LabeledService` from a scope on a thread of its own, and keeps only a weak reference
/// to what it got.
final class ResolveOnThread: Sendable {
  private let done = DispatchSemaphore(value: 0)
  private let made = Slot<WeakBox<LabeledService>>()

  init(_ scope: Scope) {
    Thread { [done, made] in
      if let service = try? scope.resolve(LabeledService.self) { made.value = WeakBox(service) }
      done.signal()
    }.start()
  }

  func finished(within seconds: Int) -> Bool { done.wait(timeout: .now() + .seconds(seconds)) == .success }

  /// Whether the resolve returned an instance.
  var didResolve: Bool { made.value != nil }

  /// Whether that instance is gone, now that the thread dropped it.
  var instanceIsFreed: Bool { made.value?.object == nil }
}
