/* SPDX-License-Identifier: MIT */
/* Description: process-shared objects (CAP_PROCESS_SHARED mutexes,
 * condition variables, read-write locks, barriers, semaphores with
 * pshared, and glibc's sem_t with pshared) placed in private memory -
 * the heap, .bss, main's stack - where no other process can reach them,
 * park their waiting user threads as private objects do instead of
 * holding a kernel thread of the offload pool each (sync/shared_wait.c,
 * sync/sem.c):
 *  - for each kind, WAITERS user threads wait at once, and while they
 *    wait the process has no more kernel threads than before (before
 *    session 43 each held a pool thread: about WAITERS more); then all
 *    are released and every one of them got what it waited for (the lock
 *    once each, the broadcast, the barrier, a semaphore unit each);
 *  - a timed lock and a timed condition wait there time out, and a
 *    thread cancelled in a condition wait there ends through its cleanup
 *    handler holding the mutex, as on a private object.
 * A waiter that missed its wake-up would hang: alarm() ends the process
 * then. The same objects in MAP_SHARED memory keep waiting in the kernel
 * (sem_shared_many_waiters, shared_objects_wait_rules and the others). */
#include <capriccio.h>
#include <errno.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "proc_util.h"
#include "util.h"

enum { WAITERS = 100, ALARM_S = 60 };

static atomic_int arrived, done;

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

/* Starts WAITERS threads running fn, waits until they have all come to
 * their wait and a while more (the old library sent them to the pool
 * after a few yields), and checks that the process has no more kernel
 * threads than before they started. */
static void start_waiters(const char *kind, void *(*fn)(void *), cap_thread_t *t)
{
    atomic_store(&arrived, 0);
    atomic_store(&done, 0);
    int before = process_tasks();
    for (int i = 0; i < WAITERS; i++)
        t[i] = spawn(fn, NULL);
    while (atomic_load(&arrived) < WAITERS)
        nap_ms(1);
    nap_ms(20);
    int during = process_tasks();
    if (during >= before + WAITERS / 4) {
        fprintf(stderr, "%s: %d kernel threads before the waits, %d during them\n", kind,
                before, during);
        print_tasks("while the waiters wait");
    }
    CHECK_LT(during, before + WAITERS / 4);
    CHECK_EQ(atomic_load(&done), 0); /* all still waiting */
}

static void join_all(cap_thread_t *t)
{
    for (int i = 0; i < WAITERS; i++)
        join(t[i]);
    CHECK_EQ(atomic_load(&done), WAITERS);
}

/* ---- a mutex on the heap ----------------------------------------------- */

static cap_mutex_t *heap_mutex;
static int in_mutex; /* [heap_mutex] */

static void *lock_once(void *arg)
{
    (void)arg;
    atomic_fetch_add(&arrived, 1);
    CHECK_EQ(cap_mutex_lock(heap_mutex), 0);
    in_mutex++;
    atomic_fetch_add(&done, 1);
    CHECK_EQ(cap_mutex_unlock(heap_mutex), 0);
    return NULL;
}

static void mutex_waiters(void)
{
    heap_mutex = malloc(sizeof *heap_mutex);
    CHECK(heap_mutex != NULL);
    shared_mutex_init(heap_mutex, CAP_MUTEX_NORMAL);
    CHECK_EQ(cap_mutex_lock(heap_mutex), 0);
    cap_thread_t t[WAITERS];
    start_waiters("mutex", lock_once, t);
    CHECK_EQ(cap_mutex_unlock(heap_mutex), 0);
    join_all(t);
    CHECK_EQ(in_mutex, WAITERS);
    CHECK_EQ(cap_mutex_destroy(heap_mutex), 0);
    free(heap_mutex);
}

/* ---- a condition variable and its mutex on main's stack ---------------- */

struct gate {
    cap_mutex_t m;
    cap_cond_t c;
    int open; /* [m] */
};
static struct gate *stack_gate;

static void *wait_for_gate(void *arg)
{
    (void)arg;
    struct gate *g = stack_gate;
    CHECK_EQ(cap_mutex_lock(&g->m), 0);
    atomic_fetch_add(&arrived, 1);
    while (!g->open)
        CHECK_EQ(cap_cond_wait(&g->c, &g->m), 0);
    atomic_fetch_add(&done, 1);
    CHECK_EQ(cap_mutex_unlock(&g->m), 0);
    return NULL;
}

static void cond_waiters(void)
{
    struct gate g = { .open = 0 };
    shared_mutex_init(&g.m, CAP_MUTEX_NORMAL);
    shared_cond_init(&g.c);
    stack_gate = &g;
    cap_thread_t t[WAITERS];
    start_waiters("condition variable", wait_for_gate, t);
    CHECK_EQ(cap_mutex_lock(&g.m), 0);
    g.open = 1;
    CHECK_EQ(cap_cond_broadcast(&g.c), 0);
    CHECK_EQ(cap_mutex_unlock(&g.m), 0);
    join_all(t);
    CHECK_EQ(cap_cond_destroy(&g.c), 0);
    CHECK_EQ(cap_mutex_destroy(&g.m), 0);
}

/* ---- a read-write lock and a barrier in .bss --------------------------- */

static cap_rwlock_t bss_rwlock;

static void *read_once(void *arg)
{
    (void)arg;
    atomic_fetch_add(&arrived, 1);
    CHECK_EQ(cap_rwlock_rdlock(&bss_rwlock), 0);
    atomic_fetch_add(&done, 1);
    CHECK_EQ(cap_rwlock_unlock(&bss_rwlock), 0);
    return NULL;
}

static void rwlock_waiters(void)
{
    cap_rwlockattr_t a;
    CHECK_EQ(cap_rwlockattr_init(&a), 0);
    CHECK_EQ(cap_rwlockattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_rwlock_init(&bss_rwlock, &a), 0);
    CHECK_EQ(cap_rwlock_wrlock(&bss_rwlock), 0);
    cap_thread_t t[WAITERS];
    start_waiters("read-write lock", read_once, t);
    CHECK_EQ(cap_rwlock_unlock(&bss_rwlock), 0);
    join_all(t);
    CHECK_EQ(cap_rwlock_destroy(&bss_rwlock), 0);
}

static cap_barrier_t bss_barrier;
static atomic_int serial;

static void *cross_barrier(void *arg)
{
    (void)arg;
    atomic_fetch_add(&arrived, 1);
    int rc = cap_barrier_wait(&bss_barrier);
    CHECK(rc == 0 || rc == CAP_BARRIER_SERIAL_THREAD);
    atomic_fetch_add(&serial, rc == CAP_BARRIER_SERIAL_THREAD);
    atomic_fetch_add(&done, 1);
    return NULL;
}

static void barrier_waiters(void)
{
    cap_barrierattr_t a;
    CHECK_EQ(cap_barrierattr_init(&a), 0);
    CHECK_EQ(cap_barrierattr_setpshared(&a, CAP_PROCESS_SHARED), 0);
    CHECK_EQ(cap_barrier_init(&bss_barrier, &a, WAITERS + 1), 0);
    cap_thread_t t[WAITERS];
    start_waiters("barrier", cross_barrier, t);
    int rc = cap_barrier_wait(&bss_barrier); /* the last party */
    CHECK(rc == 0 || rc == CAP_BARRIER_SERIAL_THREAD);
    atomic_fetch_add(&serial, rc == CAP_BARRIER_SERIAL_THREAD);
    join_all(t);
    CHECK_EQ(atomic_load(&serial), 1);
    CHECK_EQ(cap_barrier_destroy(&bss_barrier), 0);
}

/* ---- semaphores: the library's on the heap, glibc's in .bss ------------- */

static cap_sem_t *heap_sem;
static sem_t bss_glibc_sem;

static void *take_cap_unit(void *arg)
{
    (void)arg;
    atomic_fetch_add(&arrived, 1);
    CHECK_EQ(cap_sem_wait(heap_sem), 0);
    atomic_fetch_add(&done, 1);
    return NULL;
}

static void *take_glibc_unit(void *arg)
{
    (void)arg;
    atomic_fetch_add(&arrived, 1);
    CHECK_EQ(sem_wait(&bss_glibc_sem), 0);
    atomic_fetch_add(&done, 1);
    return NULL;
}

static void sem_waiters(void)
{
    heap_sem = malloc(sizeof *heap_sem);
    CHECK(heap_sem != NULL);
    CHECK_EQ(cap_sem_init(heap_sem, 1, 0), 0);
    cap_thread_t t[WAITERS];
    start_waiters("semaphore", take_cap_unit, t);
    CHECK_EQ(sem_waiters_counted(heap_sem), (uint32_t)WAITERS);
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(cap_sem_post(heap_sem), 0);
    join_all(t);
    int v = -1;
    CHECK_EQ(cap_sem_getvalue(heap_sem, &v), 0);
    CHECK_EQ(v, 0); /* one unit each */
    CHECK_EQ(sem_waiters_counted(heap_sem), 0u);
    CHECK_EQ(cap_sem_destroy(heap_sem), 0);
    free(heap_sem);

    CHECK_EQ(sem_init(&bss_glibc_sem, 1, 0), 0);
    start_waiters("glibc semaphore", take_glibc_unit, t);
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(sem_post(&bss_glibc_sem), 0);
    join_all(t);
    CHECK_EQ(sem_getvalue(&bss_glibc_sem, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_destroy(&bss_glibc_sem), 0);
}

/* ---- timeouts and cancellation ----------------------------------------- */

static cap_mutex_t bss_mutex;
static cap_cond_t bss_cond;
static atomic_int cleanups;

static void *timed_lock(void *arg)
{
    (void)arg;
    struct timespec abs = ts_after(CLOCK_REALTIME, 30);
    CHECK_EQ(cap_mutex_timedlock(&bss_mutex, &abs), ETIMEDOUT);
    return NULL;
}

static void unlock_on_cancel(void *arg)
{
    atomic_fetch_add(&cleanups, 1);
    CHECK_EQ(cap_mutex_unlock(arg), 0); /* held again, as POSIX says */
}

static void *cancelled_wait(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&bss_mutex), 0);
    cap_cleanup_push(unlock_on_cancel, &bss_mutex);
    atomic_store(&arrived, 1);
    for (;;)
        cap_cond_wait(&bss_cond, &bss_mutex);
    cap_cleanup_pop(0);
    return NULL;
}

static void timeouts_and_cancellation(void)
{
    shared_mutex_init(&bss_mutex, CAP_MUTEX_NORMAL);
    shared_cond_init(&bss_cond);
    CHECK_EQ(cap_mutex_lock(&bss_mutex), 0);
    join(spawn(timed_lock, NULL)); /* main holds it throughout */
    struct timespec abs = ts_after(CLOCK_REALTIME, 30);
    CHECK_EQ(cap_cond_timedwait(&bss_cond, &bss_mutex, &abs), ETIMEDOUT);
    CHECK_EQ(cap_mutex_unlock(&bss_mutex), 0);

    atomic_store(&arrived, 0);
    cap_thread_t t = spawn(cancelled_wait, NULL);
    while (!atomic_load(&arrived))
        nap_ms(1);
    nap_ms(20); /* in its wait */
    CHECK_EQ(cap_thread_cancel(t), 0);
    CHECK(join(t) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&cleanups), 1);
    CHECK_EQ(cap_mutex_trylock(&bss_mutex), 0); /* the cleanup let it go */
    CHECK_EQ(cap_mutex_unlock(&bss_mutex), 0);
}

int main(void)
{
    alarm(ALARM_S);
    mutex_waiters();
    cond_waiters();
    rwlock_waiters();
    barrier_waiters();
    sem_waiters();
    timeouts_and_cancellation();
    return 0;
}
