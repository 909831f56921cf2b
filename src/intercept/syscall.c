/* SPDX-License-Identifier: MIT */
/*
 * syscall(2), libc's generic system call: what libraries that sleep on
 * futexes of their own call (C++20's std::atomic::wait, std::latch and
 * std::counting_semaphore in libstdc++; Rust's std Mutex, Condvar, Once
 * and thread parking). Made by the kernel on a user thread, such a futex
 * wait put the worker to sleep, and with it every user thread there: on
 * one worker, a wait for another user thread of it never ended.
 *
 * On a user thread, FUTEX_WAIT and FUTEX_WAIT_BITSET wait without the
 * worker (a bitset other than FUTEX_BITSET_MATCH_ANY kept with the wait,
 * so that FUTEX_WAKE_BITSET wakes only the waits sharing a bit with its
 * own, as the kernel's; park.h, cap__wait_on_bits):
 *  - a process-private futex (FUTEX_PRIVATE_FLAG: Rust's) parks the
 *    thread on the word (sched/park.h, cap__wait_on: the word compared
 *    under the bucket lock that wakers take); a signal handled in the
 *    thread ends it with 0, a wake-up the caller re-checks (the kernel's
 *    returns EINTR or restarts; callers loop on their condition either
 *    way);
 *  - so does a shared one (libstdc++ 12 makes its waits so: its private
 *    flag is never configured) on private anonymous memory, the heap or a
 *    stack: the kernel keys it by this process as a private one, so no
 *    other process can wake it (sync/futex_key.c);
 *  - a shared one on memory other processes may map (MAP_SHARED, a file)
 *    may be woken from another process, which only the kernel hears: the
 *    wait is made in the kernel on the offload pool (sync/shared_wait.c,
 *    cap__futex_wait_pooled; it holds a pool thread while it waits), and a
 *    caught signal ends it as the kernel's does.
 * Results as the kernel's: 0, EAGAIN (the word differed), ETIMEDOUT (the
 * relative timeout of FUTEX_WAIT; the absolute one of FUTEX_WAIT_BITSET
 * on CLOCK_MONOTONIC, or with FUTEX_CLOCK_REALTIME on CLOCK_REALTIME),
 * EINVAL (a misaligned word, a timespec out of range), EFAULT (a word or
 * timespec not there), EINTR.
 *
 * FUTEX_WAKE and FUTEX_WAKE_BITSET, from any thread, private or shared,
 * wake the user threads parked on the word first (the threads that linked
 * stacks make park in slices for the pool's wait among them,
 * shared_wait.c), then, for the rest of the count, threads asleep on it in
 * the kernel (pool threads, kernel threads, other processes'); the result
 * is how many of both.
 *
 * FUTEX_REQUEUE and FUTEX_CMP_REQUEUE, from any thread: the kernel's
 * call first (its checks and compare; its sleepers woken or moved to the
 * second word), then the user threads parked on the first word, up to
 * what is left of both counts, are woken where the kernel would have
 * moved them: each returns 0 to its caller, which looks at its condition
 * and waits again, as futex callers must after any wake-up (futex(2):
 * one may be spurious). A caller that counts on a moved waiter being
 * woken only by a later wake of the second word sees it woken early
 * (README, Limits). The result counts them with the kernel's.
 *
 * FUTEX_WAKE_OP, from any thread: the operation on the second word is
 * made here, atomically (a compare-and-swap loop, as the kernel's is a
 * locked instruction), then the first word's waiters are woken and, if
 * the old value passes the comparison, the second's: parked user threads
 * first, then the kernel's sleepers, as for FUTEX_WAKE. A call the kernel
 * would refuse (unknown operation or comparison, misaligned or
 * unwritable words) is made by the kernel, for its answer.
 *
 * Elsewhere (kernel threads' waits, waits in signal handlers), and for the
 * other operations (PI locks and their requeues), the kernel's: on a
 * user thread those block the worker, as before. A wake made without syscall() (an inline system call) does not
 * reach the user threads parked here (README, Limits).
 *
 * Every other number goes to the kernel unchanged, with libc's
 * convention (-1 and errno for results from -4095 to -1). The library's
 * own futex calls are raw system calls (util/futex.h), never these.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "arch/syscall.h"
#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "sched/park.h"
#include "sync/sync.h"
#include "util/clock.h"
#include "util/sigctx.h"

/* A futex wait's timeout as the sync layer's (*top: NULL for none), or a
 * -errno: FUTEX_WAIT's is relative, FUTEX_WAIT_BITSET's absolute on
 * CLOCK_MONOTONIC or, with FUTEX_CLOCK_REALTIME, on CLOCK_REALTIME (whose
 * steps the wait then follows, as the kernel's does). */
static long wait_timeout(const struct timespec *ts, bool absolute, bool realtime,
                         cap__timeout *to, cap__timeout **top)
{
    *top = NULL;
    if (ts == NULL)
        return 0;
    if (!cap__user_readable(ts, sizeof *ts))
        return -EFAULT;
    if (!cap__ic_timespec_valid(ts))
        return -EINVAL;
    struct timespec abs = *ts;
    if (!absolute) {
        uint64_t deadline = cap__ic_rel_deadline(ts);
        if (deadline == CAP__FOREVER)
            return 0;
        abs = cap__ns_to_timespec(deadline);
    }
    if (cap__timeout_init(to, absolute && realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, &abs) != 0)
        return -EINVAL;
    *top = to;
    return 0;
}

/* The park of a futex wait with its bitset (sync.h's cap__sync_wait, with
 * bits): 0 (maybe spurious), EAGAIN or ETIMEDOUT. */
static int park_on_word(_Atomic uint32_t *addr, uint32_t expected, cap__timeout *t,
                        uint32_t bits)
{
    for (;;) {
        uint64_t deadline = t != NULL ? t->deadline : CAP__FOREVER;
        int rc = deadline != CAP__FOREVER && cap__now() >= deadline
                     ? ETIMEDOUT
                     : cap__wait_on_bits(addr, expected, deadline, CAP__PARK_WAIT, bits);
        if (rc != ETIMEDOUT || cap__timeout_expired(t))
            return rc;
    }
}

/* A futex wait on a user thread (bits: its bitset, not 0): the result as
 * the kernel's. */
static long wait_on_word(uint32_t *word, uint32_t expected, const struct timespec *ts,
                         bool absolute, bool realtime, bool shared, uint32_t bits)
{
    cap__timeout to, *top; /* the timeout is checked first, as in the kernel */
    long bad = wait_timeout(ts, absolute, realtime, &to, &top);
    if (bad != 0)
        return bad;
    if ((uintptr_t)word % sizeof(uint32_t) != 0)
        return -EINVAL;
    if (!cap__user_readable(word, sizeof *word))
        return -EFAULT;
    _Atomic uint32_t *addr = (_Atomic uint32_t *)word;
    if (atomic_load(addr) != expected)
        return -EAGAIN; /* before a timeout that has passed, as in the kernel */
    if (shared && !cap__futex_key_local(word))
        return cap__futex_wait_pooled_bits(addr, expected, top, 0, bits);
    return -(long)park_on_word(addr, expected, top, bits);
}

/* A futex wake, private or shared: user threads parked on the word, then
 * threads asleep on it in the kernel, up to n in all. */
static long wake_word(uint32_t *word, int n, int op, uint32_t bitset)
{
    if ((uintptr_t)word % sizeof(uint32_t) != 0 || bitset == 0 ||
        !cap__user_readable(word, sizeof *word))
        return cap__sys6(SYS_futex, (long)word, op, n, 0, 0, bitset); /* the kernel's answer */
    return cap__futex_wake_both((_Atomic uint32_t *)word, n, op, bitset);
}

/* The user threads parked on word, up to n of them (n <= 0: none). In a
 * signal handler, which cannot take the bucket lock, all of them by the
 * signal dispatch, counted as none (cap__futex_wake_both does the same). */
static int wake_parked(uint32_t *word, long n)
{
    if (n <= 0)
        return 0;
    if (cap__in_signal_handler()) {
        cap__wake_on_deferred((_Atomic uint32_t *)word);
        return 0;
    }
    return cap__wake_on((_Atomic uint32_t *)word, n > INT32_MAX ? INT32_MAX : (int)n);
}

/* FUTEX_REQUEUE, FUTEX_CMP_REQUEUE (see the top): the kernel's call, then
 * the parked user threads of the first word, up to the rest of its counts. */
static long requeue(const long a[6])
{
    long r = cap__sys6(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r < 0)
        return r; /* refused (EAGAIN: the word differed), nothing moved */
    long wake = (int)a[2], move = (int)(uint32_t)a[3]; /* both >= 0: checked */
    return r + wake_parked((uint32_t *)a[0], wake + move - r);
}

static int sign_extend12(uint32_t v)
{
    return (int)(v ^ 0x800) - 0x800;
}

/* FUTEX_WAKE_OP's operation on *word (its encoding in enc): the old value. */
static uint32_t apply_op(_Atomic uint32_t *word, uint32_t enc)
{
    uint32_t arg = (uint32_t)sign_extend12((enc >> 12) & 0xfff);
    if (enc & ((uint32_t)FUTEX_OP_OPARG_SHIFT << 28))
        arg = UINT32_C(1) << (arg & 31); /* the kernel masks a count out of range */
    switch ((enc >> 28) & 7) {
    case FUTEX_OP_SET:
        return atomic_exchange(word, arg);
    case FUTEX_OP_ADD:
        return atomic_fetch_add(word, arg);
    case FUTEX_OP_OR:
        return atomic_fetch_or(word, arg);
    case FUTEX_OP_ANDN:
        return atomic_fetch_and(word, ~arg);
    default: /* FUTEX_OP_XOR: the others were left to the kernel */
        return atomic_fetch_xor(word, arg);
    }
}

/* Whether FUTEX_WAKE_OP's comparison (in enc) holds for old. */
static bool op_compare(uint32_t old, uint32_t enc)
{
    int v = (int)old, arg = sign_extend12(enc & 0xfff);
    switch ((enc >> 24) & 15) {
    case FUTEX_OP_CMP_EQ:
        return v == arg;
    case FUTEX_OP_CMP_NE:
        return v != arg;
    case FUTEX_OP_CMP_LT:
        return v < arg;
    case FUTEX_OP_CMP_LE:
        return v <= arg;
    case FUTEX_OP_CMP_GT:
        return v > arg;
    default: /* FUTEX_OP_CMP_GE: the others were left to the kernel */
        return v >= arg;
    }
}

static bool aligned(const uint32_t *word)
{
    return (uintptr_t)word % sizeof(uint32_t) == 0;
}

/* FUTEX_WAKE_OP (see the top). */
static long wake_op(const long a[6])
{
    uint32_t *first = (uint32_t *)a[0], *second = (uint32_t *)a[4];
    int op = (int)a[1];
    uint32_t enc = (uint32_t)a[5];
    bool shared = !(op & FUTEX_PRIVATE_FLAG);
    if (((enc >> 28) & 7) > FUTEX_OP_XOR || ((enc >> 24) & 15) > FUTEX_OP_CMP_GE ||
        !aligned(first) || !aligned(second) || (shared && !cap__user_readable(first, 4)) ||
        !cap__user_writable(second, 4))
        return cap__sys6(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]); /* its answer */
    int n1 = (int)a[2], n2 = (int)(uint32_t)a[3];
    int wake = FUTEX_WAKE | (op & FUTEX_PRIVATE_FLAG);
    uint32_t old = apply_op((_Atomic uint32_t *)second, enc);
    /* As the kernel's: a count below 1 still wakes one. */
    long r = cap__futex_wake_both((_Atomic uint32_t *)first, n1 > 0 ? n1 : 1, wake, 0);
    if (r < 0)
        r = 0; /* (not expected: the words were checked) */
    if (op_compare(old, enc)) {
        long r2 = cap__futex_wake_both((_Atomic uint32_t *)second, n2 > 0 ? n2 : 1, wake, 0);
        if (r2 > 0)
            r += r2;
    }
    return r;
}

/* Whether the runtime makes this futex call (then *r is its result). */
static bool futex(const long a[6], long *r)
{
    /* The int arguments are the registers' low halves, as the kernel
     * reads them. */
    uint32_t *word = (uint32_t *)a[0];
    int op = (int)a[1];
    bool shared = !(op & FUTEX_PRIVATE_FLAG);
    const struct timespec *ts = (const struct timespec *)a[3];
    int n = (int)a[2];
    if (n <= 0)
        n = 1; /* the kernel's count: it wakes one before it compares */
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
        if (!cap__ic_user())
            return false;
        *r = wait_on_word(word, (uint32_t)a[2], ts, false, false, shared,
                          FUTEX_BITSET_MATCH_ANY);
        return true;
    case FUTEX_WAIT_BITSET:
        if ((uint32_t)a[5] == 0 || !cap__ic_user())
            return false; /* (no bits: the kernel's EINVAL) */
        *r = wait_on_word(word, (uint32_t)a[2], ts, true, (op & FUTEX_CLOCK_REALTIME) != 0,
                          shared, (uint32_t)a[5]);
        return true;
    case FUTEX_WAKE:
        if (op & FUTEX_CLOCK_REALTIME)
            return false; /* the kernel refuses it (ENOSYS) */
        *r = wake_word(word, n, op, FUTEX_BITSET_MATCH_ANY); /* (the kernel ignores it) */
        return true;
    case FUTEX_WAKE_BITSET:
        if (op & FUTEX_CLOCK_REALTIME)
            return false;
        *r = wake_word(word, n, op, (uint32_t)a[5]);
        return true;
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE:
        *r = requeue(a);
        return true;
    case FUTEX_WAKE_OP:
        if (op & FUTEX_CLOCK_REALTIME)
            return false; /* the kernel refuses it (ENOSYS) */
        *r = wake_op(a);
        return true;
    default:
        return false;
    }
}

/* Reads six arguments whatever the call takes, as libc's does (the
 * registers the kernel would read); not instrumented, since the last may
 * lie in the caller's frame past what it passed. */
__attribute__((no_sanitize_address)) long syscall(long nr, ...)
{
    long a[6];
    va_list ap;
    va_start(ap, nr);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    long r;
    if (nr != SYS_futex || !futex(a, &r))
        r = cap__sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (r < 0 && r >= -4095) {
        errno = (int)-r;
        return -1;
    }
    return r;
}
