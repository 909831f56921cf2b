/* SPDX-License-Identifier: MIT */
/*
 * The offload pool: kernel threads that run blocking calls for user
 * threads (CAP_DISKIO=threads, and libc calls that cannot be made
 * non-blocking: getaddrinfo and friends, a connect on a descriptor we may
 * not make non-blocking). The user thread parks; a pool thread runs the
 * call and unparks it. Pool threads are kernel threads the library does
 * not run, so every libc call they make goes straight to libc.
 *
 * The pool grows on demand (a job finds no idle thread) up to MAX_THREADS
 * and never shrinks; queued jobs run in FIFO order.
 *
 * A job lives on the waiting thread's stack. The pool thread sets `done`
 * and unparks under job->lock; the waiter takes and drops the same lock
 * after waking, so it cannot return (and free the record) while the pool
 * thread is still unlocking it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "io/io.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "util/clock.h"
#include "util/spin.h"

enum { MAX_THREADS = 64 };

struct job {
    void (*fn)(void *arg);
    void *arg;
    struct job *next;
    struct cap__thread *thread;
    cap__spin lock;
    bool done; /* [lock] */
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;
static struct job *head, *tail; /* [pool_mu] */
static int nthreads, nidle;     /* [pool_mu] */
static atomic_int jobs;         /* queued or running for user threads */

bool cap__offload_busy(void)
{
    return atomic_load_explicit(&jobs, memory_order_relaxed) != 0;
}

static void *pool_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool_mu);
    for (;;) {
        while (head == NULL) {
            nidle++;
            pthread_cond_wait(&pool_cv, &pool_mu);
            nidle--;
        }
        struct job *j = head;
        head = j->next;
        if (head == NULL)
            tail = NULL;
        pthread_mutex_unlock(&pool_mu);

        j->fn(j->arg);
        cap__spin_lock(&j->lock);
        j->done = true;
        cap__unpark(j->thread); /* under the lock the waiter parked on */
        cap__spin_unlock(&j->lock);

        pthread_mutex_lock(&pool_mu);
    }
    return NULL;
}

/* Queues j, starting a thread if none is idle. Caller holds pool_mu. */
static int enqueue_locked(struct job *j)
{
    if (nidle == 0 && nthreads < MAX_THREADS) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        int rc = pthread_create(&t, &attr, pool_main, NULL);
        pthread_attr_destroy(&attr);
        if (rc == 0)
            nthreads++;
        else if (nthreads == 0)
            return -EAGAIN;
    }
    j->next = NULL;
    if (tail != NULL)
        tail->next = j;
    else
        head = j;
    tail = j;
    pthread_cond_signal(&pool_cv);
    return 0;
}

static bool unlock_job(void *arg)
{
    cap__spin_unlock(&((struct job *)arg)->lock);
    return true;
}

int cap__offload(void (*fn)(void *arg), void *arg)
{
    struct cap__thread *self = cap__current();
    if (self == NULL) {
        fn(arg);
        return 0;
    }
    struct job j = { .fn = fn, .arg = arg, .thread = self };
    cap__spin_lock(&j.lock);
    pthread_mutex_lock(&pool_mu);
    int rc = enqueue_locked(&j);
    pthread_mutex_unlock(&pool_mu);
    if (rc != 0) {
        cap__spin_unlock(&j.lock);
        return rc;
    }
    atomic_fetch_add(&cap__io_inflight, 1);
    atomic_fetch_add_explicit(&jobs, 1, memory_order_relaxed);
    for (;;) {
        cap__park(CAP__PARK_OFFLOAD, &j, CAP__FOREVER, unlock_job, &j);
        cap__spin_lock(&j.lock);
        if (j.done)
            break;
    }
    cap__spin_unlock(&j.lock);
    atomic_fetch_sub_explicit(&jobs, 1, memory_order_relaxed);
    atomic_fetch_sub(&cap__io_inflight, 1);
    return 0;
}
