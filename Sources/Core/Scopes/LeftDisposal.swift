import Synchronization

/// What a synchronous close left to a background task: an ``AsyncDisposable`` instance and
/// everything older, or a parent's instances that follow a child's such task.
///
/// The parent's instances may be what the child's were built from, so they must be disposed after
/// that task, however the parent is closed later. A closing child keeps its task (a close that
/// waited for this one then follows it), and hands it to its parent if it is still linked there;
/// the parent's close waits for every task it was handed. The task raises a flag when done, so
/// that a long-lived parent drops finished ones instead of keeping one per closed child.
struct LeftDisposal: Sendable {
  private let task: Task<Void, Never>
  private let identity: Identity

  /// Starts a task of its own, which nobody cancels, that waits for `earlier` (what children
  /// left behind) and then runs `work`, the disposals of `scope` left to it.
  ///
  /// The task runs as a close of `scope` (see ``ClosingChain``): a disposer in it that closes
  /// `scope` or an ancestor does not wait for this task, which runs that disposer.
  init(
    of scope: Scope, after earlier: [LeftDisposal], _ work: @escaping @Sendable () async -> Void
  ) {
    let identity = Identity(earlier: earlier.map(\.identity))
    let chain = ClosingChain(scope: scope, next: Scope.closingChain, leftDisposal: identity)
    self.identity = identity
    task = Task {
      await Scope.$closingChain.withValue(chain) {
        for left in earlier { await left.wait() }
        await work()
      }
      chain.end()
      identity.done.store(true, ordering: .releasing)
    }
  }

  /// Whether the task ran to its end.
  var isFinished: Bool { identity.done.load(ordering: .acquiring) }

  /// Suspends until the task ran to its end; returns at once when the current task is that task,
  /// or one it waits for (a disposer in it closing an ancestor): waiting would wait forever.
  func wait() async {
    if Scope.closingChain?.runs(identity) == true { return }
    await task.value
  }

  /// One ``LeftDisposal``: raised when its task is done, and what that task waits for.
  final class Identity: Sendable {
    let done = Atomic<Bool>(false)
    private let earlier: [Identity]

    init(earlier: [Identity]) { self.earlier = earlier }

    /// Whether this is `other`, or the task of `other` is one this task waits for.
    func waits(for other: Identity) -> Bool {
      self === other || earlier.contains { $0.waits(for: other) }
    }
  }
}

/// The ``LeftDisposal`` tasks children handed to their parent (`ScopeState.childrenLeftBehind`):
/// the parent's close waits for each one still running.
///
/// Finished tasks are dropped whenever the list has doubled since it was last pruned, so a
/// long-lived parent keeps at most about twice the tasks still running, and a hand-over costs
/// O(1) amortized. (Pruning at every hand-over scanned the whole list under the parent's lock:
/// a server closing requests synchronously with an `AsyncDisposable` faster than their tasks
/// finished spent most of its time there.)
struct LeftBehindList {
  /// The tasks handed over, oldest first; some may have finished.
  private(set) var tasks: [LeftDisposal] = []
  /// The count at which the next hand-over prunes first.
  private var pruneAt = LeftBehindList.smallest

  /// Below this many tasks the list is never pruned.
  private static let smallest = 16

  /// Adds `left`, first dropping finished tasks if the list has doubled since the last time.
  mutating func append(_ left: LeftDisposal) {
    if tasks.count >= pruneAt {
      tasks.removeAll { $0.isFinished }
      pruneAt = max(Self.smallest, tasks.count * 2)
    }
    tasks.append(left)
  }

  /// Every task handed over, leaving the list empty.
  mutating func takeAll() -> [LeftDisposal] {
    defer { self = LeftBehindList() }
    return tasks
  }
}

extension Scope {
  /// What this scope's own close left to a background task, once that close has finished.
  var leftBehindByClose: LeftDisposal? {
    withStateIfMade { $0?.leftBehind }
  }

}

/// The disposals a ``LeftDisposal`` task runs, which it takes once: the task, not its closure, then
/// holds the last references to the instances.
///
/// (`Mutex`, not Strata's `Lock`: it is taken once, by the task, after the task was created, which
/// already orders it after `init` for ThreadSanitizer, and it keeps the type checked `Sendable`.)
final class PendingDisposals: Sendable {
  private let storage: Mutex<[Disposal]>

  init(_ disposals: [Disposal]) { storage = Mutex(disposals) }

  /// The disposals, once; empty after that.
  func take() -> [Disposal] {
    storage.withLock { disposals in
      defer { disposals = [] }
      return disposals
    }
  }
}
