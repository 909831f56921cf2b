/* SPDX-License-Identifier: MIT */
/*
 * The offload pool: kernel threads that run blocking calls for user
 * threads (CAP_DISKIO=threads, and libc calls that cannot be made
 * non-blocking: getaddrinfo and friends, a connect on a descriptor we may
 * not make non-blocking). The user thread parks; a pool thread runs the
 * call and unparks it. Pool threads are kernel threads the library does
 * not run, so every libc call they make goes straight to libc.
 *
 * The pool grows on demand (a job finds no idle thread that the jobs
 * queued before it have not claimed) up to MAX_THREADS and never
 * shrinks; queued jobs run in FIFO order.
 *
 * A job lives on the waiting thread's stack. The pool thread sets `done`
 * and unparks under job->lock; the waiter takes and drops the same lock
 * after waking, so it cannot return (and free the record) while the pool
 * thread is still unlocking it.
 *
 * Calls that may wait without bound (a FIFO open, a record lock, a
 * connect on a blocking socket) go through cap__offload_call, whose wait
 * a cancel request or a signal can end, as they would end the call in the
 * kernel. Stopping a job: if no pool thread has taken it, it leaves the
 * queue and never runs; otherwise `stop` is set and its pool thread is
 * kicked (cap__sig_kick, a signal to that kernel thread alone) until the
 * call returns: the kick interrupts the system call with EINTR, and the
 * pool thread, seeing `stop`, does not retry it. Kicks repeat every
 * KICK_NS because one that lands just before the system call is entered
 * interrupts nothing. A call that completed anyway keeps its result.
 *
 * Pool threads block every signal, the kick too except while they run a
 * cap__offload_call job (see run), so process-directed signals go to
 * threads that run the program's handlers.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "intercept/intercept.h" /* CAP__REAL */
#include "io/io.h"
#include "io/sigintr.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "util/clock.h"
#include "util/spin.h"

enum { MAX_THREADS = 64 };
enum { KICK_NS = 1000000 };

struct job {
    void (*fn)(void *arg);
    void *arg;
    long *result;      /* cap__offload_call's jobs: where fn stores its result */
    struct job *next;  /* [pool_mu] */
    struct cap__thread *thread;
    pid_t runner;      /* [pool_mu] the pool thread running it, 0 while queued */
    atomic_bool stop;  /* the waiter gave up: do not retry an interrupted call */
    cap__spin lock;
    bool done;         /* [lock] */
    bool parked;       /* [lock] the waiter is parked on the job */
    cap__sig_waiter *sw; /* cap__offload_call's record in the signal registry */
};

/* pool_mu is taken with glibc's own lock (CAP__REAL), never the wrapper
 * of pthread_mutex_lock (intercept/libc_mutex.c): a user thread holds a
 * job's spin lock when it queues the job, and must not park there. Its
 * holders never block while they hold it. pool_cv is the library's
 * condition variable (intercept/libc_cond.c, called by name): pool
 * threads sleep on it in the kernel; a user thread only signals it. */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;

static void pool_lock(void)
{
    CAP__REAL(pthread_mutex_lock)(&pool_mu);
}

static void pool_unlock(void)
{
    CAP__REAL(pthread_mutex_unlock)(&pool_mu);
}
static __thread bool on_pool; /* this kernel thread is one of the pool's */
static struct job *head, *tail; /* [pool_mu] */
static atomic_int nthreads;      /* [pool_mu] for writes; read by cap__offload_threads */
static int nidle;               /* [pool_mu] */
static int nqueued;             /* [pool_mu] jobs in the queue, not yet taken */
static atomic_int jobs;         /* queued or running for user threads */

void cap__offload_forked(void)
{
    pthread_mutex_init(&pool_mu, NULL);
    pthread_cond_init(&pool_cv, NULL);
    head = tail = NULL;
    nthreads = nidle = nqueued = 0;
    atomic_store(&jobs, 0);
}

bool cap__offload_busy(void)
{
    return atomic_load_explicit(&jobs, memory_order_relaxed) != 0;
}

/* Wakes j's waiter if it is parked on j. Caller holds j->lock. */
static void wake_locked(struct job *j)
{
    if (j->parked) {
        j->parked = false;
        cap__unpark(j->thread);
    }
}

/* Runs j's call. Only cap__offload_call's jobs, which retry a call
 * interrupted for nothing, run with the kick unblocked: any other job
 * (a disk transfer, sendfile, getaddrinfo, pclose) would see EINTR from a
 * late kick meant for the job its thread ran before (sent just as that
 * one completed: a kick ends a pool thread's call whatever SA_RESTART
 * says, io/sigintr.h). A late kick stays pending until the next such
 * job unblocks it, and is handled before that job's call starts. */
static void run(struct job *j, const sigset_t *kick)
{
    if (j->result == NULL) {
        j->fn(j->arg);
        return;
    }
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, kick, NULL, _NSIG / 8);
    for (;;) {
        j->fn(j->arg);
        /* Only a kick or a stray SIGURG interrupts a pool thread. */
        if (*j->result != -EINTR || atomic_load(&j->stop))
            break;
    }
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, kick, NULL, _NSIG / 8);
}

static void *pool_main(void *arg)
{
    (void)arg;
    sigset_t kick;
    sigemptyset(&kick);
    sigaddset(&kick, CAP__SIG_KICK);
    pid_t tid = (pid_t)syscall(SYS_gettid);
    on_pool = true;
    pool_lock();
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
        nqueued--;
        j->runner = tid;
        pool_unlock();

        run(j, &kick);
        cap__spin_lock(&j->lock);
        j->done = true;
        wake_locked(j); /* under the lock the waiter parked on */
        cap__spin_unlock(&j->lock);

        pool_lock();
    }
    return NULL;
}

/* Queues j, starting a thread unless an idle one is left for it: idle
 * threads already signalled for the jobs queued before it have not taken
 * them yet, and a job that waited for a thread another job holds (a
 * reader behind a writer blocked on the pipe it reads) would wait for
 * good. Caller holds pool_mu. */
static int enqueue_locked(struct job *j)
{
    if (nqueued >= nidle && nthreads < MAX_THREADS) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        if (nthreads == 0)
            cap__sig_kick_reserve();
        /* The new thread inherits this mask: every signal blocked. */
        sigset_t all, saved;
        sigfillset(&all);
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &saved, _NSIG / 8);
        int rc = pthread_create(&t, &attr, pool_main, NULL);
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
        pthread_attr_destroy(&attr);
        if (rc == 0)
            nthreads++; /* pool threads never end */
        else if (nthreads == 0)
            return -EAGAIN;
    }
    j->next = NULL;
    if (tail != NULL)
        tail->next = j;
    else
        head = j;
    tail = j;
    nqueued++;
    pthread_cond_signal(&pool_cv);
    return 0;
}

static bool unlock_job(void *arg)
{
    cap__spin_unlock(&((struct job *)arg)->lock);
    return true;
}

/* Queues j for the calling user thread; 0 or -EAGAIN. */
static int submit(struct job *j)
{
    pool_lock();
    int rc = enqueue_locked(j);
    pool_unlock();
    if (rc != 0)
        return rc;
    atomic_fetch_add(&cap__io_inflight, 1);
    atomic_fetch_add_explicit(&jobs, 1, memory_order_relaxed);
    return 0;
}

static void retire(void)
{
    atomic_fetch_sub_explicit(&jobs, 1, memory_order_relaxed);
    atomic_fetch_sub(&cap__io_inflight, 1);
}

/* Called with j->lock held, returns with it held and j->parked false:
 * parks on j until it is done or the park ends for another reason (its
 * result: a timeout, ECANCELED, or 0 for a wake-up); does not park if j
 * is done or sw (may be NULL) was hit by a signal. */
static int park_on(struct job *j, cap__sig_waiter *sw, uint64_t deadline, bool cancellable)
{
    if (j->done || (sw != NULL && cap__sig_hit(sw)))
        return 0;
    j->parked = true;
    int rc = (cancellable ? cap__park_cancellable : cap__park)(CAP__PARK_OFFLOAD, j, deadline,
                                                               unlock_job, j);
    cap__spin_lock(&j->lock);
    j->parked = false;
    return rc;
}

/* The waiter holds j.lock from before j is queued until it parks, so the
 * job cannot finish first: an offloaded call always lets the worker's
 * other threads run while it is on the pool (tests/io/odirect_read_parks
 * under CAP_DISKIO=threads counts on it). */
int cap__offload(void (*fn)(void *arg), void *arg)
{
    struct cap__thread *self = cap__current();
    if (self == NULL) {
        fn(arg);
        return 0;
    }
    struct job j = { .fn = fn, .arg = arg, .thread = self };
    cap__spin_lock(&j.lock);
    int rc = submit(&j);
    if (rc != 0) {
        cap__spin_unlock(&j.lock);
        return rc;
    }
    while (!j.done)
        park_on(&j, NULL, CAP__FOREVER, false);
    cap__spin_unlock(&j.lock);
    retire();
    return 0;
}

/* Dispatch's interrupt (under the registry's locks): wakes the waiter,
 * which then sees the signal and stops the job. With no signal in the
 * record, a signal sent to the thread under a SA_RESTART handler
 * (cap__sig_direct): a wake-up after which the waiter delivers it and
 * parks again while the job goes on, taken only if the waiter was parked
 * (else it delivers before it parks: cap__offload_call). */
bool cap__offload_interrupt(void *arg)
{
    struct job *j = arg;
    cap__spin_lock(&j->lock);
    bool took = j->parked || atomic_load(&j->sw->sig) != 0;
    wake_locked(j);
    cap__spin_unlock(&j->lock);
    return took;
}

/* Ends j early: takes it off the queue if no pool thread has it (true:
 * it never ran), else kicks its pool thread until the call returns. */
static bool stop_job(struct job *j)
{
    atomic_store(&j->stop, true);
    pool_lock();
    pid_t runner = j->runner;
    if (runner == 0) {
        struct job **pp = &head, *prev = NULL;
        while (*pp != j) {
            prev = *pp;
            pp = &(*pp)->next;
        }
        *pp = j->next;
        if (tail == j)
            tail = prev;
        nqueued--;
    }
    pool_unlock();
    if (runner == 0)
        return true;
    cap__spin_lock(&j->lock);
    while (!j->done) {
        cap__sig_kick(runner);
        park_on(j, NULL, cap__deadline_after(KICK_NS), false);
    }
    cap__spin_unlock(&j->lock);
    return false;
}

long cap__offload_call(void (*fn)(void *arg), void *arg, long *result, const cap__intr *in)
{
    struct cap__thread *self = cap__current();
    cap__sig_waiter sw;
    struct job j = { .fn = fn, .arg = arg, .result = result, .thread = self, .sw = &sw };
    if (self == NULL) {
        fn(arg); /* a signal interrupts it as it would any call */
        return *result;
    }
    /* Entered first: dispatch takes the registry's locks, then j.lock. */
    cap__sig_enter(&sw, in, cap__offload_interrupt, &j);
    cap__spin_lock(&j.lock);
    if (submit(&j) != 0) { /* no pool thread: inline, on the worker */
        cap__spin_unlock(&j.lock);
        cap__sig_leave(&sw);
        fn(arg);
        return *result;
    }
    int why = 0;
    while (!j.done && why == 0) {
        int rc = park_on(&j, &sw, CAP__FOREVER, in->cancel);
        if (j.done)
            break;
        if (rc == ECANCELED) {
            why = ECANCELED;
        } else if (cap__sig_hit(&sw)) {
            why = EINTR;
        } else if (atomic_load(&self->sig_pending) != 0) {
            /* Woken to go on by a signal sent to this thread (or it came
             * between two parks): its handler runs here, with no lock
             * held, and the wait goes on unless it interrupts the call. */
            cap__spin_unlock(&j.lock);
            cap__sig_call_pending(&sw, &self->sig_pending);
            cap__spin_lock(&j.lock);
            if (cap__sig_hit(&sw))
                why = EINTR;
        }
    }
    cap__spin_unlock(&j.lock);
    cap__sig_leave(&sw);
    if (why != 0 && (stop_job(&j) || *result == -EINTR))
        *result = -why; /* the call did not complete: report why */
    retire();
    return *result;
}

bool cap__offload_took(int sig)
{
    if (!on_pool)
        return false;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    struct timespec zero = { 0, 0 };
    return syscall(SYS_rt_sigtimedwait, &s, NULL, &zero, _NSIG / 8) == sig;
}

int cap__offload_threads(void)
{
    return atomic_load_explicit(&nthreads, memory_order_relaxed);
}
