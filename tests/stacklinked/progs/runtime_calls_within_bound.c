/* SPDX-License-Identifier: MIT */
/* Description: the runtime calls that run on a thread's current chunk
 * (src/stack/runtime_calls.S) stay within CAP__LINKED_RUNTIME_BYTES of
 * stack, measured by painting the stack below the caller with a pattern
 * and finding the lowest byte the call changed: uncontended and contended
 * mutexes and semaphores (process-shared ones too: in shared memory they
 * wait in the kernel on the pool, but under linked stacks park in slices,
 * sync/shared_wait.c; in private memory they park as private ones),
 * condition waits (woken, timed out), rwlocks, a
 * barrier, sleep, yield, join (of a running and of an ended thread), and a
 * cancelled wait, down to its cleanup handler, key destructor and exit
 * (holding a robust mutex, which its end leaves "owner died"). Robust
 * mutexes: a lock told EOWNERDEAD, and a process-shared one's contended
 * lock, which waits in slices to look at the holder's process.
 * Runs on a 64 KiB first chunk (CAP_LINKED_FIRST, tests.cmake), so no call
 * links a chunk and the paint has room. */
#include <capriccio.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "linked_util.h"
#include "stack/runtime_calls.h"

enum { PAINT = 8192, GAP = 256, PATTERN = 0xa5 };

static size_t deepest; /* over every measurement */

/* Paints [sp - PAINT, sp - GAP): below our own frame (under GAP bytes). */
static __attribute__((noinline)) void paint(char *sp)
{
    memset(sp - PAINT, PATTERN, PAINT - GAP);
}

/* Bytes below the entry of a call made at sp that the call touched. */
static __attribute__((noinline)) size_t touched(const char *sp, const char *what)
{
    const char *p = sp - PAINT;
    while (p < sp - GAP && *(const unsigned char *)p == PATTERN)
        p++;
    size_t depth = (size_t)(sp - 8 - p); /* the call pushed its return address at sp - 8 */
    if (p == sp - GAP) {
        fprintf(stderr, "  %-34s under %d bytes\n", what, GAP - 8);
        return 0;
    }
    fprintf(stderr, "  %-34s %4zu bytes\n", what, depth);
    if (depth > deepest)
        deepest = depth;
    return depth;
}

/* Runs `call` with the stack below painted and records its depth. */
#define MEASURE(what, call)                                                                  \
    do {                                                                                     \
        char *sp_;                                                                           \
        __asm__ volatile("movq %%rsp, %0" : "=r"(sp_));                                      \
        paint(sp_);                                                                          \
        call;                                                                                \
        touched(sp_, what);                                                                  \
    } while (0)

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static cap_sem_t sem;
static cap_rwlock_t rw = CAP_RWLOCK_INITIALIZER;
static cap_barrier_t bar;
static int stage;

static void *holder(void *arg)
{
    (void)arg;
    cap_mutex_lock(&m);
    stage = 1;
    cap_cond_broadcast(&c);
    cap_yield(); /* the main thread now blocks on m */
    cap_yield();
    cap_mutex_unlock(&m);
    cap_sem_post(&sem);
    cap_rwlock_wrlock(&rw);
    cap_yield();
    cap_yield();
    cap_rwlock_unlock(&rw);
    cap_barrier_wait(&bar);
    return NULL;
}

/* Holds a process-shared mutex for longer than its waiter's yields, so
 * that the waiter goes on to wait for a wake from any process (which
 * under linked stacks parks in slices: sync/shared_wait.c). In a
 * MAP_SHARED mapping: in private memory it parks as a private one. */
static cap_mutex_t *shared_m;
static volatile int shared_held;

static void *shared_holder(void *arg)
{
    (void)arg;
    cap_mutex_lock(shared_m);
    shared_held = 1;
    cap_sleep_ns(5000000);
    cap_mutex_unlock(shared_m);
    return NULL;
}

/* Posts a semaphore once its waiter is past any yields: private, or
 * process-shared in a MAP_SHARED mapping (shared_sem). */
static cap_sem_t *poster_sem;

static void *poster(void *arg)
{
    (void)arg;
    cap_sleep_ns(5000000);
    cap_sem_post(poster_sem);
    return NULL;
}

static void *sleeper(void *arg)
{
    cap_sleep_ns(1000000);
    return arg;
}

/* ---- a cancelled wait -------------------------------------------------- */

static char *cancel_sp;
static cap_mutex_t robust_m;
static size_t at_cleanup, at_destructor;
static cap_key_t key;

static __attribute__((noinline)) size_t depth_here(void)
{
    char *sp;
    __asm__ volatile("movq %%rsp, %0" : "=r"(sp));
    return (size_t)(cancel_sp - 8 - sp);
}

static void cleanup(void *arg)
{
    (void)arg;
    at_cleanup = depth_here();
    cap_mutex_unlock(&m);
}

static void destructor(void *v)
{
    (void)v;
    at_destructor = depth_here();
}

static void *cancelled(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_setspecific(key, &key), 0);
    CHECK_EQ(cap_mutex_lock(&robust_m), 0); /* held to the end */
    cap_mutex_lock(&m);
    cap_cleanup_push(cleanup, NULL);
    __asm__ volatile("movq %%rsp, %0" : "=r"(cancel_sp));
    paint(cancel_sp);
    stage = 2;
    cap_cond_broadcast(&c);
    while (stage != 3)
        cap_cond_wait(&c, &m); /* cancelled here */
    cap_cleanup_pop(1);
    return NULL;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    CHECK_EQ(cap_barrier_init(&bar, NULL, 2), 0);
    CHECK_EQ(cap_key_create(&key, destructor), 0);

    fprintf(stderr, "stack below each runtime call (bound %d bytes):\n",
            CAP__LINKED_RUNTIME_BYTES);
    /* main is a user thread too (on the process stack): same code paths. */
    MEASURE("mutex lock, unlocked", cap_mutex_lock(&m));
    MEASURE("mutex unlock, no waiter", cap_mutex_unlock(&m));
    MEASURE("mutex trylock", cap_mutex_trylock(&m));
    cap_mutex_unlock(&m);
    MEASURE("thread self", (void)cap_thread_self());
    MEASURE("yield", cap_yield());
    MEASURE("sleep 1 ms", cap_sleep_ns(1000000));
    MEASURE("sleep 1 ms again", cap_sleep_ns(1000000));

    CHECK_EQ(cap_thread_create(&t, NULL, holder, NULL), 0);
    cap_mutex_lock(&m);
    while (stage != 1)
        MEASURE("cond wait, woken", cap_cond_wait(&c, &m));
    cap_mutex_unlock(&m);
    MEASURE("mutex lock, contended", cap_mutex_lock(&m));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    MEASURE("cond timedwait, timed out", cap_cond_timedwait(&c, &m, &ts));
    MEASURE("cond signal, no waiter", cap_cond_signal(&c));
    MEASURE("mutex unlock", cap_mutex_unlock(&m));
    MEASURE("sem wait", cap_sem_wait(&sem));
    MEASURE("sem post", cap_sem_post(&sem));
    MEASURE("sem trywait", cap_sem_trywait(&sem));
    cap_yield();
    MEASURE("rwlock rdlock, contended", cap_rwlock_rdlock(&rw));
    MEASURE("rwlock unlock", cap_rwlock_unlock(&rw));
    MEASURE("barrier wait", cap_barrier_wait(&bar));
    MEASURE("join, running thread", cap_thread_join(t, NULL));
    CHECK_EQ(cap_thread_create(&t, NULL, sleeper, NULL), 0);
    cap_sleep_ns(5000000);
    MEASURE("join, ended thread", cap_thread_join(t, NULL));

    /* A contended wait on a private semaphore, which registers for
     * signals (sync/sem.c): the deepest call, 872 bytes until session 43
     * against a bound of 768 that no measurement here had reached. */
    poster_sem = &sem;
    CHECK_EQ(cap_thread_create(&t, NULL, poster, NULL), 0);
    MEASURE("sem wait, contended", cap_sem_wait(&sem));
    CHECK_EQ(cap_thread_join(t, NULL), 0);

    void *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED);
    shared_m = map;
    cap_sem_t *shared_sem = (cap_sem_t *)((char *)map + 1024);
    cap_mutexattr_t ma;
    CHECK_EQ(cap_mutexattr_init(&ma), 0);
    CHECK_EQ(cap_mutexattr_setpshared(&ma, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_mutex_init(shared_m, &ma), 0);
    CHECK_EQ(cap_thread_create(&t, NULL, shared_holder, NULL), 0);
    while (!shared_held)
        cap_yield();
    MEASURE("shared mutex lock, in slices", cap_mutex_lock(shared_m));
    MEASURE("shared mutex unlock", cap_mutex_unlock(shared_m));
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    shared_held = 0;
    CHECK_EQ(cap_thread_create(&t, NULL, shared_holder, NULL), 0);
    while (!shared_held)
        cap_yield();
    struct timespec later;
    clock_gettime(CLOCK_REALTIME, &later);
    later.tv_sec += 5;
    MEASURE("shared mutex timedlock, in slices", cap_mutex_timedlock(shared_m, &later));
    cap_mutex_unlock(shared_m);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    /* An error-checking one records its owner after the wait. */
    cap_mutex_t *checked_m = (cap_mutex_t *)((char *)map + 3072);
    CHECK_EQ(cap_mutexattr_settype(&ma, CAP_MUTEX_ERRORCHECK), 0);
    CHECK_EQ(cap_mutex_init(checked_m, &ma), 0);
    CHECK_EQ(cap_mutexattr_settype(&ma, CAP_MUTEX_NORMAL), 0);
    shared_m = checked_m;
    shared_held = 0;
    CHECK_EQ(cap_thread_create(&t, NULL, shared_holder, NULL), 0);
    while (!shared_held)
        cap_yield();
    MEASURE("checked shared mutex timedlock", cap_mutex_timedlock(shared_m, &later));
    cap_mutex_unlock(shared_m);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    CHECK_EQ(cap_mutexattr_setrobust(&ma, CAP_MUTEX_ROBUST), 0);
    shared_m = (cap_mutex_t *)((char *)map + 2048);
    CHECK_EQ(cap_mutex_init(shared_m, &ma), 0);
    shared_held = 0;
    CHECK_EQ(cap_thread_create(&t, NULL, shared_holder, NULL), 0);
    while (!shared_held)
        cap_yield();
    MEASURE("robust shared mutex lock, slices", cap_mutex_lock(shared_m));
    MEASURE("robust shared mutex unlock", cap_mutex_unlock(shared_m));
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    CHECK_EQ(cap_sem_init(shared_sem, 1, 0), 0);
    poster_sem = shared_sem;
    CHECK_EQ(cap_thread_create(&t, NULL, poster, NULL), 0);
    MEASURE("shared sem wait, in slices", cap_sem_wait(shared_sem));
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    /* Process-shared in private memory: parks as a private one. */
    static cap_sem_t private_shared_sem;
    CHECK_EQ(cap_sem_init(&private_shared_sem, 1, 0), 0);
    poster_sem = &private_shared_sem;
    CHECK_EQ(cap_thread_create(&t, NULL, poster, NULL), 0);
    MEASURE("shared sem wait, private memory", cap_sem_wait(&private_shared_sem));
    CHECK_EQ(cap_thread_join(t, NULL), 0);

    cap_mutexattr_t ra;
    CHECK_EQ(cap_mutexattr_init(&ra), 0);
    CHECK_EQ(cap_mutexattr_setrobust(&ra, CAP_MUTEX_ROBUST), 0);
    CHECK_EQ(cap_mutex_init(&robust_m, &ra), 0);

    /* Cancelled inside cap_cond_wait: its cleanup handler and the key
     * destructor run at the bottom of the runtime's frames; then the exit
     * path. The ended thread's chunk keeps its paint until reused. */
    cap_mutex_lock(&m);
    CHECK_EQ(cap_thread_create(&t, NULL, cancelled, NULL), 0);
    while (stage != 2)
        cap_cond_wait(&c, &m);
    cap_mutex_unlock(&m);
    cap_yield();
    CHECK_EQ(cap_thread_cancel(t), 0);
    void *ret;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK(ret == CAP_CANCELED);
    fprintf(stderr, "  %-34s %4zu bytes\n", "cancelled: at the cleanup handler", at_cleanup);
    fprintf(stderr, "  %-34s %4zu bytes\n", "cancelled: at the key destructor", at_destructor);
    CHECK_GT(at_cleanup, 0);
    CHECK_GT(at_destructor, 0);
    CHECK_LE(at_cleanup, (size_t)CAP__LINKED_RUNTIME_BYTES);
    CHECK_LE(at_destructor, (size_t)CAP__LINKED_RUNTIME_BYTES);
    touched(cancel_sp, "cancelled: the whole exit path");
    int rc = -1;
    MEASURE("robust mutex lock, owner died", rc = cap_mutex_lock(&robust_m));
    CHECK_EQ(rc, EOWNERDEAD);
    MEASURE("robust mutex consistent", cap_mutex_consistent(&robust_m));
    MEASURE("robust mutex unlock", cap_mutex_unlock(&robust_m));

    fprintf(stderr, "deepest: %zu bytes\n", deepest);
    CHECK_GT(deepest, 0); /* the paint works: something was measured */
    CHECK_LE(deepest, (size_t)CAP__LINKED_RUNTIME_BYTES);
    return 0;
}
