/* SPDX-License-Identifier: MIT */
/*
 * Timed waits for the sync primitives: absolute times on the caller's
 * clock turned into our monotonic deadlines (see sync.h for the clock-set
 * rule), the one wait loop they all use, and the small shared helpers.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched/worker.h"
#include "sync/sync.h"
#include "thread/thread.h"

enum { NS_PER_S = 1000000000 };

static __thread char kthread_tag; /* its address names a foreign kernel thread */

uint64_t cap__sync_self_id(void)
{
    cap__thread *self = cap__current();
    if (self != NULL)
        return cap__thread_handle(self);
    return (uint64_t)(uintptr_t)&kthread_tag | (UINT64_C(1) << 63);
}

/* getpid() is a system call: only owner-tracking shared objects pay it. */
uint64_t cap__sync_shared_self_id(uint32_t *gen)
{
    uint64_t pid = (uint64_t)(uint32_t)getpid() << 32;
    cap__thread *self = cap__current();
    if (self != NULL) {
        cap_thread_t handle = cap__thread_handle(self);
        *gen = (uint32_t)(handle >> 32);
        return pid | (uint32_t)handle;
    }
    *gen = 0;
    return (UINT64_C(1) << 63) | pid | (uint32_t)syscall(SYS_gettid);
}

int cap__pshared_check(int pshared)
{
    return pshared == CAP_PROCESS_PRIVATE || pshared == CAP_PROCESS_SHARED ? 0 : EINVAL;
}

/* abs - now in nanoseconds: 0 if abs has passed, saturating at UINT64_MAX. */
static uint64_t ns_until(const struct timespec *abs, const struct timespec *now)
{
    if (abs->tv_sec < now->tv_sec ||
        (abs->tv_sec == now->tv_sec && abs->tv_nsec <= now->tv_nsec))
        return 0;
    uint64_t sec = (uint64_t)abs->tv_sec - (uint64_t)now->tv_sec;
    if (sec >= UINT64_MAX / NS_PER_S - 1)
        return UINT64_MAX;
    return sec * NS_PER_S + (uint64_t)abs->tv_nsec - (uint64_t)now->tv_nsec;
}

/* On CLOCK_MONOTONIC, our own clock, abs is the deadline: two readings
 * with a preemption between them would move it later by as much (and
 * could put waits with nearby deadlines out of order). Otherwise the
 * caller's clock is read first and ours second, so the deadline can only
 * land after abs, never before. */
static void refresh(cap__timeout *t)
{
    if (t->clock == CLOCK_MONOTONIC) {
        t->deadline = ns_until(&t->abs, &(struct timespec){ 0, 0 });
        return;
    }
    struct timespec now;
    clock_gettime(t->clock, &now);
    t->deadline = cap__deadline_after(ns_until(&t->abs, &now));
}

int cap__timeout_init(cap__timeout *t, clockid_t clock, const struct timespec *abs)
{
    if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
        return EINVAL;
    if (abs == NULL || abs->tv_nsec < 0 || abs->tv_nsec >= NS_PER_S)
        return EINVAL;
    t->clock = clock;
    t->abs = *abs;
    refresh(t);
    return 0;
}

bool cap__timeout_expired(cap__timeout *t)
{
    struct timespec now;
    clock_gettime(t->clock, &now);
    if (ns_until(&t->abs, &now) == 0)
        return true;
    refresh(t);
    return false;
}

int cap__sync_wait(const _Atomic uint32_t *addr, uint32_t expected, cap__timeout *t,
                   enum cap__park_reason reason, bool cancellable)
{
    return cap__sync_wait_loop(addr, expected, t, reason, cancellable, NULL);
}
