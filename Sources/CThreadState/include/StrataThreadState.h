// What Strata keeps per thread, in C because Swift has no thread-local variables: a
// `_Thread_local` read costs one instruction where a pthread key costs a library call.
//
// Invariant: the state is reached only from its own thread (through `strata_thread_state()`), so
// its fields need no synchronization, and nothing it holds is retained: `ambient_owner` is set
// only while a resolve that holds that scope runs a factory.

#ifndef STRATA_THREAD_STATE_H
#define STRATA_THREAD_STATE_H

#include <stdbool.h>
#include <stdint.h>

#if __has_feature(nullability)
#pragma clang assume_nonnull begin
#endif

typedef struct strata_thread_state {
  /// The lowest stack address a resolve may reach before it stops with an error.
  uintptr_t stack_floor;
  /// The stack's highest address minus `stack_floor`; 0 until the stack is measured, and while
  /// it is unknown, so that every check then takes the slow path.
  uintptr_t stack_span;
  /// The bounds of this thread's stack, once measured; both 0 if they cannot be known.
  uintptr_t stack_lowest;
  uintptr_t stack_highest;
  /// Whether the stack was measured.
  bool stack_measured;
  /// How many `Lazy`/`Provider`/`@Injected` resolves enclose the running code on this thread.
  intptr_t lazy_nesting;
  /// The scope (unretained) whose shared instance the innermost running factory makes, or NULL.
  const void *_Nullable ambient_owner;
  /// The registration (unretained) of that shared instance, set and cleared with `ambient_owner`.
  const void *_Nullable ambient_holder;
  /// The identity (`AnyRegistration.identity`) of the registration whose instance a running
  /// `Lazy`, `Provider` or `@Injected` resolve feeds, or 0: what that resolve makes is disposed
  /// after that instance, not before.
  uintptr_t deferred_holder_identity;
  /// The scope (its address; held by the running resolve) whose disposals that applies to: the one
  /// the resolve runs in, which owns the instance.
  uintptr_t deferred_holder_scope;
  /// The scope (its address; held by the close that runs) whose cached instances this thread is
  /// releasing, or 0: a `deinit` that closes that scope again must not wait for that close.
  uintptr_t releasing_scope;
  /// The scope (its address; held by the close that runs) whose synchronous close this thread is
  /// running, or 0: a disposer that closes it or one of its ancestors must not wait for a close
  /// that itself waits for this one.
  uintptr_t closing_scope;
  /// Which shard of a parent's list of children the scopes this thread makes use (see
  /// `ChildShards`); 0 until the thread makes its first child scope.
  uint32_t child_shard;
} strata_thread_state_t;

extern _Thread_local strata_thread_state_t strata_thread_state_storage;

/// The calling thread's state.
static inline strata_thread_state_t *strata_thread_state(void) {
  return &strata_thread_state_storage;
}

/// The slow path of `strata_stack_is_low`: measures the stack on first use, and decides for an
/// address outside the fast range.
bool strata_stack_is_low_slow(uintptr_t address);

/// Whether the caller's frame is so near this thread's stack end that a resolve must stop: deeper
/// recursion would overflow it. `false` where the stack cannot be known (a stack the thread's
/// attributes do not describe, say), where only the depth limits apply.
static inline bool strata_stack_is_low(void) {
  strata_thread_state_t *state = &strata_thread_state_storage;
  uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
  if (__builtin_expect(frame - state->stack_floor < state->stack_span, 1)) {
    return false;
  }
  return strata_stack_is_low_slow(frame);
}

/// The Swift runtime's look-up of a task-local value, which `TaskLocal.get()` calls: the address of
/// the value bound to the task-local whose object is at `key`, in the current task (or, outside
/// any task, in the thread's own bindings); NULL if none is bound. A stable entry point of the
/// concurrency runtime, with the Swift calling convention.
__attribute__((swiftcall)) void *_Nullable swift_task_localValueGet(const void *key);

/// The object bound to the task-local at `key`, whose values are optional class references (one
/// word, 0 for `nil`), as its address, unretained; 0 when none is bound. (`TaskLocal.get()` is not
/// inlinable and runs unspecialised: about 170 instructions where this costs about 50, measured
/// with callgrind.)
static inline uintptr_t strata_task_local_object(uintptr_t key) {
  void *_Nullable value = swift_task_localValueGet((const void *)key);
  return value ? *(const uintptr_t *)value : 0;
}

/// `strata_task_local_object` as a pointer, NULL when none is bound: for a caller that retains the
/// object before the binding can end (it lives as long as the binding, which outlasts any
/// synchronous code running inside it).
static inline const void *_Nullable strata_task_local_object_pointer(uintptr_t key) {
  return (const void *)strata_task_local_object(key);
}

/// The running task, or NULL outside any task; and whether a task is cancelled. Stable entry
/// points of the concurrency runtime (what `withUnsafeCurrentTask` and `Task.isCancelled` call),
/// with the Swift calling convention.
__attribute__((swiftcall)) void *_Nullable swift_task_getCurrent(void);
__attribute__((swiftcall)) bool swift_task_isCancelled(void *task);

/// `Task.isCancelled`: whether the running task is cancelled; false outside any task.
static inline bool strata_current_task_is_cancelled(void) {
  void *_Nullable task = swift_task_getCurrent();
  return task != 0 && swift_task_isCancelled(task);
}

#if __has_feature(nullability)
#pragma clang assume_nonnull end
#endif

#endif
