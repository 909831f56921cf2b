/* SPDX-License-Identifier: MIT */
/* Description: FUTEX_WAIT_BITSET with a bitset of its own (not
 * FUTEX_BITSET_MATCH_ANY), made through syscall(2) on a user thread,
 * parks the thread with its bitset (intercept/syscall.c); before, it
 * went to the kernel and put the worker to sleep, so with one worker a
 * wake from another user thread never came (a watchdog kernel thread
 * wakes the word after 20 s and the test fails instead of hanging).
 *  - A waiter woken by a FUTEX_WAKE_BITSET sharing a bit with its own.
 *  - Waiters with bits 1, 2 and 3 on one word: a wake with bit 4 wakes no
 *    one (0); a wake with bit 1 wakes the 1 and 3 waiters, never a 2; a
 *    plain FUTEX_WAKE wakes the rest; each woken waiter counted once.
 *  - A timed wait with a bitset times out (ETIMEDOUT); bitset 0 is
 *    EINVAL, as the kernel says (same calls on a kernel thread).
 * With private futexes, with shared ones on private memory (parked), and
 * with shared ones on a MAP_SHARED mapping (waited for in the kernel on
 * the offload pool with the bitset, so the kernel picks). */
#include <capriccio.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "raw_futex.h"

enum { PER_BITS = 6, WATCHDOG_S = 20 };

static atomic_int gave_up;

struct words {
    atomic_uint word;
};
static struct words private_words;
static struct words *_Atomic words = &private_words;

static long futex(atomic_uint *word, int op, uint32_t val, const struct timespec *ts,
                  uint32_t bits)
{
    return syscall(SYS_futex, word, op | private_flag, val, ts, NULL, bits);
}

static long wake_bits(int n, uint32_t bits)
{
    return futex(&words->word, FUTEX_WAKE_BITSET, (uint32_t)n, NULL, bits);
}

/* A kernel thread: after WATCHDOG_S, wakes the word so that a test whose
 * waits blocked the workers fails rather than hangs. */
static void *watchdog(void *arg)
{
    (void)arg;
    sleep(WATCHDOG_S);
    atomic_store(&gave_up, 1);
    futex(&words->word, FUTEX_WAKE, INT_MAX, NULL, 0);
    return NULL;
}

struct waiter {
    uint32_t bits;
    atomic_int *done;
};

/* One wait on the word, which stays 0: only a wake-up ends it. */
static void *waiter(void *arg)
{
    struct waiter *w = arg;
    CHECK_EQ(futex(&words->word, FUTEX_WAIT_BITSET, 0, NULL, w->bits), 0);
    atomic_fetch_add(w->done, 1);
    return NULL;
}

static void let_run(void)
{
    for (int i = 0; i < 4; i++)
        cap_yield();
}

/* Wakes with bits until *done reaches want; each call wakes at most one.
 * Returns how many the calls counted. */
static long wake_until(atomic_int *done, int want, uint32_t bits)
{
    long counted = 0;
    while (atomic_load(done) < want) {
        CHECK(!atomic_load(&gave_up));
        long r = bits != 0 ? wake_bits(1, bits)
                           : futex(&words->word, FUTEX_WAKE, 1, NULL, 0);
        CHECK(r == 0 || r == 1);
        counted += r;
        cap_yield();
    }
    return counted;
}

static void one_waiter(void)
{
    atomic_int done = 0;
    struct waiter w = { 0x100, &done };
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, waiter, &w), 0);
    let_run();
    CHECK_EQ(wake_until(&done, 1, 0x101), 1);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
}

static void chosen_by_bits(void)
{
    atomic_int done1 = 0, done2 = 0, done3 = 0;
    struct waiter w1 = { 1, &done1 }, w2 = { 2, &done2 }, w3 = { 3, &done3 };
    cap_thread_t t[3 * PER_BITS];
    for (int i = 0; i < PER_BITS; i++) {
        CHECK_EQ(cap_thread_create(&t[3 * i], NULL, waiter, &w1), 0);
        CHECK_EQ(cap_thread_create(&t[3 * i + 1], NULL, waiter, &w2), 0);
        CHECK_EQ(cap_thread_create(&t[3 * i + 2], NULL, waiter, &w3), 0);
    }
    let_run();
    CHECK_EQ(wake_bits(INT_MAX, 4), 0);
    let_run();
    CHECK_EQ(atomic_load(&done1) + atomic_load(&done2) + atomic_load(&done3), 0);
    /* Bit 1: the 1 and 3 waiters, one a call. */
    long counted = 0;
    while (atomic_load(&done1) + atomic_load(&done3) < 2 * PER_BITS) {
        CHECK(!atomic_load(&gave_up));
        long r = wake_bits(1, 1);
        CHECK(r == 0 || r == 1);
        counted += r;
        cap_yield();
    }
    CHECK_EQ(counted, 2 * PER_BITS);
    let_run();
    CHECK_EQ(atomic_load(&done2), 0);
    CHECK_EQ(wake_until(&done2, PER_BITS, 0), PER_BITS);
    for (int i = 0; i < 3 * PER_BITS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
}

static void *bad_calls(void *arg)
{
    (void)arg;
    atomic_uint zero = 0;
    struct timespec abs;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &abs), 0);
    abs.tv_nsec += 2000000;
    if (abs.tv_nsec >= 1000000000) {
        abs.tv_nsec -= 1000000000;
        abs.tv_sec++;
    }
    fails_with(futex(&zero, FUTEX_WAIT_BITSET, 0, &abs, 0x10), ETIMEDOUT);
    fails_with(futex(&zero, FUTEX_WAIT_BITSET, 1, &abs, 0x10), EAGAIN);
    fails_with(futex(&zero, FUTEX_WAIT_BITSET, 0, &abs, 0), EINVAL);
    fails_with(futex(&zero, FUTEX_WAKE_BITSET, 1, NULL, 0), EINVAL);
    CHECK_EQ(futex(&zero, FUTEX_WAKE_BITSET, 1, NULL, 0x10), 0);
    return NULL;
}

static void run(void)
{
    atomic_store(&words->word, 0);
    bad_calls(NULL);
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, bad_calls, NULL), 0); /* glibc's: the kernel's answers */
    CHECK_EQ(pthread_join(k, NULL), 0);
    one_waiter();
    chosen_by_bits();
    CHECK(!atomic_load(&gave_up));
}

static void use_mapping(void *shared)
{
    words = shared;
}

int main(void)
{
    raw_futex_three_runs(watchdog, run, sizeof(struct words), use_mapping);
    return 0;
}
