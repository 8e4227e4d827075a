import CStrataThreadState
import Synchronization

/// What Strata remembers per thread while resolves run on it: how deep `Lazy`/`Provider` resolves
/// nest, which scope a shared instance's factory runs for, which shared instance a running
/// `Lazy`/`Provider` resolve feeds (so that what it makes is disposed after that instance), and
/// whether the thread's stack is nearly used up.
///
/// The state lives in a C `_Thread_local` (`Sources/CThreadState`), which Swift cannot declare:
/// reading it costs a load where a pthread key costs a library call, and the stack check compares
/// the caller's frame address, which AddressSanitizer's fake frames do not move. Invariant: only
/// the thread itself reaches its state, so no access needs synchronization; `ambientOwner` holds
/// no reference count, and is set only while a resolve that holds that scope runs a factory.
@usableFromInline
enum ThreadContext {
  /// How many `Lazy`/`Provider`/`@Injected` resolves enclose the running code on this thread.
  static var lazyNesting: Int {
    get { strata_thread_state().pointee.lazy_nesting }
    set { strata_thread_state().pointee.lazy_nesting = newValue }
  }

  /// The scope whose shared instance (singleton, weak, scoped) the innermost running factory on
  /// this thread makes, or `nil` when none does.
  @inlinable
  static var ambientOwner: ScopeRef? {
    get { strata_thread_state().pointee.ambient_owner.map { ScopeRef(unmanaged: .fromOpaque($0)) } }
    set { strata_thread_state().pointee.ambient_owner = newValue?.address }
  }

  /// The registration of the shared instance whose factory runs for ``ambientOwner``, or `nil`.
  @inlinable
  static var ambientHolder: RegistrationRef? {
    get { strata_thread_state().pointee.ambient_holder.map { RegistrationRef(unmanaged: .fromOpaque($0)) } }
    set { strata_thread_state().pointee.ambient_holder = newValue?.address }
  }

  /// The shared instance that the running `Lazy`, `Provider` or `@Injected` resolve on this
  /// thread feeds: its registration's identity and the scope the resolve runs in (the
  /// `ObjectIdentifier` bits of a scope the resolve holds); both 0 if none. What the resolve makes
  /// in that scope is a dependency of that instance, made after it.
  static var deferredHolder: (identity: UInt, scope: UInt) {
    get {
      let state = strata_thread_state()
      return (state.pointee.deferred_holder_identity, state.pointee.deferred_holder_scope)
    }
    set {
      let state = strata_thread_state()
      state.pointee.deferred_holder_identity = newValue.identity
      state.pointee.deferred_holder_scope = newValue.scope
    }
  }

  /// The scope whose cached instances this thread releases (`ObjectIdentifier` bits), or 0.
  static var releasingScope: UInt {
    get { strata_thread_state().pointee.releasing_scope }
    set { strata_thread_state().pointee.releasing_scope = newValue }
  }

  /// The scope whose synchronous close runs on this thread (its address), or 0.
  static var closingScope: UInt {
    get { strata_thread_state().pointee.closing_scope }
    set { strata_thread_state().pointee.closing_scope = newValue }
  }

  /// Whether `scope` is the owner of the shared instance whose factory (or deferred resolve) runs on
  /// this thread: one load and a compare, for fast paths that leave such resolves to the checked
  /// path (see ``ambientHolder(resolvingIn:)``).
  @inlinable @inline(__always)
  static func isAmbientOwner(_ scope: ScopeRef) -> Bool {
    strata_thread_state().pointee.ambient_owner == scope.address
  }

  /// The holder a resolve starting in `scope` builds for, when `scope` is the owner of the shared
  /// instance whose factory runs on this thread: then the resolve (through ``Scope/current``, or a
  /// captured reference to that scope) feeds that instance, and the lifetime rules apply to it.
  @inlinable @inline(__always)
  static func ambientHolder(resolvingIn scope: ScopeRef) -> RegistrationRef? {
    let state = strata_thread_state()
    guard state.pointee.ambient_owner == scope.address else { return nil }
    return state.pointee.ambient_holder.map { RegistrationRef(unmanaged: .fromOpaque($0)) }
  }

  /// The shard of a parent's list of children that the child scopes made on this thread use
  /// (see ``ChildShards``): handed out in turn to threads as each makes its first child scope, so
  /// that up to as many threads as there are shards each have one of their own. Never 0.
  static var childShard: UInt32 {
    let assigned = strata_thread_state().pointee.child_shard
    if _fastPath(assigned != 0) { return assigned }
    return assignChildShard()
  }

  /// The next thread's shard, counting from 1 (wrapping past 0).
  private static let nextChildShard = Atomic<UInt32>(0)

  private static func assignChildShard() -> UInt32 {
    var assigned = nextChildShard.wrappingAdd(1, ordering: .relaxed).newValue
    if assigned == 0 { assigned = nextChildShard.wrappingAdd(1, ordering: .relaxed).newValue }
    strata_thread_state().pointee.child_shard = assigned
    return assigned
  }

  /// The address of the object bound to the task-local at `key` (the `ObjectIdentifier` bits of a
  /// `TaskLocal<Object?>` of a class type) in the running task, or outside a task on this thread;
  /// 0 if none is bound. One runtime call, without retaining the value: for comparing
  /// identities, as in `Scope.withAmbientTaskLocal(_:_:)`.
  @inlinable @inline(__always)
  static func boundObject(atTaskLocal key: UInt) -> UInt {
    strata_task_local_object(key)
  }

  /// The scope bound to the task-local at `key` (the `ObjectIdentifier` bits of a
  /// `TaskLocal<Scope?>`), retained; `nil` if none is bound. The binding holds the scope for as
  /// long as the code running inside it, which this is, so the scope is alive when it is retained.
  static func boundScope(atTaskLocal key: UInt) -> Scope? {
    strata_task_local_object_pointer(key).map { ScopeRef(unmanaged: .fromOpaque($0)).scope }
  }

  /// Whether the code runs in a task that is cancelled (`false` outside any task): what
  /// `Task.isCancelled` answers, in two runtime calls where the standard library's getter, which
  /// is not inlinable, costs about 95 instructions.
  @inlinable @inline(__always)
  static var isCurrentTaskCancelled: Bool { strata_current_task_is_cancelled() }

  /// Whether the caller runs so near this thread's stack end that a resolve must stop with an
  /// error rather than recurse further.
  @inlinable @inline(__always)
  static var isStackNearlyExhausted: Bool { strata_stack_is_low() }
}
