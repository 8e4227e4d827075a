import Foundation
import Strata
import Synchronization
import Testing

/// Holds suspended tasks until it opens, without polling: 500 held rollbacks waking every
/// millisecond would crowd the cooperative pool that every other suite runs on.
private final class AsyncGate: Sendable {
  private let state = Locked<(isOpen: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

  func wait() async {
    await withCheckedContinuation { continuation in
      let isOpen = state.withLock { state in
        if !state.isOpen { state.waiting.append(continuation) }
        return state.isOpen
      }
      if isOpen { continuation.resume() }
    }
  }

  func open() {
    let waiting = state.withLock { state in
      state.isOpen = true
      defer { state.waiting = [] }
      return state.waiting
    }
    for continuation in waiting { continuation.resume() }
  }
}

/// A request's rollback: a held one waits until `release` opens, the others end at once. Counts
/// the held rollbacks that ended.
private final class HeldRollback: AsyncDisposable, Sendable {
  let isHeld: Bool
  private let release: AsyncGate
  private let heldEnded: Counter

  init(isHeld: Bool, release: AsyncGate, heldEnded: Counter) {
    self.isHeld = isHeld
    self.release = release
    self.heldEnded = heldEnded
  }

  func dispose() async throws {
    guard isHeld else { return }
    await release.wait()
    heldEnded.increment()
  }
}

/// The session's connection: remembers how many held rollbacks had ended when it was closed.
private final class SessionConnection: Disposable, Sendable {
  private let heldEnded: Counter
  private let endedBeforeClose = Atomic<Int>(-1)

  init(heldEnded: Counter) { self.heldEnded = heldEnded }

  func dispose() throws {
    endedBeforeClose.store(heldEnded.value, ordering: .sequentiallyConsistent)
  }

  /// The held rollbacks that had ended when the connection closed; -1 while it is open.
  var heldRollbacksEndedBeforeClose: Int { endedBeforeClose.load(ordering: .sequentiallyConsistent) }
}

/// A session whose requests are closed synchronously, each leaving its rollback to a background
/// task, far faster than those tasks end: the session keeps a list of the ones still running, from
/// which it drops finished ones as the list grows. However many there are, its close must wait for
/// every one still running, and only then close what the rollbacks need.
@Suite struct ManyLeftBehindTests {
  @Test func aSessionWaitsForEveryRunningRollbackAmongManyFinishedOnes() async throws {
    // The older half of the held rollbacks waits for `releaseOlder`, the newer half for
    // `releaseNewer`: the newer end first, so that a close waiting only for the newest tasks (the
    // list's tail) would close the connection while the older ones still run.
    let releaseOlder = AsyncGate()
    let releaseNewer = AsyncGate()
    // Opened on every way out, so that no rollback is left waiting.
    defer {
      releaseNewer.open()
      releaseOlder.open()
    }
    let heldEnded = Counter()
    let made = Counter()
    let container = try Container { registry in
      registry.register(SessionConnection.self, lifetime: .scoped(.session)) { _ in
        SessionConnection(heldEnded: heldEnded)
      }
      registry.register(HeldRollback.self, lifetime: .scoped(.request)) { _ in
        // Every third rollback is held; the others end while later requests are handed over.
        let number = made.increment()
        return HeldRollback(
          isHeld: number % 3 == 0, release: number <= 750 ? releaseOlder : releaseNewer,
          heldEnded: heldEnded)
      }
    }
    let session = try container.makeScope(.session)
    let connection = try session.resolve(SessionConnection.self)
    var held = 0
    for round in 0..<1_500 {
      let request = try session.makeScope(.request)
      if try request.resolve(HeldRollback.self).isHeld { held += 1 }
      #expect(throws: ResolutionError.self) { try closeSynchronously(request) }
      // Lets the rollbacks that are not held end, so that the list holds finished tasks to drop.
      if round % 50 == 49 { try await Task.sleep(for: .milliseconds(2)) }
    }

    let closing = Task { try await session.close() }
    try await Task.sleep(for: .milliseconds(50))
    #expect(connection.heldRollbacksEndedBeforeClose == -1, "the connection closed under running rollbacks")
    releaseNewer.open()
    try await Task.sleep(for: .milliseconds(50))
    #expect(connection.heldRollbacksEndedBeforeClose == -1, "the connection closed under older rollbacks")
    releaseOlder.open()
    try await closing.value

    #expect(held == 500)
    #expect(heldEnded.value == held)
    #expect(
      connection.heldRollbacksEndedBeforeClose == held, "the connection closed before every rollback ended")
  }
}
