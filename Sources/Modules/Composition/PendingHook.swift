import Strata
import Synchronization

/// A step's `loaded` hook, listed among its scope's installed module identities from the step's
/// claim on (compared by identity), with whether it has run. An installation whose hook or eager
/// singleton failed leaves the hooks after it unrun, for the next installation of those modules
/// to run.
///
/// Several installations may list one hook (one that installs a module another thread is still
/// loading, or that retries a failed hook): one of them runs it, and the others wait until it has
/// run before they run the hooks after it, so that hooks run in load order whichever thread runs
/// them. An installation that skipped a hook another thread was running ran the hooks after it at
/// once, while the hook they rely on had not finished (or was about to fail).
final class PendingHook: Hashable, Sendable {
  /// The module whose hook this is.
  let module: any Module
  /// What the hook of a composition skips (see ``ModuleInstallation/LoadedBefore``), until the
  /// hook has run: then it is dropped, so that a scope does not keep, for each installation, a
  /// table of every module installed before it (1,000 one-module installations kept ~70 MiB).
  private let loadedBefore: Mutex<ModuleInstallation.LoadedBefore?>
  /// Orders hooks left by different installations: load order within one, installation order
  /// across them.
  let sequence: Int
  /// Whether the hook ran to its end without throwing.
  private let done = Atomic<Bool>(false)
  /// The thread running the hook, or 0.
  private let runner = Atomic<UInt>(0)
  /// Held by the thread running the hook, for as long as it runs: what other installations wait on.
  private let running = Lock()

  init(_ step: ModuleInstallation.Step) {
    module = step.module
    loadedBefore = Mutex(step.loadedBefore)
    sequence = ModuleInstallation.hookSequence.add(1, ordering: .relaxed).newValue
    ModuleInstallation.unfinishedHooks.add(1, ordering: .releasing)
  }

  deinit {
    if !hasRun { ModuleInstallation.unfinishedHooks.subtract(1, ordering: .releasing) }
  }

  /// Whether the hook ran to its end.
  var hasRun: Bool { done.load(ordering: .acquiring) }

  /// Whether the hook still keeps the table of what was loaded before it (until it has run).
  var keepsLoadedBefore: Bool { loadedBefore.withLock { $0 != nil } }

  /// Marks the hook as running on this thread and returns `true`, for the caller to run it and
  /// then call ``finish(succeeded:)``; or returns `false` once it has run.
  ///
  /// Waits while another thread runs it; if that run throws, claims it for this thread (a retry,
  /// as installing the module again would make). Does not wait, and returns `false`, for a hook
  /// this thread runs itself (a hook that installs its own module again), or when waiting would
  /// close a cycle of hooks that wait for each other (two hooks on two threads, each installing
  /// the other's module): the hook then counts as run by the thread that runs it, as it did
  /// before installations waited.
  func claim() -> Bool {
    let thread = currentThreadID()
    while !hasRun {
      if runner.load(ordering: .acquiring) == thread { return false }
      if running.tryLock() {
        if hasRun {
          running.unlock()
          return false
        }
        runner.store(thread, ordering: .releasing)
        return true
      }
      guard HookWaits.begin(thread, waitingFor: self) else { return false }
      running.lock()
      running.unlock()
      HookWaits.end(thread)
    }
    return false
  }

  /// Runs the hook in `scope`, once ``claim()`` gave it to this thread.
  func run(in scope: Scope) throws {
    try module.loaded(in: scope, skipping: loadedBefore.withLock { $0 } ?? .nothing)
  }

  /// Ends the run ``claim()`` began: the hook counts as run if it `succeeded`, and is left to run
  /// again if it threw.
  func finish(succeeded: Bool) {
    if succeeded {
      loadedBefore.withLock { $0 = nil }
      done.store(true, ordering: .releasing)
      ModuleInstallation.unfinishedHooks.subtract(1, ordering: .releasing)
    }
    runner.store(0, ordering: .releasing)
    running.unlock()
  }

  /// The thread running the hook, or 0.
  fileprivate var runningThread: UInt { runner.load(ordering: .acquiring) }

  static func == (lhs: PendingHook, rhs: PendingHook) -> Bool { lhs === rhs }

  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Which thread waits for which hook, so that a wait that would close a cycle is not begun.
///
/// `@unchecked Sendable`: `waiting` is read and written only under `lock`.
private final class HookWaits: @unchecked Sendable {
  private static let shared = HookWaits()
  private let lock = Lock()
  /// The hook each waiting thread waits for.
  private var waiting: [UInt: PendingHook] = [:]

  /// Records that `thread` waits for `hook`; `false` (nothing recorded) if the thread running
  /// `hook` waits, directly or through others, for a hook that `thread` runs.
  static func begin(_ thread: UInt, waitingFor hook: PendingHook) -> Bool {
    shared.lock.withLock {
      var next = hook
      // Each thread waits for one hook at a time: the walk ends within as many steps as threads wait.
      for _ in 0...shared.waiting.count {
        let runner = next.runningThread
        if runner == thread { return false }
        guard runner != 0, let further = shared.waiting[runner] else { break }
        next = further
      }
      shared.waiting[thread] = hook
      return true
    }
  }

  /// Records that `thread` no longer waits.
  static func end(_ thread: UInt) {
    _ = shared.lock.withLock { shared.waiting.removeValue(forKey: thread) }
  }
}
