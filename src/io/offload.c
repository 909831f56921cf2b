/* SPDX-License-Identifier: MIT */
/*
 * The offload pool: kernel threads that run blocking calls for user
 * threads (CAP_DISKIO=threads, and libc calls that cannot be made
 * non-blocking: getaddrinfo and friends, a connect on a descriptor we may
 * not make non-blocking). The user thread parks; a pool thread runs the
 * call and unparks it. Pool threads are kernel threads the library does
 * not run, so every libc call they make goes straight to libc.
 *
 * Two kinds of job, two FIFO queues. A wait (cap__offload_call, and
 * cap__offload_wait: a FIFO open, a record lock, a System V or POSIX
 * message-queue or semaphore wait, waitpid, pclose, a wide stdio call on
 * a pipe, ...) may wait without bound for another thread of the program,
 * perhaps one whose own call is queued here: it gets a thread whenever
 * none is idle, up to CAP_POOL_THREADS (default 4096), as NPTL would give
 * each blocked thread its own. Work (cap__offload: a disk transfer, a
 * device sync, getaddrinfo) ends by itself: at most WORK_THREADS of it
 * run at once, the rest queue in order, so a burst of disk reads does not
 * start thousands of threads. Queued waits are taken before queued work.
 * A job is runnable if it is a queued wait, or queued work within the
 * work bound; a thread is started whenever the runnable jobs outnumber
 * the idle threads and those started that have not yet looked for a job
 * (an idle thread signalled for an earlier job still counts as idle
 * until it takes it, a starting thread until it looks, and that job as
 * runnable, so each job of a burst gets one thread, not two), and an
 * idle thread is woken. A thread that
 * stays idle for IDLE_NS while the pool has more than WORK_THREADS
 * threads ends, so a burst of waits does not keep its threads for good.
 *
 * A wait queues only at CAP_POOL_THREADS, or when the kernel refuses a
 * new thread (pthread_create failing: RLIMIT_NPROC, threads-max, a pids
 * cgroup, memory). It then waits for the next free thread, as work does:
 * the honest choice, since the real call never fails for want of a
 * thread, and running it on the worker would block every thread there.
 * Its cancel, its signals and its own timeout still end it while queued:
 * a timed wait (semtimedop, mq_timedsend, aio_suspend, ...) that is still
 * queued at its deadline leaves the queue, and the caller makes the call
 * once without waiting and returns that (cap__offload_call_until): what
 * the kernel's call returns at its timeout, or its success if the object
 * became ready meanwhile, as the kernel's, which tries before it looks
 * at the timeout.
 * With no pool thread at all the call runs on the worker (waits) or the
 * caller is told (-EAGAIN, work). Work has no timeouts of its own.
 * The first wait that queues for want of a thread is said on stderr,
 * once: if a running call waits for it, the program hangs, and would
 * otherwise hang without a word (every user thread parked, the pool busy:
 * no deadlock report).
 *
 * A job lives on the waiting thread's stack. The pool thread sets `done`
 * and unparks under job->lock; the waiter takes and drops the same lock
 * after waking, so it cannot return (and free the record) while the pool
 * thread is still unlocking it.
 *
 * A wait's park can also end for a cancel request or a signal, as they
 * would end the call in the kernel. Stopping a job: if no pool thread has
 * taken it, it leaves the queue and never runs; otherwise `stop` is set
 * and its pool thread is kicked (cap__sig_kick, a signal to that kernel
 * thread alone) until the call returns: the kick interrupts the system
 * call with EINTR, and the pool thread, seeing `stop`, does not retry it.
 * Kicks repeat every KICK_NS because one that lands just before the
 * system call is entered interrupts nothing. A call that completed anyway
 * keeps its result. (Kicks are sent under job->lock while the job is not
 * done, so its pool thread, which takes that lock to say done before it
 * can end, is alive for each.)
 *
 * A job runs in its waiter's locale: a thread with one of its own
 * (uselocale, intercept/libc_tls.c) has the pool thread take it for the
 * job's call, and the global one back before the waiter is woken (it may
 * free that locale once it runs). A wide stream's conversion, made where
 * glibc's call runs, wrote '?' for every character outside ASCII to a
 * pipe of a thread in a UTF-8 locale (the global one was "C").
 *
 * Pool threads block every signal, the kick too except while they run a
 * cap__offload_call job (see run), so process-directed signals go to
 * threads that run the program's handlers. A forked child has no pool
 * threads: cap__offload_forked empties the queues and counts.
 */
#include <errno.h>
#include <locale.h>
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
#include "runtime/config.h"
#include "sched/park.h"
#include "sched/worker.h"
#include "util/clock.h"
#include "util/die.h"
#include "util/spin.h"

enum { WORK_THREADS = 64 };
enum { KICK_NS = 1000000 };
#define IDLE_NS 10000000000ull /* 10 s */

struct job {
    void (*fn)(void *arg);
    void *arg;
    long *result;      /* cap__offload_call's jobs: where fn stores its result */
    bool waits;        /* may wait without bound: not held to WORK_THREADS */
    struct job *next;  /* [pool_mu] */
    struct cap__thread *thread;
    pid_t runner;      /* [pool_mu] the pool thread running it, 0 while queued */
    atomic_bool stop;  /* the waiter gave up: do not retry an interrupted call */
    cap__spin lock;
    bool done;         /* [lock] */
    bool parked;       /* [lock] the waiter is parked on the job */
    cap__sig_waiter *sw; /* cap__offload_call's record in the signal registry */
    locale_t locale;   /* the waiter's own locale (uselocale), or 0: the global one */
};

struct queue {
    struct job *head, *tail;
    int n;
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
static struct queue waitq, workq; /* [pool_mu] jobs not yet taken */
static atomic_int nthreads;      /* [pool_mu] for writes; read by cap__offload_threads */
static int nidle;               /* [pool_mu] */
static int nstarting;           /* [pool_mu] threads started, not yet looking for a job */
static int nwork;               /* [pool_mu] work jobs taken by a thread, not yet done */
static atomic_int jobs;         /* queued or running for user threads */
/* A wait queued for want of a thread: 0 not yet; SHORT_BOUND or
 * SHORT_REFUSED once one did, to be said (outside pool_mu: stderr may
 * block); SHORT_SAID once said. */
enum { SHORT_BOUND = 1, SHORT_REFUSED, SHORT_SAID };
static atomic_int short_state;

void cap__offload_forked(void)
{
    pthread_mutex_init(&pool_mu, NULL);
    pthread_cond_init(&pool_cv, NULL);
    waitq = (struct queue){ 0 };
    workq = (struct queue){ 0 };
    nthreads = nidle = nstarting = nwork = 0;
    atomic_store(&jobs, 0);
}

bool cap__offload_busy(void)
{
    return atomic_load_explicit(&jobs, memory_order_relaxed) != 0;
}

/* The most threads work may hold at once: CAP_POOL_THREADS may be lower. */
static int work_bound(void)
{
    return cap__cfg.pool_threads < WORK_THREADS ? cap__cfg.pool_threads : WORK_THREADS;
}

static void push(struct queue *q, struct job *j)
{
    j->next = NULL;
    if (q->tail != NULL)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    q->n++;
}

static struct job *pop(struct queue *q)
{
    struct job *j = q->head;
    q->head = j->next;
    if (q->head == NULL)
        q->tail = NULL;
    q->n--;
    return j;
}

/* Takes j, which is queued, off q. */
static void unlink_job(struct queue *q, struct job *j)
{
    struct job **pp = &q->head, *prev = NULL;
    while (*pp != j) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    *pp = j->next;
    if (q->tail == j)
        q->tail = prev;
    q->n--;
}

/* Queued jobs a free thread may take now. Caller holds pool_mu. */
static int runnable_locked(void)
{
    int room = work_bound() - nwork;
    return waitq.n + (room <= 0 ? 0 : workq.n < room ? workq.n : room);
}

/* The next job a free thread may take, off its queue; NULL if none.
 * Caller holds pool_mu. */
static struct job *next_locked(void)
{
    if (waitq.head != NULL)
        return pop(&waitq);
    if (workq.head != NULL && nwork < work_bound()) {
        nwork++;
        return pop(&workq);
    }
    return NULL;
}

static void *pool_main(void *arg);

/* Starts a pool thread; false if the kernel refused it. Caller holds
 * pool_mu. */
static bool start_thread_locked(void)
{
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
    if (rc != 0)
        return false;
    nthreads++;
    nstarting++;
    return true;
}

/* Gives the runnable jobs threads: starts one if they outnumber the idle
 * and starting threads (those signalled or started for jobs queued
 * before have not taken them yet, and a job that waited for a thread
 * another job holds, a reader behind a writer blocked on the pipe it
 * reads, would wait for good; a starting thread not counted, each thread
 * that took a job of a burst started one more for a job that already had
 * one coming), and wakes an idle one. Called after each change that may
 * make one more job runnable. Caller holds pool_mu. */
static void staff_locked(void)
{
    int runnable = runnable_locked();
    if (runnable > nidle + nstarting) {
        bool bound = nthreads >= cap__cfg.pool_threads;
        /* Refused: the job waits for a free thread. */
        if ((bound || !start_thread_locked()) && waitq.n > 0 &&
            atomic_load_explicit(&short_state, memory_order_relaxed) == 0)
            atomic_store(&short_state, bound ? SHORT_BOUND : SHORT_REFUSED);
    }
    if (runnable > 0 && nidle > 0)
        pthread_cond_signal(&pool_cv);
}

/* Says the first wait queued for want of a thread (staff_locked), once.
 * Called without pool_mu. */
static void say_short(void)
{
    int s = atomic_load_explicit(&short_state, memory_order_relaxed);
    if ((s != SHORT_BOUND && s != SHORT_REFUSED) ||
        !atomic_compare_exchange_strong(&short_state, &s, SHORT_SAID))
        return;
    if (s == SHORT_BOUND)
        cap__say("capriccio: a blocking call waits for a free thread of the offload pool: "
                 "all %d (CAP_POOL_THREADS) are busy; it waits for good if a call running "
                 "there waits for it\n", cap__cfg.pool_threads);
    else
        cap__say("capriccio: a blocking call waits for a free thread of the offload pool: "
                 "the kernel refused one more; it waits for good if a call running there "
                 "waits for it\n");
}

/* Waits, idle, for pool_cv; false if this thread should end: it stayed
 * idle for IDLE_NS, the pool has more than WORK_THREADS threads, and
 * nothing it could take is queued (so no job counted on it). Caller holds
 * pool_mu. */
static bool idle_locked(void)
{
    nidle++;
    int rc = 0;
    if (nthreads > WORK_THREADS) {
        struct timespec until = cap__ns_to_timespec(cap__now() + IDLE_NS);
        rc = pthread_cond_clockwait(&pool_cv, &pool_mu, CLOCK_MONOTONIC, &until);
    } else {
        pthread_cond_wait(&pool_cv, &pool_mu);
    }
    nidle--;
    return rc != ETIMEDOUT || nthreads <= WORK_THREADS || runnable_locked() > 0;
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
    nstarting--; /* it looks for a job now */
    for (;;) {
        struct job *j = next_locked();
        if (j == NULL) {
            if (idle_locked())
                continue;
            break;
        }
        j->runner = tid;
        /* This thread may have taken a wait while finishing work made
         * queued work runnable: that one needs a thread too. */
        staff_locked();
        pool_unlock();
        say_short();

        bool waits = j->waits; /* j is the waiter's once done is set */
        locale_t locale = j->locale;
        if (locale != (locale_t)0)
            uselocale(locale);
        run(j, &kick);
        /* Before done: the waiter may free its locale once it runs. */
        if (locale != (locale_t)0)
            uselocale(LC_GLOBAL_LOCALE);
        cap__spin_lock(&j->lock);
        j->done = true;
        wake_locked(j); /* under the lock the waiter parked on */
        cap__spin_unlock(&j->lock);

        pool_lock();
        if (!waits)
            nwork--;
    }
    nthreads--;
    pool_unlock();
    return NULL;
}

/* Queues j and gives it a thread if it may run now; -EAGAIN if the pool
 * has no thread at all and none could be started (the job is not
 * queued). Caller holds pool_mu. */
static int enqueue_locked(struct job *j)
{
    push(j->waits ? &waitq : &workq, j);
    staff_locked();
    if (nthreads == 0) {
        unlink_job(j->waits ? &waitq : &workq, j);
        return -EAGAIN;
    }
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
    struct cap__thread_rare *rare = j->thread->rare;
    j->locale = rare != NULL ? (locale_t)rare->locale : (locale_t)0;
    pool_lock();
    int rc = enqueue_locked(j);
    pool_unlock();
    say_short();
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
 * result: ETIMEDOUT, ECANCELED, or 0 for a wake-up); does not park if j
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
static int offload(void (*fn)(void *arg), void *arg, bool waits)
{
    struct cap__thread *self = cap__current();
    if (self == NULL) {
        fn(arg);
        return 0;
    }
    struct job j = { .fn = fn, .arg = arg, .thread = self, .waits = waits };
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

int cap__offload(void (*fn)(void *arg), void *arg)
{
    return offload(fn, arg, false);
}

int cap__offload_wait(void (*fn)(void *arg), void *arg)
{
    return offload(fn, arg, true);
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

/* Takes j off its queue if no pool thread has taken it: true if it did
 * (it never runs). */
static bool unqueue(struct job *j)
{
    pool_lock();
    bool queued = j->runner == 0;
    if (queued)
        unlink_job(j->waits ? &waitq : &workq, j);
    pool_unlock();
    return queued;
}

/* Ends j early: takes it off the queue if no pool thread has it (true:
 * it never ran), else kicks its pool thread until the call returns. */
static bool stop_job(struct job *j)
{
    atomic_store(&j->stop, true);
    if (unqueue(j))
        return true;
    pool_lock();
    pid_t runner = j->runner;
    pool_unlock();
    cap__spin_lock(&j->lock);
    while (!j->done) {
        cap__sig_kick(runner);
        park_on(j, NULL, cap__deadline_after(KICK_NS), false);
    }
    cap__spin_unlock(&j->lock);
    return false;
}

long cap__offload_call_until(void (*fn)(void *arg), void *arg, long *result,
                             const cap__intr *in, uint64_t deadline,
                             void (*expired)(void *arg))
{
    struct cap__thread *self = cap__current();
    cap__sig_waiter sw;
    struct job j = { .fn = fn, .arg = arg, .result = result, .waits = true, .thread = self,
                     .sw = &sw };
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
    bool expiry_seen = false; /* the deadline passed with the call running */
    while (!j.done && why == 0) {
        int rc = park_on(&j, &sw, expiry_seen ? CAP__FOREVER : deadline, in->cancel);
        if (j.done)
            break;
        if (rc == ECANCELED) {
            why = ECANCELED;
        } else if (cap__sig_hit(&sw)) {
            why = EINTR;
        } else if (rc == ETIMEDOUT) {
            /* Still queued: the call times out, as the kernel's would
             * have by now, but only after one try without waiting, made
             * here: the kernel tries a timed call before it looks at the
             * timeout, so an object made ready while the call was queued
             * (a semaphore posted, a message sent) is taken, and an
             * expired call that would have succeeded at once still does.
             * Running: its own timeout ends it (the caller's fn passes
             * what is left of it). */
            if (unqueue(&j)) { /* (j.lock before pool_mu, as in submit) */
                cap__spin_unlock(&j.lock);
                cap__sig_leave(&sw);
                retire();
                /* It cannot wait, so it runs on the worker. A signal of
                 * the worker's (a kick) may still interrupt the kernel's
                 * look: made again, as run() retries a kicked call. */
                do
                    expired(arg);
                while (*result == -EINTR);
                return *result;
            }
            expiry_seen = true;
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

long cap__offload_call(void (*fn)(void *arg), void *arg, long *result, const cap__intr *in)
{
    return cap__offload_call_until(fn, arg, result, in, CAP__FOREVER, NULL);
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
