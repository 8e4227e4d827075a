#if !defined(__APPLE__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // pthread_getattr_np; before any system header
#endif

#include "StrataThreadState.h"

#include <pthread.h>

_Thread_local strata_thread_state_t strata_thread_state_storage;

/// The room kept free below a resolve (every nested resolve checks it): an eighth of the stack,
/// at least 32 KiB but never more than a quarter of the stack (a 64 KiB thread keeps 16 KiB, and
/// can still resolve), at most 1 MiB.
static uintptr_t strata_stack_reserve(uintptr_t size) {
  uintptr_t reserve = size / 8;
  if (reserve < 32 * 1024) reserve = 32 * 1024;
  if (reserve > size / 4) reserve = size / 4;
  if (reserve > 1024 * 1024) reserve = 1024 * 1024;
  return reserve;
}

/// The calling thread's stack as [lowest, highest); false if it cannot be known.
static bool strata_measure_stack(uintptr_t *lowest, uintptr_t *highest) {
#if defined(__APPLE__)
  pthread_t thread = pthread_self();
  uintptr_t top = (uintptr_t)pthread_get_stackaddr_np(thread);
  uintptr_t size = (uintptr_t)pthread_get_stacksize_np(thread);
  *lowest = top - size;
  *highest = top;
  return size != 0;
#else
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return false;
  void *base = 0;
  size_t size = 0;
  int status = pthread_attr_getstack(&attributes, &base, &size);
  pthread_attr_destroy(&attributes);
  if (status != 0 || base == 0 || size == 0) return false;
  *lowest = (uintptr_t)base;
  *highest = (uintptr_t)base + size;
  return true;
#endif
}

bool strata_stack_is_low_slow(uintptr_t address) {
  strata_thread_state_t *state = &strata_thread_state_storage;
  if (!state->stack_measured) {
    state->stack_measured = true;
    uintptr_t lowest = 0, highest = 0;
    if (strata_measure_stack(&lowest, &highest)) {
      uintptr_t reserve = strata_stack_reserve(highest - lowest);
      state->stack_lowest = lowest;
      state->stack_highest = highest;
      state->stack_floor = lowest + reserve;
      state->stack_span = highest > state->stack_floor ? highest - state->stack_floor : 0;
    }
  }
  // Not on the measured stack (or none was measured): nothing to judge by.
  if (address < state->stack_lowest || address >= state->stack_highest) return false;
  return address < state->stack_floor;
}
