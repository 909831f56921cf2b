/* SPDX-License-Identifier: MIT */
/* Description: glibc's own pthread_cond_t and pthread_mutex_t (code built
 * with <pthread.h>, as a third-party library is) on user threads: a
 * condition wait parks the user thread, so the worker goes on running the
 * others. Cases: a waiter whose signaller first locks the mutex and
 * parks holding it (a read on a pipe) before it signals; timed waits
 * that end with ETIMEDOUT, not early, while another user thread takes
 * the mutex meanwhile (CLOCK_REALTIME, a CLOCK_MONOTONIC condattr,
 * pthread_cond_clockwait on both clocks; EINVAL for a malformed deadline
 * or clock); a RECURSIVE mutex held two deep is released completely for
 * the wait (another user thread locks it meanwhile) and held two deep
 * after it (two unlocks, then EPERM); an ERRORCHECK mutex the caller
 * does not hold (free, or held by another user thread of the same kernel
 * thread) makes the wait EPERM. Before the library wrapped glibc's names
 * the waiter slept in glibc's wait on its worker: with one worker the
 * first case hung (the signaller never ran again), and glibc released
 * only one level of the RECURSIVE mutex. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util.h"

/* ---- a waiter, and a signaller that parks holding the mutex ---------- */

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;             /* under m */
static int sig_pipe[2];       /* the signaller parks reading it */
static atomic_int waiting;    /* the waiter is about to wait */
static atomic_int woke;       /* the waiter saw ready */
static atomic_int sig_holds;  /* the signaller holds m */

static void *waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    atomic_store(&waiting, 1);
    while (!ready)
        CHECK_EQ(pthread_cond_wait(&c, &m), 0);
    atomic_store(&woke, 1);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&m), 0); /* only once the waiter waits */
    atomic_store(&sig_holds, 1);
    char ch;
    CHECK_EQ(read(sig_pipe[0], &ch, 1), 1); /* parks, holding m */
    ready = 1;
    CHECK_EQ(pthread_cond_signal(&c), 0);
    CHECK_EQ(atomic_load(&woke), 0); /* it needs m back first */
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    return NULL;
}

static void check_wait_and_signal(void)
{
    CHECK_EQ(pipe(sig_pipe), 0);
    cap_thread_t w = spawn(waiter, NULL);
    while (!atomic_load(&waiting))
        cap_yield();
    cap_thread_t s = spawn(signaller, NULL);
    while (!atomic_load(&sig_holds))
        cap_yield(); /* this thread runs while the waiter waits */
    for (int i = 0; i < 20; i++)
        cap_yield(); /* and while the signaller is parked with m */
    CHECK_EQ(atomic_load(&woke), 0);
    CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
    CHECK_EQ(write(sig_pipe[1], "x", 1), 1);
    join(s);
    join(w);
    CHECK_EQ(atomic_load(&woke), 1);
    close(sig_pipe[0]);
    close(sig_pipe[1]);
}

/* ---- timed waits that time out --------------------------------------- */

static atomic_int other_locked;

/* Spawned before each timed wait: it can take the mutex only while the
 * waiter's wait has released it. */
static void *taker(void *arg)
{
    pthread_mutex_t *tm = arg;
    CHECK_EQ(pthread_mutex_lock(tm), 0);
    atomic_fetch_add(&other_locked, 1);
    CHECK_EQ(pthread_mutex_unlock(tm), 0);
    return NULL;
}

enum how { TIMEDWAIT, CLOCKWAIT_REAL, CLOCKWAIT_MONO };

static void timed_once(pthread_cond_t *tc, clockid_t attr_clock, enum how how)
{
    pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;
    CHECK_EQ(pthread_mutex_lock(&tm), 0);
    int before = atomic_load(&other_locked);
    cap_thread_t t = spawn(taker, &tm);
    clockid_t clock = how == TIMEDWAIT ? attr_clock
                      : how == CLOCKWAIT_REAL ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    struct timespec abs = ts_after(clock, 40);
    int rc;
    if (how == TIMEDWAIT)
        rc = pthread_cond_timedwait(tc, &tm, &abs);
    else
        rc = pthread_cond_clockwait(tc, &tm, clock, &abs);
    /* no signal came: whatever wake-ups, the last answer is the timeout */
    while (rc == 0 && !ts_ge(ts_now(clock), abs))
        rc = how == TIMEDWAIT ? pthread_cond_timedwait(tc, &tm, &abs)
                              : pthread_cond_clockwait(tc, &tm, clock, &abs);
    CHECK_EQ(rc, ETIMEDOUT);
    CHECK(ts_ge(ts_now(clock), abs));
    /* With one worker the taker ran during the wait (it was queued before
     * the timer); with more it may still be on its way. */
    if (cap_worker_count() == 1)
        CHECK_EQ(atomic_load(&other_locked), before + 1);
    CHECK_EQ(pthread_mutex_trylock(&tm), EBUSY); /* ours again */
    CHECK_EQ(pthread_mutex_unlock(&tm), 0);
    join(t);
    CHECK_EQ(atomic_load(&other_locked), before + 1);
    CHECK_EQ(pthread_mutex_destroy(&tm), 0);
}

static void check_timed(void)
{
    pthread_cond_t real = PTHREAD_COND_INITIALIZER;
    timed_once(&real, CLOCK_REALTIME, TIMEDWAIT);
    timed_once(&real, CLOCK_REALTIME, CLOCKWAIT_MONO);
    timed_once(&real, CLOCK_REALTIME, CLOCKWAIT_REAL);
    CHECK_EQ(pthread_cond_destroy(&real), 0);

    pthread_condattr_t a;
    pthread_cond_t mono;
    CHECK_EQ(pthread_condattr_init(&a), 0);
    CHECK_EQ(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    CHECK_EQ(pthread_cond_init(&mono, &a), 0);
    CHECK_EQ(pthread_condattr_destroy(&a), 0);
    timed_once(&mono, CLOCK_MONOTONIC, TIMEDWAIT);
    timed_once(&mono, CLOCK_MONOTONIC, CLOCKWAIT_REAL);

    pthread_mutex_t tm = PTHREAD_MUTEX_INITIALIZER;
    CHECK_EQ(pthread_mutex_lock(&tm), 0);
    struct timespec bad = { 0, 1000000000 };
    CHECK_EQ(pthread_cond_timedwait(&mono, &tm, &bad), EINVAL);
    struct timespec abs = ts_after(CLOCK_MONOTONIC, 40);
    CHECK_EQ(pthread_cond_clockwait(&mono, &tm, CLOCK_PROCESS_CPUTIME_ID, &abs), EINVAL);
    CHECK_EQ(pthread_mutex_trylock(&tm), EBUSY); /* still held */
    CHECK_EQ(pthread_mutex_unlock(&tm), 0);
    CHECK_EQ(pthread_mutex_destroy(&tm), 0);
    CHECK_EQ(pthread_cond_destroy(&mono), 0);
}

/* ---- RECURSIVE mutex held two deep ----------------------------------- */

static pthread_mutex_t rm;
static pthread_cond_t rc_cond = PTHREAD_COND_INITIALIZER;
static int r_ready; /* under rm */

static void *r_other(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&rm), 0); /* only if the waiter let go entirely */
    r_ready = 1;
    CHECK_EQ(pthread_cond_signal(&rc_cond), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    return NULL;
}

static void *r_probe(void *arg)
{
    int expect = *(int *)arg;
    int rc = pthread_mutex_trylock(&rm);
    CHECK_EQ(rc, expect);
    if (rc == 0) {
        CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    } else {
        CHECK_EQ(pthread_mutex_unlock(&rm), EPERM); /* not the holder */
    }
    return NULL;
}

static void probe(int expect)
{
    join(spawn(r_probe, &expect));
}

static void check_recursive(void)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), 0);
    CHECK_EQ(pthread_mutex_init(&rm, &a), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);
    CHECK_EQ(pthread_mutex_lock(&rm), 0);
    CHECK_EQ(pthread_mutex_lock(&rm), 0);
    cap_thread_t t = spawn(r_other, NULL);
    while (!r_ready)
        CHECK_EQ(pthread_cond_wait(&rc_cond, &rm), 0);
    join(t);
    probe(EBUSY); /* held two deep */
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    probe(EBUSY);
    CHECK_EQ(pthread_mutex_unlock(&rm), 0);
    CHECK_EQ(pthread_mutex_unlock(&rm), EPERM);
    probe(0);
    CHECK_EQ(pthread_mutex_destroy(&rm), 0);
    CHECK_EQ(pthread_cond_destroy(&rc_cond), 0);
}

/* ---- ERRORCHECK mutex not held by the caller ------------------------- */

static pthread_mutex_t em;
static int e_pipe[2];
static atomic_int e_held;

static void *e_holder(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&em), 0);
    atomic_store(&e_held, 1);
    char ch;
    CHECK_EQ(read(e_pipe[0], &ch, 1), 1); /* parks, holding em */
    CHECK_EQ(pthread_mutex_unlock(&em), 0);
    return NULL;
}

static void check_errorcheck(void)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
    CHECK_EQ(pthread_mutex_init(&em, &a), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);
    pthread_cond_t ec = PTHREAD_COND_INITIALIZER;
    struct timespec abs = ts_after(CLOCK_REALTIME, 60000);

    CHECK_EQ(pthread_cond_wait(&ec, &em), EPERM); /* free */
    CHECK_EQ(pthread_cond_timedwait(&ec, &em, &abs), EPERM);

    CHECK_EQ(pipe(e_pipe), 0);
    cap_thread_t h = spawn(e_holder, NULL);
    while (!atomic_load(&e_held))
        cap_yield();
    /* held by another user thread (perhaps of this very kernel thread) */
    CHECK_EQ(pthread_cond_wait(&ec, &em), EPERM);
    CHECK_EQ(pthread_cond_timedwait(&ec, &em, &abs), EPERM);
    CHECK_EQ(pthread_mutex_unlock(&em), EPERM);
    CHECK_EQ(write(e_pipe[1], "x", 1), 1);
    join(h);
    CHECK_EQ(pthread_mutex_lock(&em), 0);
    CHECK_EQ(pthread_mutex_unlock(&em), 0);
    CHECK_EQ(pthread_mutex_destroy(&em), 0);
    CHECK_EQ(pthread_cond_destroy(&ec), 0);
    close(e_pipe[0]);
    close(e_pipe[1]);
}

int main(void)
{
    check_wait_and_signal();
    check_timed();
    check_recursive();
    check_errorcheck();
    return 0;
}
