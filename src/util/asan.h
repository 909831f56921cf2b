/* SPDX-License-Identifier: MIT */
/*
 * Whether this translation unit is built with AddressSanitizer
 * (CAP__ASAN), the one hook every non-returning exit from runtime
 * frames needs under it, and the registration of the runtime's own
 * long-lived mappings with LeakSanitizer (cap__asan_root, below). A jump that leaves frames of the runtime's own
 * (a longjmp made by the library's interposer, a handler's escape) must
 * unpoison the stack it abandons: ASan's interceptor of longjmp does so
 * before it calls ours, but our frames above that point (their locals'
 * redzones) stay poisoned, and the program's next frames there report a
 * stack-buffer-underflow. Called last, just before the jump.
 */
#ifndef CAP_UTIL_ASAN_H
#define CAP_UTIL_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define CAP__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAP__ASAN 1
#endif
#endif

#include <stddef.h>

#ifdef CAP__ASAN
void __asan_handle_no_return(void);
void __lsan_register_root_region(const void *p, size_t size);
#endif

/* Unpoisons the stack this thread is about to leave by a jump. */
static inline void cap__asan_leaving_frames(void)
{
#ifdef CAP__ASAN
    __asan_handle_no_return();
#endif
}

/* Memory the runtime maps for itself and keeps for the process's life
 * (the handle table's and the descriptor table's chunks) holds pointers
 * to heap objects: a TCB's stack record, a descriptor's callback
 * argument. LeakSanitizer looks for pointers only in the heap, globals
 * and stacks, so such a mapping is made a root region, or the objects
 * it points to are reported as leaked. */
static inline void cap__asan_root(const void *p, size_t n)
{
#ifdef CAP__ASAN
    __lsan_register_root_region(p, n);
#else
    (void)p;
    (void)n;
#endif
}

/* Sanitized builds (util/asan_fork.c): register, at start-up, adds the
 * fork handlers that hold the sanitizer's thread registry and allocator
 * locked across a fork, so that the child does not inherit them held by
 * a thread it does not have; settle, for a fork that runs no handlers
 * (_Fork), waits at most 5 ms until every other kernel thread is blocked
 * in a system call that does not map memory. Nothing in other builds. */
#ifdef CAP__ASAN
void cap__asan_fork_register(void);
void cap__asan_fork_settle(void);
#else
static inline void cap__asan_fork_register(void)
{
}
static inline void cap__asan_fork_settle(void)
{
}
#endif

#endif /* CAP_UTIL_ASAN_H */
