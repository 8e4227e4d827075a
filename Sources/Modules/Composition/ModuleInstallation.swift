import Strata
import Synchronization

/// What installations share: the process-wide lock that runs them one at a time up to their
/// publication, and the plan each one loads.
enum ModuleInstallation {
  /// One module of an installation's plan.
  struct Step {
    let module: any Module
    /// The modules installed before it (in the scope, its ancestors, or earlier in the plan): a
    /// composition does not load those of its parts again.
    let loadedBefore: LoadedBefore
  }

  /// The parts of a composition loaded before its step of a plan: installed in the scope chain
  /// before the installation, or loaded by an earlier step. Made for compositions only (no other
  /// module reads it), from their parts alone: a table of every module per step, or one shared by
  /// the steps, kept the scope chain's every identity alive with each hook (quadratic memory and
  /// time for modules installed one at a time).
  struct LoadedBefore {
    private let loaded: Set<ModuleID>

    /// Nothing loaded before: a composition installed on its own loads every part.
    static let nothing = LoadedBefore(loaded: [])

    init(loaded: Set<ModuleID>) {
      self.loaded = loaded
    }

    func contains(_ id: ModuleID) -> Bool { loaded.contains(id) }
  }

  /// What the scopes of a chain had installed when an installation began: each scope's set of
  /// identities, shared with the scope (copy-on-write) rather than collected into one.
  struct Installed {
    private var sets: [Set<AnyHashable>] = []

    mutating func add(_ set: Set<AnyHashable>) {
      if !set.isEmpty { sets.append(set) }
    }

    func contains(_ id: ModuleID) -> Bool {
      let id = AnyHashable(id)
      return sets.contains { $0.contains(id) }
    }
  }

  private static let lock = Lock()
  /// The last sequence number a ``PendingHook`` took.
  static let hookSequence = Atomic<Int>(0)
  /// How many hooks exist that have not run to their end (see `PendingHook`): while there are
  /// none, an installation need not look for hooks left unrun.
  static let unfinishedHooks = Atomic<Int>(0)
  /// The thread holding `lock`, or 0. Only the holder stores its own identifier, so a thread that
  /// reads its own has the lock.
  private static let owner = Atomic<UInt>(0)

  /// Waits until no other thread installs modules, and returns the hold that keeps them out until
  /// it is released: when the installation's registrations are published (its eager singletons
  /// and hooks, user code that may take long, run after), or when it fails.
  ///
  /// Re-entrant: a module's `register(in:)` that installs modules itself (into any scope) runs on
  /// in the installation it is part of rather than waiting for itself.
  ///
  /// One lock for the process, not one per scope: a child scope's installation reads what its
  /// ancestors have installed, and installations are rare (start-up, a session's features).
  ///
  /// Held while the modules' `register(in:)` run, which is user code: the one lock Strata holds
  /// across user code that is not a per-entry once-guard. `register(in:)` only stages
  /// registrations; one that waits for another thread installing modules would deadlock. (Waiting
  /// only for the modules another installation has claimed, with the cycle check the once-guards
  /// make, would lift this.)
  static func hold() -> Hold {
    let thread = currentThreadID()
    if owner.load(ordering: .relaxed) == thread, let outermost { return Hold(nestedIn: outermost) }
    lock.lock()
    owner.store(thread, ordering: .relaxed)
    let hold = Hold(nestedIn: nil)
    outermost = hold
    return hold
  }

  /// The hold of the installation that took `lock`. `nonisolated(unsafe)` because `lock`, not the
  /// compiler, guards it: only the thread holding `lock` reads or writes it (`hold()` reads it
  /// after seeing its own thread in `owner`, or writes it after taking `lock`; `release()` clears
  /// it before unlocking).
  nonisolated(unsafe) private static var outermost: Hold?

  /// The installing thread's hold on the lock; released once, by that thread.
  ///
  /// An installation nested in another one's `register(in:)` does not hold the lock itself: its
  /// hooks, user code that may wait for other threads' installations, are handed to the outermost
  /// installation, which runs them once it has released the lock. (Its eager singletons are still
  /// made under the lock.) An outermost installation that fails still runs the hooks handed to it.
  final class Hold {
    private var isHeld: Bool
    /// The outermost installation's hold, for a nested installation; `nil` for the outermost.
    let outermost: Hold?
    /// What nested installations left to run after the lock is released, in their order.
    private var deferred: [() throws -> Void] = []

    fileprivate init(nestedIn outermost: Hold?) {
      self.outermost = outermost
      isHeld = outermost == nil
    }

    func release() {
      guard isHeld else { return }
      isHeld = false
      ModuleInstallation.outermost = nil
      ModuleInstallation.owner.store(0, ordering: .relaxed)
      ModuleInstallation.lock.unlock()
    }

    /// Keeps `work` (a nested installation's hooks) for ``runDeferred()``.
    func runAfterRelease(_ work: @escaping () throws -> Void) {
      deferred.append(work)
    }

    /// Runs what nested installations left, in their order; stops at the first that throws.
    func runDeferred() throws {
      let work = deferred
      deferred = []
      for item in work { try item() }
    }

    /// Runs what nested installations left, each whatever the others do, for an outermost
    /// installation that failed and reports its own error: a hook that throws here stays unrun,
    /// and runs when its module is installed again in that scope.
    func runDeferredIgnoringFailures() {
      let work = deferred
      deferred = []
      for item in work { try? item() }
    }

    deinit { release() }
  }
}

extension Module {
  /// Registers this module; a composition skips its parts in `loaded`.
  func register(in registry: Registrar, skipping loaded: ModuleInstallation.LoadedBefore) {
    if let composition = self as? OverridingModule {
      composition.register(in: registry, skipping: loaded)
    } else {
      register(in: registry)
    }
  }

  /// Runs this module's hook; a composition skips the hooks of its parts in `loaded`.
  func loaded(in scope: Scope, skipping loaded: ModuleInstallation.LoadedBefore) throws {
    if let composition = self as? OverridingModule {
      try composition.loaded(in: scope, skipping: loaded)
    } else {
      try self.loaded(in: scope)
    }
  }
}
