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
      let resolved = DispatchSemaphore(value: 0)
      let made = Slot<WeakBox<LabeledService>>()
      Thread {
        if let service = try? tenant.resolve(LabeledService.self) { made.value = WeakBox(service) }
        resolved.signal()
      }.start()
      started.wait()
      let closed = DispatchSemaphore(value: 0)
      queue.async {
        try? tenant.close()
        closed.signal()
      }
      #expect(closed.wait(timeout: .now() + 10) == .success, "the close waited for the factory")
      #expect(resolved.wait(timeout: .now() + 10) == .success, "the factory never finished")
      // The resolve got its instance, and the closed scope (still held here) does not keep it.
      #expect(made.value != nil)
      #expect(made.value?.object == nil, "the closed scope kept the singleton made during its close")
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
    let resolved = DispatchSemaphore(value: 0)
    let made = Slot<WeakBox<LabeledService>>()
    Thread {
      if let service = try? tenant.resolve(LabeledService.self) { made.value = WeakBox(service) }
      resolved.signal()
    }.start()
    started.wait()
    try tenant.close()
    #expect(!returned.isRaised, "the close waited for the factory")
    proceed.signal()
    #expect(resolved.wait(timeout: .now() + 10) == .success)
    #expect(made.value != nil)
    #expect(made.value?.object == nil)
    #expect(resolutionError { _ = try tenant.resolve(LabeledService.self) }?.code == .scopeClosed)
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
      let resolved = DispatchSemaphore(value: 0)
      let made = Slot<WeakBox<LabeledService>>()
      Thread {
        if let service = try? request.resolve(LabeledService.self) { made.value = WeakBox(service) }
        resolved.signal()
      }.start()
      started.wait()
      try request.close()
      proceed.signal()
      #expect(resolved.wait(timeout: .now() + 10) == .success)
      #expect(made.value != nil)
      #expect(made.value?.object == nil, "the closed scope kept the scoped instance made during its close")
      withExtendedLifetime(request) {}
    }
  }
}
