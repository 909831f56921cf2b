/* SPDX-License-Identifier: MIT */
/* Description: futex waits and wakes made through syscall(2), as libraries
 * with locks of their own make them (libstdc++'s std::atomic::wait, Rust's
 * std), park the user thread instead of its worker (intercept/syscall.c):
 *  - pairs of user threads pass a token back and forth through
 *    futex-based semaphores (one side waits with FUTEX_WAIT, the other
 *    with FUTEX_WAIT_BITSET, Rust's call); with one worker the kernel's
 *    wait slept the only worker and no one could post (a watchdog kernel
 *    thread gives up after 20 s and the test fails instead of hanging);
 *  - user threads parked on a word are woken one wake at a time, and the
 *    wakes count exactly them;
 *  - a kernel thread (glibc's) asleep on a word is woken by a user
 *    thread's wake, and a user thread by a kernel thread's;
 *  - the results of bad calls and of timeouts are the kernel's: the same
 *    calls are made on a user thread and on a kernel thread, and must
 *    agree with what is expected (EAGAIN, ETIMEDOUT for relative and both
 *    absolute clocks, EINVAL, EFAULT).
 * All of it with private futexes (parked on the word), then with shared
 * ones on the same private memory (parked too: no other process can reach
 * them, sync/futex_key.c), then with shared ones on a MAP_SHARED mapping
 * (waited for in the kernel on the offload pool, so that another process's
 * wake would be heard). */
#include <capriccio.h>
#include <errno.h>
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

enum { PAIRS = 8, ROUNDS = 2000, WAITERS = 4, WATCHDOG_S = 20 };

static atomic_int gave_up;

static long futex(atomic_uint *word, int op, uint32_t val, const struct timespec *ts,
                  uint32_t bitset)
{
    return syscall(SYS_futex, word, op | private_flag, val, ts, NULL, bitset);
}

static long wait_on(atomic_uint *word, uint32_t val)
{
    return futex(word, FUTEX_WAIT, val, NULL, 0);
}

static long wake(atomic_uint *word, int n)
{
    return futex(word, FUTEX_WAKE, (uint32_t)n, NULL, 0);
}

/* A counting semaphore on one futex word; bitset: wait with
 * FUTEX_WAIT_BITSET (match-any, no timeout), as Rust's std does. */
static void sem_down(atomic_uint *s, bool bitset)
{
    for (;;) {
        unsigned v = atomic_load(s);
        if (v > 0) {
            if (atomic_compare_exchange_weak(s, &v, v - 1))
                return;
            continue;
        }
        CHECK(!atomic_load(&gave_up));
        long r = bitset ? futex(s, FUTEX_WAIT_BITSET, 0, NULL, FUTEX_BITSET_MATCH_ANY)
                        : wait_on(s, 0);
        CHECK(r == 0 || (r == -1 && errno == EAGAIN));
    }
}

static void sem_up(atomic_uint *s)
{
    atomic_fetch_add(s, 1);
    CHECK_GE(wake(s, 1), 0);
}

struct pair {
    atomic_uint there, back;
};

/* Every word the runs wait on: in .bss, then in a MAP_SHARED mapping. */
struct words {
    struct pair pairs[PAIRS];
    atomic_uint counted_word, kernel_word, user_word;
};

static struct words private_words;
static struct words *_Atomic words = &private_words;

static void *server(void *arg)
{
    struct pair *p = arg;
    for (int r = 0; r < ROUNDS; r++) {
        sem_down(&p->there, false);
        sem_up(&p->back);
    }
    return NULL;
}

static void *client(void *arg)
{
    struct pair *p = arg;
    for (int r = 0; r < ROUNDS; r++) {
        sem_up(&p->there);
        sem_down(&p->back, true);
    }
    return NULL;
}

/* A kernel thread: after WATCHDOG_S, wakes every sleeper so that a
 * test whose waits blocked the workers fails rather than hangs. */
static void *watchdog(void *arg)
{
    (void)arg;
    sleep(WATCHDOG_S);
    atomic_store(&gave_up, 1);
    for (int i = 0; i < PAIRS; i++) {
        wake(&words->pairs[i].there, INT32_MAX);
        wake(&words->pairs[i].back, INT32_MAX);
    }
    return NULL;
}

static atomic_int counted_done;

static void *counted_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(wait_on(&words->counted_word, 0), 0); /* the word never changes: only a wake ends it */
    atomic_fetch_add(&counted_done, 1);
    return NULL;
}

static void *kernel_sleeper(void *arg)
{
    (void)arg;
    while (atomic_load(&words->kernel_word) == 0) {
        long r = wait_on(&words->kernel_word, 0);
        CHECK(r == 0 || (r == -1 && errno == EAGAIN));
    }
    return NULL;
}

static void *kernel_waker(void *arg)
{
    (void)arg;
    usleep(10000); /* a kernel thread's sleep: the user thread parks meanwhile */
    atomic_store(&words->user_word, 1);
    CHECK_GE(wake(&words->user_word, 1), 0);
    return NULL;
}

static struct timespec after(clockid_t clock, long ns)
{
    struct timespec t;
    CHECK_EQ(clock_gettime(clock, &t), 0);
    t.tv_nsec += ns;
    t.tv_sec += t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    return t;
}

static void *bad_calls(void *arg)
{
    (void)arg;
    atomic_uint five = 5;
    fails_with(wait_on(&five, 0), EAGAIN);
    atomic_uint zero = 0;
    struct timespec rel = { 0, 2000000 };
    fails_with(futex(&zero, FUTEX_WAIT, 0, &rel, 0), ETIMEDOUT);
    struct timespec abs = after(CLOCK_MONOTONIC, 2000000);
    fails_with(futex(&zero, FUTEX_WAIT_BITSET, 0, &abs, FUTEX_BITSET_MATCH_ANY),
               ETIMEDOUT);
    abs = after(CLOCK_REALTIME, 2000000);
    fails_with(futex(&zero, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 0, &abs,
                     FUTEX_BITSET_MATCH_ANY),
               ETIMEDOUT);
    struct timespec past = { 1, 0 };
    fails_with(futex(&zero, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 0, &past,
                     FUTEX_BITSET_MATCH_ANY),
               ETIMEDOUT);
    struct timespec bad = { 0, 1000000000 };
    fails_with(futex(&zero, FUTEX_WAIT, 0, &bad, 0), EINVAL);
    struct timespec negative = { -1, 0 };
    fails_with(futex(&zero, FUTEX_WAIT, 0, &negative, 0), EINVAL);
    fails_with(futex(&zero, FUTEX_WAIT_BITSET, 0, NULL, 0), EINVAL); /* no bits */
    _Alignas(8) char bytes[8] = { 0 };
    fails_with(futex((atomic_uint *)(void *)(bytes + 1), FUTEX_WAIT, 0, &rel, 0), EINVAL);
    fails_with(wake((atomic_uint *)(void *)(bytes + 1), 1), EINVAL);
    fails_with(futex((atomic_uint *)8, FUTEX_WAIT, 0, &rel, 0), EFAULT);
    fails_with(futex(&zero, FUTEX_WAIT, 0, (const struct timespec *)8, 0), EFAULT);
    fails_with(futex((atomic_uint *)8, FUTEX_WAIT, 0, &bad, 0), EINVAL); /* the timeout first */
    fails_with(futex(&zero, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, 0), ENOSYS);
    CHECK_EQ(wake(&zero, 1), 0); /* no one waits */
    CHECK_EQ(syscall(SYS_getpid), getpid()); /* other numbers: the kernel's */
    fails_with(syscall(SYS_close, -1), EBADF);
    return NULL;
}

static void run(void)
{
    atomic_store(&counted_done, 0);
    *words = (struct words){ 0 };
    /* Bad calls and timeouts, on a user thread and on a kernel thread. */
    bad_calls(NULL);
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, bad_calls, NULL), 0);
    CHECK_EQ(pthread_join(k, NULL), 0);

    /* Token passing between user threads. */
    cap_thread_t t[2 * PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        CHECK_EQ(cap_thread_create(&t[2 * i], NULL, server, &words->pairs[i]), 0);
        CHECK_EQ(cap_thread_create(&t[2 * i + 1], NULL, client, &words->pairs[i]), 0);
    }
    for (int i = 0; i < 2 * PAIRS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK(!atomic_load(&gave_up));

    /* Counted wakes. */
    cap_thread_t w[WAITERS];
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(cap_thread_create(&w[i], NULL, counted_waiter, NULL), 0);
    long woken = 0;
    while (atomic_load(&counted_done) < WAITERS) {
        long r = wake(&words->counted_word, 1);
        CHECK(r == 0 || r == 1);
        woken += r;
        cap_yield();
    }
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(cap_thread_join(w[i], NULL), 0);
    CHECK_EQ(woken, WAITERS);

    /* A kernel thread woken by a user thread's wake. */
    CHECK_EQ(pthread_create(&k, NULL, kernel_sleeper, NULL), 0);
    usleep(10000); /* parks main: the kernel thread goes to sleep meanwhile */
    atomic_store(&words->kernel_word, 1);
    CHECK_GE(wake(&words->kernel_word, 1), 0);
    CHECK_EQ(pthread_join(k, NULL), 0);

    /* A user thread woken by a kernel thread's wake. */
    CHECK_EQ(pthread_create(&k, NULL, kernel_waker, NULL), 0);
    while (atomic_load(&words->user_word) == 0) {
        long r = wait_on(&words->user_word, 0);
        CHECK(r == 0 || (r == -1 && errno == EAGAIN));
    }
    CHECK_EQ(pthread_join(k, NULL), 0);
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
