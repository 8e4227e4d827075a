import Dispatch
import Foundation
import Strata
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A connection whose factory takes a while, as opening one does.
private final class SlowConnection: Sendable {}

/// A connection that counts its disposals.
private final class CountedConnection: Disposable, Sendable {
  private let disposed: Locked<Int>

  init(disposed: Locked<Int>) { self.disposed = disposed }

  func dispose() { disposed.withLock { $0 += 1 } }
}

/// The processor time the calling thread has used, in seconds.
private func threadProcessorTime() -> Double {
  var time = timespec()
  _ = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// A thread that asks for a scoped instance another thread is making waits for it without
/// keeping a processor busy: a request's tasks that all need its connection while the first opens
/// it (for milliseconds) must not take a core each from the server meanwhile.
@Suite(.serialized) struct ScopedCreationWaitTests {
  private struct Waited: Sendable {
    let instance: ObjectIdentifier?
    let processorSeconds: Double
  }

  @Test func aThreadWaitingForAnotherThreadsScopedInstanceBlocksRatherThanSpins() throws {
    let factoryEntered = DispatchSemaphore(value: 0)
    let factorySeconds = 0.4
    let container = try Container { registry in
      registry.register(SlowConnection.self, lifetime: .scoped(.request)) { _ in
        factoryEntered.signal()
        usleep(UInt32(factorySeconds * 1e6))
        return SlowConnection()
      }
    }
    let request = try container.makeScope(.request)

    let created = Slot<ObjectIdentifier>()
    let creatorDone = DispatchSemaphore(value: 0)
    Thread {
      if let connection = try? request.resolve(SlowConnection.self) {
        created.value = ObjectIdentifier(connection)
      }
      creatorDone.signal()
    }.start()
    #expect(factoryEntered.wait(timeout: .now() + 30) == .success)

    let waited = Slot<Waited>()
    let waiterDone = DispatchSemaphore(value: 0)
    Thread {
      let before = threadProcessorTime()
      let connection = try? request.resolve(SlowConnection.self)
      let after = threadProcessorTime()
      waited.value = Waited(instance: connection.map(ObjectIdentifier.init), processorSeconds: after - before)
      waiterDone.signal()
    }.start()

    #expect(creatorDone.wait(timeout: .now() + 30) == .success)
    #expect(waiterDone.wait(timeout: .now() + 30) == .success)
    let result = try #require(waited.value)
    #expect(result.instance != nil && result.instance == created.value, "one instance for both threads")
    // A waiter that spins (it did, with `sched_yield`) uses about all of the factory's time on an
    // idle machine, and 0.14 s of 0.4 s with a build competing for both cores; one that blocks
    // uses a few milliseconds (it wakes on its own every few, to check again), and 0.04 s with the
    // whole test suite running beside it (a clean-clone CI run failed at the limit of a tenth).
    #expect(
      result.processorSeconds < factorySeconds / 4,
      "the waiting thread used \(result.processorSeconds) s of processor time while the factory ran \(factorySeconds) s"
    )
    try request.close()
  }

  /// A request handler that fans out: its child tasks all ask for the request's connection while
  /// the first opens it. They share one connection, which the request's close disposes once.
  @Test func aRequestsChildTasksAskingForItsConnectionAtOnceShareOneDisposedOnce() async throws {
    let made = Locked(0)
    let disposed = Locked(0)
    let container = try Container { registry in
      registry.register(CountedConnection.self, lifetime: .scoped(.request)) { _ in
        made.withLock { $0 += 1 }
        usleep(50_000)  // opening it takes a while
        return CountedConnection(disposed: disposed)
      }
    }
    for _ in 0..<5 {
      let identities = try await container.withScope(.request) { request in
        try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
          for _ in 0..<8 {
            group.addTask { ObjectIdentifier(try request.resolve(CountedConnection.self)) }
          }
          var identities: Set<ObjectIdentifier> = []
          for try await identity in group { identities.insert(identity) }
          return identities
        }
      }
      #expect(identities.count == 1, "the request's tasks got \(identities.count) connections")
    }
    #expect(made.withLock { $0 } == 5, "one connection per request")
    #expect(disposed.withLock { $0 } == 5, "each disposed once, when its request closed")
    try await container.close()
  }

  /// The waiter of a creation that fails is woken and makes the instance itself.
  @Test func aThreadWaitingForACreationThatFailsIsWokenAndMakesItsOwn() throws {
    let factoryEntered = DispatchSemaphore(value: 0)
    let attempts = Locked(0)
    let container = try Container { registry in
      registry.register(SlowConnection.self, lifetime: .scoped(.request)) { _ in
        let attempt = attempts.withLock { count -> Int in
          count += 1
          return count
        }
        if attempt == 1 {
          factoryEntered.signal()
          usleep(200_000)
          throw StressBodyFault()
        }
        return SlowConnection()
      }
    }
    let request = try container.makeScope(.request)
    let creatorDone = DispatchSemaphore(value: 0)
    let creatorFailed = Flag()
    Thread {
      if (try? request.resolve(SlowConnection.self)) == nil { creatorFailed.raise() }
      creatorDone.signal()
    }.start()
    #expect(factoryEntered.wait(timeout: .now() + 30) == .success)

    let waiterGot = Flag()
    let waiterDone = DispatchSemaphore(value: 0)
    Thread {
      if (try? request.resolve(SlowConnection.self)) != nil { waiterGot.raise() }
      waiterDone.signal()
    }.start()

    #expect(creatorDone.wait(timeout: .now() + 30) == .success)
    #expect(waiterDone.wait(timeout: .now() + 30) == .success)
    #expect(creatorFailed.isRaised, "the first factory threw")
    #expect(waiterGot.isRaised, "the waiter made the instance once the first creation failed")
    #expect(attempts.withLock { $0 } == 2)
    try request.close()
  }
}
