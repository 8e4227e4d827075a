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
  private let done: DoneFlag

  /// Starts `work` in a task of its own, which nobody cancels.
  init(_ work: @escaping @Sendable () async -> Void) {
    let done = DoneFlag()
    self.done = done
    task = Task {
      await work()
      done.value.store(true, ordering: .releasing)
    }
  }

  /// Whether the task ran to its end.
  var isFinished: Bool { done.value.load(ordering: .acquiring) }

  /// Suspends until the task ran to its end.
  func wait() async { await task.value }
}

/// Raised by a ``LeftDisposal``'s task when it is done.
private final class DoneFlag: Sendable {
  let value = Atomic<Bool>(false)
}

extension Scope {
  /// What this scope's own close left to a background task, once that close has finished.
  var leftBehindByClose: LeftDisposal? {
    withStateIfMade { $0?.leftBehind }
  }

  /// Unlinks this scope from its parent's list of children to close, if it is linked, at the
  /// end of its close. What the close left to a background task (`left`) is kept here first, for
  /// a close of this scope that waits for this one, and handed to the parent if this scope was
  /// still linked there: the parent's close then waits for it.
  func detachFromParent(leaving left: LeftDisposal?) {
    guard let left else { return detachFromParent() }
    withState { $0.leftBehind = left }
    guard let parent = links.parent else { return }
    let wasLinked = parent.with { parent in
      parent.withState { state in
        guard state.children.unlink(self) else { return false }
        state.childrenLeftBehind.removeAll { $0.isFinished }
        state.childrenLeftBehind.append(left)
        return true
      }
    }
    // Give back the list's retain, outside the lock; the caller holds another.
    if wasLinked { ChildList.giveBack(self) }
  }
}
