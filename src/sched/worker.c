/* SPDX-License-Identifier: MIT */
/*
 * The worker loop: where each worker's scheduler context spends its life.
 * See worker.h for what a worker owns.
 *
 * One round:
 *   1. move woken threads from the inbox to the policy's local queue;
 *   2. fire expired timers (only if the heap is non-empty);
 *   3. pick: the policy's next thread, else our lone new thread or one
 *      from our steal queue, else one stolen from another worker; every 61st round, and after a yield
 *      that came through the scheduler, the steal queues go first so new
 *      threads are not starved by a busy local queue;
 *   4. run it until it switches back, then finish what it asked for
 *      (release a wait-structure lock, requeue a yielder, reap an exited
 *      thread); the first thread after an idle step is preceded by the
 *      poller's idle_end (poller.h);
 *   5. with nothing to run: spin briefly (an adaptive budget, yielding the
 *      CPU to other processes between checks) watching for
 *      work handed to this worker, look once for work to steal, then sleep
 *      in the poller.
 *
 * Placement: a new thread created on a worker with nothing else queued
 * (a lone one) stays there, in the worker's `lone` slot, since its creator
 * most often waits for it next; other workers steal it (within the
 * balance rule below) when their idle spin ends or, asleep, the one
 * sleeping re-checker at least every RECHECK_NS while some worker is
 * awake. Other new threads are dealt over the workers by a hash of a
 * per-creator turn counter (even, but without the aliasing of round-robin
 * with a program's own creation pattern), into each target's steal queue,
 * and a sleeping target is woken; with one worker they go straight to the
 * local queue. A creator's first PLACE_SINGLES are dealt one by one: a
 * small group of threads that hand work to each other (a producer and a
 * consumer, a few yielders) all start at once, before another worker can
 * take any, so a group dealt to one worker would share one CPU for good
 * (producer-consumer on two workers at 4-8 threads: 8.5M msg/s in runs,
 * Go 10M). Later ones are dealt in runs of PLACE_RUN consecutive turns:
 * threads created one after the other are often the neighbours of a
 * pipeline or a ring (pipetest: thread i writes the pipe thread i + 1
 * reads), and one dealt alone alternates workers with its neighbours
 * three times in four for two workers (the hash's step of 0.618), so
 * every such hop would cross workers (an inbox push and cache lines
 * between CPUs instead of a local switch; pipetest on two workers at
 * 4,096 pipes: 0.62M tokens/s dealt one by one, 1.47M in runs of 8). A
 * run lands on one worker; the others take from it as from any steal
 * queue, within the balance rule. Dealing
 * (rather than leaving a burst in the creator's queue for idle workers to
 * steal) matters because a woken worker needs tens of microseconds to get
 * going, by which time the creator would have started the whole burst
 * itself, and started threads never move. A thread still waits in a steal
 * queue, so an idle worker takes it if its target is slow to get there,
 * and a thread that parks with nothing local to run takes one too (a
 * joiner thus runs the thread it just created). Started threads stay on
 * their worker unless CAP_MIGRATE=1 (worker.h), so taking another
 * worker's new thread is allowed only while the taker is not ahead: it
 * has at most BALANCE_SLACK more threads started on it than the other
 * will have once it starts the ones dealt to it. The slack lets a few
 * threads that talk to each other share a worker, as they did before
 * the rule (a ping-pong pair whose joiner takes both: ~10x cheaper
 * than across workers). Without the rule, a worker left idle
 * while main creates threads in a loop (main keeps its own worker busy)
 * would start, and keep for good, every thread of the burst: all of a
 * pipe ring's readers on one worker, the other idle. A worker stuck in
 * one thread (no scheduling round for STALL_NS) loses the rule's
 * protection, one thread per STALL_NS, so a new thread is not held up
 * indefinitely behind a thread that never blocks.
 *
 * Timers: each worker's heap holds the deadlines of the threads that
 * parked on it (sched/timer.h), and the worker expires them at each
 * scheduling round. A worker that runs one thread for long (a thread
 * that computes without parking) makes no rounds, so its sleepers would
 * stay parked past their deadlines while another worker idles. With
 * CAP_MIGRATE=1 such a sleeper could run on the idle one, so an idle
 * worker also expires the other workers' timers (expire_others), under
 * each heap's lock, before it sleeps and as it wakes: the threads fired
 * land in its own steal queue (cap__make_runnable) and it runs them. It
 * sleeps no later than the earliest deadline of the workers that are
 * awake (a sleeping one wakes for its own); a deadline armed on a busy
 * worker after the idle ones went to sleep is seen when the re-checker
 * (below) next wakes, within RECHECK_NS. Without migration a started
 * thread runs only on its own worker, so a timer fired elsewhere would
 * only move it to that worker's inbox, where the busy thread still holds
 * it back: the others' heaps are left alone then (README, Limits).
 * Invariants: fire_timer only claims and makes runnable (it never arms
 * or cancels, as cap__timer_expire requires, from any worker); a thread
 * that resumes cancels its timer under that heap's lock, so a fire on
 * another worker is over before the thread can park again (timer.c);
 * another worker leaves alone a timer whose thread is still parking
 * (timer_parked), which only the worker running the park could fire
 * safely.
 *
 * Direct switches: a yield, a park and an exit go straight to the next
 * thread (local queue, then steal queues) on all but every 61st switch
 * (a yield then too, when the scheduler's round would have nothing to do);
 * an exiting thread hands over to its parked joiner when they share a
 * worker. The thread switched to finishes the step the previous one left
 * (finish_switch), as the kernel's finish_task_switch does.
 */
#include "sched/worker.h"

#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/sigdirect.h"
#include "io/sigmask.h"
#include "runtime/config.h"
#include "sched/held.h"
#include "sched/policy.h"
#include "sched/policy_fifo.h"
#include "sched/poller.h"
#include "sched/switch.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/die.h"
#include "util/futex.h"
#include "util/sigctx.h"
#include "util/spin.h"

enum {
    STEAL_QUEUE_EVERY = 61, /* rounds between steal-queue-first picks */
    IDLE_SPIN_ROUNDS = 4,   /* most checks for work before sleeping that
                               follow a yield which ran another task (64
                               gave the load generator of Knot's paper
                               pattern less CPU: 5-13% fewer requests/s
                               than 16; 4 cut its yields per request from
                               ~0.6 to ~0.1 at 1,000 clients and its CPU
                               per request by 0-6%; 1 was no better) */
    FREE_SPIN_ROUNDS = 64,  /* most checks that follow a yield which found
                               nothing else to run (~35 us in all): a
                               spin no one else wants the CPU for costs
                               no one; pipetest on two workers at 8 pipes,
                               whose tokens cross workers every few us,
                               passed 0.13-0.37M tokens/s with 4 checks,
                               1.54-1.66M with this budget */
    YIELD_FREE_NS = 2000,   /* a yield that returned within this ran no
                               other task (~0.5 us here when it does not) */
    SPIN_WORTH_NS = 50000,  /* a sleep this short: a longer spin would have
                               caught the wake-up, so the next spin gets
                               the whole budget (set when 64 rounds took
                               ~35 us on this EPYC with no other task
                               wanting the CPU, sched_yield ~0.5 us; 16
                               take ~9 us) */
    OWN_SPIN_NS = 80000,    /* longest spin for the worker's own disk
                               requests: a device answering within it
                               (60-80 us here) is caught without a sleep
                               and a wake-up */
    RECHECK_NS = 1000000,   /* longest sleep of the re-checker while
                               another worker is awake: that one may hold
                               a lone new thread (see cap__schedule_new) it
                               is not running */
};
enum { BALANCE_SLACK = 2 };
enum {
    PLACE_SINGLES = 16, /* a creator's first new threads are dealt one by one */
    PLACE_RUN = 8,      /* later ones in runs of this many to one worker */
};
#define STALL_NS 5000000ull /* a worker this long in one thread is stuck */

cap__runtime cap__rt;
__thread cap__worker *cap__self_worker __attribute__((tls_model("initial-exec")));
#ifdef CAP__ASAN
__thread bool cap__asan_switching __attribute__((tls_model("initial-exec")));
#endif

/* ---- the policy ---------------------------------------------------- */

/* Calls into the active policy. With `fifo` they skip the indirect call:
 * enqueue and pick sit on every yield and park, where an indirect call
 * and the spills around it cost a visible share of a 10 ns switch. */
static inline void policy_enqueue(cap__worker *w, cap__thread *t)
{
    if (__builtin_expect(cap__policy_active == &cap__policy_fifo, 1))
        cap__fifo_enqueue(w, t);
    else
        cap__policy_active->enqueue(w, t);
}

static inline cap__thread *policy_pick_next(cap__worker *w)
{
    if (__builtin_expect(cap__policy_active == &cap__policy_fifo, 1))
        return cap__fifo_pick_next(w);
    return cap__policy_active->pick_next(w);
}

/* ---- queues -------------------------------------------------------- */

static void steal_push(cap__worker *w, cap__thread *t)
{
    cap__spin_lock(&w->steal_lock);
    cap__tqueue_push(&w->steal, t);
    atomic_store_explicit(&w->steal_len, w->steal.len, memory_order_relaxed);
    cap__spin_unlock(&w->steal_lock);
}

static cap__thread *steal_pop(cap__worker *w)
{
    if (atomic_load_explicit(&w->steal_len, memory_order_relaxed) == 0)
        return NULL;
    cap__spin_lock(&w->steal_lock);
    cap__thread *t = cap__tqueue_pop(&w->steal);
    atomic_store_explicit(&w->steal_len, w->steal.len, memory_order_relaxed);
    cap__spin_unlock(&w->steal_lock);
    return t;
}

/* The lone new thread of w, if any (see cap__schedule_new); w itself or a
 * thief. */
static cap__thread *take_lone(cap__worker *w)
{
    if (atomic_load_explicit(&w->lone, memory_order_relaxed) == NULL)
        return NULL;
    return atomic_exchange_explicit(&w->lone, NULL, memory_order_acquire);
}

/* A new thread of w's: its lone one, else the oldest of its steal queue. */
static cap__thread *take_new(cap__worker *w)
{
    cap__thread *t = take_lone(w);
    return t != NULL ? t : steal_pop(w);
}

static void inbox_push(cap__worker *w, cap__thread *t)
{
    cap__thread *head = atomic_load_explicit(&w->inbox, memory_order_relaxed);
    do {
        t->run_next = head;
    } while (!atomic_compare_exchange_weak_explicit(&w->inbox, &head, t,
                                                    memory_order_seq_cst,
                                                    memory_order_relaxed));
}

/* Takes the whole inbox (so no ABA) and hands it to the policy oldest
 * first; a thread that a running thread woke (wake_front) goes to the
 * front, as it would have from a thread of this worker (make_runnable).
 * The check is inline: it runs on every yield. */
static void inbox_take(cap__worker *w)
{
    cap__thread *t = atomic_exchange_explicit(&w->inbox, NULL, memory_order_acquire);
    cap__thread *fifo = NULL;
    while (t != NULL) { /* reverse the LIFO */
        cap__thread *next = t->run_next;
        t->run_next = fifo;
        fifo = t;
        t = next;
    }
    while (fifo != NULL) {
        cap__thread *next = fifo->run_next;
        if (fifo->wake_front && cap__policy_active == &cap__policy_fifo)
            cap__fifo_wake(w, fifo);
        else
            policy_enqueue(w, fifo);
        fifo = next;
    }
}

static inline void inbox_drain(cap__worker *w)
{
    if (atomic_load_explicit(&w->inbox, memory_order_relaxed) != NULL)
        inbox_take(w);
}

/* ---- waking idle workers ------------------------------------------ */

static void wake_worker(cap__worker *w)
{
    if (atomic_exchange(&w->sleeping, 0) == 1)
        cap__poller_active->wake(w);
}

/* After publishing stealable work: wake one sleeping worker, if any. */
static void wake_one_idle(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&cap__rt.nsleeping) == 0)
        return;
    unsigned start = atomic_fetch_add_explicit(&cap__rt.next_victim, 1, memory_order_relaxed);
    for (int i = 0; i < cap__rt.nworkers; i++) {
        cap__worker *w = &cap__rt.workers[(start + (unsigned)i) % (unsigned)cap__rt.nworkers];
        if (atomic_load(&w->sleeping) == 1 && atomic_exchange(&w->sleeping, 0) == 1) {
            cap__poller_active->wake(w);
            return;
        }
    }
}

/* ---- making threads runnable -------------------------------------- */

/* Parked on a synchronisation object rather than a descriptor, a sleep or
 * the kernel thread pool. */
static bool sync_reason(enum cap__park_reason r)
{
    return (r >= CAP__PARK_JOIN && r <= CAP__PARK_BARRIER) || r == CAP__PARK_WAIT;
}

uint32_t cap__fork_gen;

/* A fork's child has one worker, the forking thread's (below); the
 * others, whose kernel threads it does not have, start again at its first
 * thread creation (cap__workers_forked_restart), so that a child that
 * only execs or exits pays nothing. Their structs stay where they were in
 * the parent's array: worker ids index it (the steal loops) and tables
 * kept per worker id (io/idle.c, io/diskstats.h). */
static cap__worker *forked_base;  /* the array, in a child with workers to start */
static int forked_count, forked_here; /* its length; the forking worker's index */
static atomic_int forked_pending; /* 1: workers to start; 2: being started */
static size_t kthread_stack_size; /* workers 1..n-1's: start_kthread */

void cap__sched_forked(cap__thread *self)
{
    cap__fork_gen++;
    if (self != NULL) {
        self->fork_gen = cap__fork_gen;
        cap__main_handle = cap__thread_handle(self); /* (thread.h) */
    }
    for (int i = 0; i < cap__rt.nworkers; i++) {
        cap__worker *w = &cap__rt.workers[i];
        w->local = (cap__tqueue){ 0 };
        w->fifo_front = 0;
        w->fifo_front_end = NULL;
        w->fifo_wake_streak = 0;
        w->fifo_back_run = 0;
        atomic_store(&w->inbox, NULL);
        w->steal_lock = (cap__spin)CAP__SPIN_INIT; /* perhaps held by a lost thread */
        w->steal = (cap__tqueue){ 0 };
        atomic_store(&w->steal_len, 0);
        atomic_store(&w->lone, NULL);
    }
    /* The forking kernel thread's worker is the child's only one: its new
     * threads are placed there, not on workers no kernel thread runs. */
    cap__worker *here = cap__self_worker;
    if (here != NULL && cap__rt.nworkers > 1) {
        forked_base = cap__rt.workers;
        forked_count = cap__rt.nworkers;
        forked_here = (int)(here - cap__rt.workers);
        atomic_store(&forked_pending, 1);
    } else if (here == NULL) {
        atomic_store(&forked_pending, 0);
    }
    /* (a child of a child that has not started its workers yet keeps the
     * first child's record: the same array, the same forking worker) */
    if (here != NULL) {
        here->id = 0;
        atomic_store(&here->tid, (pid_t)syscall(SYS_gettid)); /* the child's */
        atomic_store(&here->io_waits, 0); /* the lost threads' (and counts kept
                                             per worker: migrated waits) */
        cap__timer_forked(&here->timers);
        cap__rt.workers = here;
        cap__rt.nworkers = 1;
        atomic_store(&cap__rt.nsleeping, 0);
        atomic_store(&cap__rt.nsleeping_forever, 0);
        atomic_store(&cap__rt.rechecker, 0);
    }
    cap__thread_table_forked();
    cap__wait_forked();
    cap__deadlock_forked();
}

static void init_worker(cap__worker *w, int id);
static void start_others(const cap__worker *running);

/* A worker of a fork's child that the child did not get: emptied as
 * cap__workers_start leaves a new one (its queues were emptied at the
 * fork; its timer heap keeps its reserved room). */
static void reset_forked_worker(cap__worker *w, int id)
{
    init_worker(w, id);
    w->current = NULL;
    w->sched_sp = NULL;
    w->sched_fake = NULL;
    w->after = CAP__AFTER_NONE;
    w->after_unlock = NULL;
    w->after_arg = NULL;
    w->prev = NULL;
    cap__timer_forked(&w->timers);
    w->steal_first = false;
    w->poll_first = false;
    atomic_store(&w->sleeping, 0);
    atomic_store(&w->homed, 0);
    atomic_store(&w->io_waits, 0);
    w->watch = NULL;
    w->watch_ticks = 0;
    w->watch_since = 0;
    atomic_store(&w->tid, 0);
    atomic_store(&w->sig_applied, 0);
    atomic_store(&w->set_up, 0);
}

void cap__workers_forked_restart(void)
{
    int pending = 1;
    if (atomic_load_explicit(&forked_pending, memory_order_relaxed) != 1 ||
        !atomic_compare_exchange_strong(&forked_pending, &pending, 2))
        return;
    cap__worker *here = &forked_base[forked_here];
    if (cap__self_worker != here) { /* (a thread the library did not make) */
        atomic_store(&forked_pending, 1);
        return;
    }
    for (int i = 0; i < forked_count; i++)
        if (&forked_base[i] != here)
            reset_forked_worker(&forked_base[i], i);
    /* The whole array, before any kernel thread runs it. */
    here->id = forked_here;
    cap__rt.workers = forked_base;
    cap__rt.nworkers = forked_count;
    start_others(here);
    atomic_store(&forked_pending, 0);
}

void cap__make_runnable(cap__thread *t)
{
    /* A thread of the parent, in a fork's child: never runs (worker.h). */
    if (__builtin_expect(cap__fork_gen != 0, 0) && t->fork_gen != cap__fork_gen)
        return;
    cap__worker *here = cap__self_worker;
    atomic_store_explicit(&t->state, CAP__T_RUNNABLE, memory_order_relaxed);
    if (cap__cfg.migrate && t->kernel_bound == 0) {
        steal_push(here != NULL ? here : t->worker, t);
        wake_one_idle();
        return;
    }
    cap__worker *home = t->worker;
    /* Woken by a running thread of this worker: the fifo runs it next,
     * since the waker just made what it waited for. Wake-ups the
     * scheduler makes (expired timers, harvested I/O) and foreign kernel
     * threads make queue at the back, in the order they were made, so
     * ready descriptors are served in event order. */
    bool by_thread = here != NULL && here->current != NULL;
    if (home == here) {
        if (cap__policy_active->on_wake != NULL)
            cap__policy_active->on_wake(home, t);
        if (__builtin_expect(cap__policy_active == &cap__policy_fifo, 1) && by_thread)
            cap__fifo_wake(home, t);
        else
            policy_enqueue(home, t);
        return;
    }
    /* From a running thread of another worker, a thread parked on a
     * synchronisation object (a mutex handed on, a condition signalled, a
     * semaphore posted, a join) runs next there too. Started threads never
     * move, so at the back it would wait for its worker's whole run queue,
     * and a chain of wake-ups that crosses workers (the waiters of one
     * lock, on both) would pay a full round per hop: Knot's cache lock
     * kept requests waiting hundreds of milliseconds for a lock that was
     * nearly always free. Descriptor wake-ups (a pipe write waking the
     * reader elsewhere) keep their place: at the front they cost pipetest
     * on two workers a third of its rate. */
    t->wake_front = by_thread && sync_reason(t->reason); /* read by home after the exchange */
    inbox_push(home, t);
    wake_worker(home);
}

/* Whether w has nothing queued: no thread waiting in its local queue,
 * its inbox, its steal queue or its lone slot. */
static bool alone_on(cap__worker *w)
{
    return w->local.len == 0 && atomic_load_explicit(&w->inbox, memory_order_relaxed) == NULL &&
           atomic_load_explicit(&w->steal_len, memory_order_relaxed) == 0 &&
           atomic_load_explicit(&w->lone, memory_order_relaxed) == NULL;
}

void cap__schedule_new(cap__thread *t)
{
    cap__worker *here = cap__self_worker;
    unsigned n = (unsigned)cap__rt.nworkers;
    unsigned turn = here != NULL ? here->place_turn++
                                 : atomic_fetch_add_explicit(&cap__rt.next_victim, 1,
                                                             memory_order_relaxed);
    /* The first PLACE_SINGLES turns one by one, then runs of PLACE_RUN
     * consecutive turns, each slot (turn or run) by a hash of its number,
     * not slot % n: a program that creates threads in a
     * repeating pattern (producer, consumer, producer, ...) would
     * otherwise put every thread of one kind on one worker whenever the
     * pattern's period and n share a factor. Fibonacci hashing keeps the
     * deal even over any run of turns: the fraction run x 0.618... (the
     * product's top 32 bits) scaled to n. Its low bits would not: bit 40
     * of the product deals 0-7 as 0,1,1,1,0,0,0,0. The runs (see the top
     * of the file) keep threads created one after the other together. */
    unsigned slot = turn < PLACE_SINGLES ? turn
                                         : PLACE_SINGLES + (turn - PLACE_SINGLES) / PLACE_RUN;
    uint64_t frac = ((uint64_t)slot * 0x9e3779b97f4a7c15u) >> 32;
    cap__worker *target = &cap__rt.workers[(frac * n) >> 32];
    atomic_store_explicit(&t->state, CAP__T_RUNNABLE, memory_order_relaxed);
    if (n == 1 && target == here && !cap__cfg.migrate) {
        /* No other worker could steal it: skip the steal queue's lock.
         * (Under migration the steal queues are where runnable threads
         * wait; the local queue holds those bound to the worker.) */
        policy_enqueue(here, t);
        return;
    }
    if (here != NULL && alone_on(here)) {
        /* A lone new thread stays with its creator, which most often
         * waits for it next (create then join, a task handed to a fresh
         * thread); dealing it to another worker costs cache lines that
         * cross between the two on every creation, for nothing when the
         * creator then runs it itself. It stays stealable: idle workers
         * look at other workers' steal queues when their spin ends (and
         * the re-checker at least every RECHECK_NS while another worker
         * is awake: take_recheck), and one asleep with no deadline is
         * woken, so a creator that
         * computes on does not hold it back for long. */
        atomic_store_explicit(&here->lone, t, memory_order_release);
        atomic_thread_fence(memory_order_seq_cst); /* the store before the check */
        if (atomic_load_explicit(&cap__rt.nsleeping_forever, memory_order_relaxed) != 0)
            wake_one_idle();
        return;
    }
    steal_push(target, t);
    if (target != here) {
        atomic_thread_fence(memory_order_seq_cst); /* the push before the sleeping check */
        wake_worker(target);
    }
}

/* ---- switching ------------------------------------------------------ */

static void finish_switch_step(cap__worker *w);
static cap__thread *steal_from_others(cap__worker *w);

/* Carries out what the last thread to switch away on w left to do, if
 * anything. Runs first thing wherever the worker resumes: on the scheduler
 * context, or on the stack of a thread resumed by a direct switch. Yields
 * leave nothing, so the check is inline. */
static inline void finish_switch(cap__worker *w)
{
    if (w->after != CAP__AFTER_NONE)
        finish_switch_step(w);
}

static void leave_after(cap__worker *w, cap__thread *self, enum cap__after after,
                        cap__unlock_fn unlock, void *arg)
{
    w->after = after;
    w->after_unlock = unlock;
    w->after_arg = arg;
    w->prev = self;
}

/* The dlerror result of the thread leaving w, which it keeps in its frame
 * (the switch's own local) until it runs again, so that the next thread
 * finds none (intercept/libc_tls.c); NULL for nearly every switch. */
static inline __attribute__((always_inline)) void *take_dl_error(cap__worker *w)
{
    void *r = *w->dlerror_slot;
    if (__builtin_expect(r != NULL, 0))
        *w->dlerror_slot = NULL;
    return r;
}

void cap__switch_to_scheduler(cap__thread *self, enum cap__after after,
                              cap__unlock_fn unlock, void *arg)
{
    cap__worker *w = self->worker;
    void *dl_error = take_dl_error(w);
    if (__builtin_expect(self->held_locks != NULL, 0))
        cap__held_release_all(self);
    leave_after(w, self, after, unlock, arg);
    self->saved_errno = *w->errno_slot;
    cap__switch(&self->sp, &self->asan_fake_stack, w->sched_sp, w->sched_lo, w->sched_size);
    finish_switch(self->worker); /* resumed, maybe by a thread's direct switch */
    if (__builtin_expect(self->held_locks != NULL, 0))
        cap__held_retake_all(self);
    if (__builtin_expect(dl_error != NULL, 0)) /* after: it may park (libc_tls.c) */
        cap__dl_error_put_back(self->worker, dl_error);
}


static const void *stack_lo(const cap__thread *t)
{
    return t->stack.lo;
}

static size_t stack_size(const cap__thread *t)
{
    return (size_t)((const char *)t->stack.hi - (const char *)t->stack.lo);
}

/* Makes t the running thread of w: claims it for w if it has not started,
 * and puts its errno in the kernel thread's slot. The caller then switches
 * to it. */
static inline __attribute__((always_inline)) void enter(cap__worker *w, cap__thread *t)
{
    if (!t->started) {
        t->started = true;
        t->worker = w;
        atomic_store_explicit(&w->homed, atomic_load_explicit(&w->homed, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    atomic_store_explicit(&t->state, CAP__T_RUNNING, memory_order_relaxed);
    w->current = t;
    *w->errno_slot = t->saved_errno;
}

/* Bytes above a parked thread's saved stack pointer that it touches as it
 * resumes: the context, then the frames of the park path it returns
 * through (a read() parked on a socket: some 1.3 KiB, measured from the
 * frame sizes of cap__ctx_switch up to the intercepted read). */
enum { RESUME_PREFETCH_BYTES = 1024 };

/* Starts loading what the local queue's head will touch when it runs:
 * its TCB and the top of its parked stack. Called when the thread before
 * it is switched to, so the loads overlap that thread's run instead of
 * stalling the next switch. With many threads (a thread-per-connection
 * server at 1,000 connections) these lines are out of the caches and TLB
 * by the time a thread's turn comes round again. The head is only a
 * guess at who runs next (a wake-up to the front may come first);
 * prefetches never fault, and read only [owner] fields of a thread in
 * this worker's own queue. */
static inline __attribute__((always_inline)) void prefetch_following(cap__worker *w)
{
    cap__thread *t = w->local.head;
    if (t == NULL)
        return;
    /* The thread after it: only its TCB for now (all of it: a park and a
     * resumption touch fields across it), so that the sp load below hits
     * when its turn to be prefetched comes. */
    /* Unrolled (the trip counts are constants): as loops, the counting
     * and branching cost ~40 instructions a switch besides the prefetches
     * themselves (callgrind, HTTP hello). */
    const char *after = (const char *)t->run_next;
    if (after != NULL)
#pragma GCC unroll 16
        for (size_t off = 0; off < sizeof(cap__thread); off += 64)
            __builtin_prefetch(after + off);
    const char *sp = t->sp;
#pragma GCC unroll 16
    for (size_t off = 0; off < RESUME_PREFETCH_BYTES; off += 64)
        __builtin_prefetch(sp + off);
}

/* Thread to thread, on one worker. next comes from the local queue or,
 * not yet started, from this worker's steal queue; it finishes whatever
 * self left in w->after (a new thread does so in cap__worker_entered). */
static inline __attribute__((always_inline)) void
switch_direct_mx(cap__worker *w, cap__thread *self, cap__thread *next, const uint32_t *mxcsr)
{
    void *dl_error = take_dl_error(w);
    if (__builtin_expect(self->held_locks != NULL, 0))
        cap__held_release_all(self);
    self->saved_errno = *w->errno_slot;
    bool fresh = !next->started;
    enter(w, next);
    cap__switch_to_mx(&self->sp, &self->asan_fake_stack, next->sp, stack_lo(next),
                      stack_size(next), fresh, mxcsr);
    finish_switch(self->worker);
    if (__builtin_expect(self->held_locks != NULL, 0))
        cap__held_retake_all(self);
    if (__builtin_expect(dl_error != NULL, 0)) /* after: it may park (libc_tls.c) */
        cap__dl_error_put_back(self->worker, dl_error);
}

static inline __attribute__((always_inline)) void
switch_direct(cap__worker *w, cap__thread *self, cap__thread *next)
{
    switch_direct_mx(w, self, next, NULL);
}

bool cap__worker_runs_frames_of(const cap__worker *w, const cap__thread *t, const void *sp)
{
    const char *p = sp;
    if (p >= (const char *)w->sched_lo && p < (const char *)w->sched_lo + w->sched_size)
        return false;
    /* On t's stack, but the switch not over: t has yet to carry out the
     * step the thread it came from left (finish_switch), or is leaving
     * its own (set just before its context is saved). */
    if (w->after != CAP__AFTER_NONE)
        return false;
#ifdef CAP__ASAN
    if (cap__asan_switching) /* between the fiber annotations */
        return false;
#endif
    /* Linked stacks: t may run on any chunk, one that it is linking too,
     * whose link list cannot be read then; only the scheduler's stack is
     * told apart (a direct switch's window is not: docs/stacks.md). */
    return cap__stack_linked_mode() ||
           (p >= (const char *)t->stack.lo && p < (const char *)t->stack.hi);
}

void cap__worker_entered(void)
{
    finish_switch(cap__worker_self());
}

/* Whether a poll of the I/O backend could find anything: it has a poll,
 * and some I/O could complete (a non-blocking epoll_wait is still a system
 * call, which pure compute and sync workloads should not pay). */
static bool poll_worthwhile(void)
{
    const cap__poller *p = cap__poller_active;
    return p->poll != NULL && (p->pending == NULL || p->pending());
}

/* Whether a signal handler left work for the signal dispatch (a signal
 * kept for a thread that accepts it, a deferred wake-up: util/sigctx.h).
 * The dispatch runs from a poll, which a worker whose switches all go
 * thread to thread makes only on its periodic turn; a kept signal whose
 * taker then computes on this worker without parking would never reach
 * it. So such work sends the next switch through the scheduler, which
 * polls (find_work). A relaxed load of a flag that handlers alone set. */
static inline bool sig_work_waiting(void)
{
    return atomic_load_explicit(&cap__sig_work_left, memory_order_relaxed);
}

/* Whether this switch may go thread to thread: never under migration, not
 * on every STEAL_QUEUE_EVERY-th switch, which goes through the scheduler
 * so timers, I/O and the steal queue get their turn, and not while the
 * signal dispatch has work (sig_work_waiting). */
static bool direct_turn(cap__worker *w)
{
    return !cap__cfg.migrate && ++w->ticks % STEAL_QUEUE_EVERY != 0 && !sig_work_waiting();
}

/* Whether the scheduler's periodic round has anything to do for w that a
 * direct yield does not: expire timers armed here, poll for I/O that could
 * complete (and flush disk submissions), start new threads of w's own
 * steal queue or lone slot first. Without any, the round would requeue
 * the yielder and run the head of the local queue (its inbox drained),
 * which is what the direct yield does, at ~1 ns a yield less (a round is
 * two switches and a pass over the queues, every STEAL_QUEUE_EVERY-th
 * yield). Racy peeks: the timer heap is armed by its owner only without
 * migration, and the others at worst delay the round by one turn. */
static bool round_due(cap__worker *w)
{
    return __atomic_load_n(&w->timers.len, __ATOMIC_RELAXED) != 0 ||
           atomic_load_explicit(&w->steal_len, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&w->lone, memory_order_relaxed) != NULL || poll_worthwhile();
}

/* direct_turn for a yield: on the periodic turn, through the scheduler
 * only when its round has work (round_due). */
static inline bool yield_direct(cap__worker *w)
{
    return direct_turn(w) || (!cap__cfg.migrate && !round_due(w));
}

/* The next thread of the local queue, woken threads taken in first. */
static cap__thread *next_local(cap__worker *w)
{
    inbox_drain(w);
    return policy_pick_next(w);
}

/* Where a thread that parks or exits switches directly: the local queue,
 * then new threads of our own steal queue, then of another worker's (where
 * the scheduler would look first too). NULL: go through the scheduler. */
static cap__thread *next_direct(cap__worker *w)
{
    cap__thread *next = next_local(w);
    if (next == NULL)
        next = take_new(w);
    if (next == NULL)
        next = steal_from_others(w);
    return next;
}

/* One yield of self, running on w: straight to the next local thread,
 * or through the scheduler on a periodic turn that has work there. */
/* False when the thread was alone on its worker and carried on at once. */
static inline __attribute__((always_inline)) bool yield_on(cap__worker *w, cap__thread *self)
{
    if (!yield_direct(w)) {
        cap__switch_to_scheduler(self, CAP__AFTER_YIELD, NULL, NULL);
        return true;
    }
    cap__thread *next;
    if (__builtin_expect(cap__policy_active == &cap__policy_fifo, 1)) {
        inbox_drain(w);
        next = cap__fifo_yield(w, self); /* pop the head, queue self */
    } else {
        next = next_local(w);
        if (next != NULL)
            cap__policy_active->enqueue(w, self);
    }
    if (next == NULL) {
        /* Alone locally: carry on, unless new threads wait to start. */
        if (atomic_load_explicit(&w->steal_len, memory_order_relaxed) != 0 ||
            atomic_load_explicit(&w->lone, memory_order_relaxed) != NULL) {
            cap__switch_to_scheduler(self, CAP__AFTER_YIELD, NULL, NULL);
            return true;
        }
        return false;
    }
    /* Read now, so the slow read overlaps the switch's bookkeeping
     * (switch.S, cap__ctx_switch_mx); only runtime code runs until the
     * switch. Not earlier: a yield that does not switch does not need it. */
    uint32_t mxcsr;
    cap__ctx_read_mxcsr(&mxcsr);
    atomic_store_explicit(&self->state, CAP__T_RUNNABLE, memory_order_relaxed);
    switch_direct_mx(w, self, next, &mxcsr);
    return true;
}

void cap__yield(cap__thread *self)
{
    yield_on(self->worker, self);
}

/* The round it passes through polls (poll_first, find_work). A plain
 * yield polls only on the worker's periodic turn, every
 * STEAL_QUEUE_EVERY-th switch: behind a neighbour whose transfers never
 * park, which yields once per CAP__IO_TURN_MAX calls, a thread whose
 * descriptor became ready waited ~3,900 of its calls (tests/io/
 * ready_socket_seen_beside_busy_transfers). */
void cap__yield_polling(cap__thread *self)
{
    cap__worker *w = self->worker;
    if (!poll_worthwhile()) {
        yield_on(w, self);
        return;
    }
    w->poll_first = true;
    cap__switch_to_scheduler(self, CAP__AFTER_YIELD, NULL, NULL);
}

/* Public, and here rather than with the sleeps (sleep.c) so the whole
 * yield path is one function: it is the switch the benchmarks time. */
int cap_yield(void)
{
    cap__worker *w = cap__worker_self();
    cap__thread *self = w != NULL ? w->current : NULL;
    if (self == NULL) {
        cap__kernel_yield(); /* not a user thread: the kernel's yield */
        return 0;
    }
    yield_on(w, self);
    cap__sig_pending_check(self, CAP__OWN_FREE); /* a safe point (io/sigdirect.h) */
    return 0;
}

void cap__yield_libc(cap__thread *self)
{
    if (!yield_on(self->worker, self))
        cap__kernel_yield();
    cap__sig_pending_check(self, CAP__OWN_FREE);
}

/* A parked thread's worker would go looking for work next; the local
 * queue and then our own steal queue (new threads waiting to start) are
 * where the scheduler would look first too, so switch straight there. A
 * joiner thus runs the thread it just created and waits for. */
void cap__switch_park(cap__thread *self, cap__unlock_fn unlock, void *arg)
{
    cap__worker *w = self->worker;
    cap__thread *next = direct_turn(w) ? next_direct(w) : NULL;
    if (next == NULL) {
        cap__switch_to_scheduler(self, CAP__AFTER_PARK, unlock, arg);
        return;
    }
    leave_after(w, self, CAP__AFTER_PARK, unlock, arg);
    prefetch_following(w);
    switch_direct(w, self, next);
}

/* The last switch of an exiting thread; whoever runs next on this worker
 * finishes the exit (AFTER_EXIT), once nothing runs on self's stack. A
 * claimed `next` (the joiner, see exit_thread) runs next when this is a
 * direct turn, else it is made runnable like any woken thread. Without
 * one, the next local or new thread runs, as after a park, except with
 * linked stacks: finishing an exit may free a detached thread's stack,
 * more than a thread parked on a small chunk has room for, so that is
 * left to the scheduler's stack (the joiner's finish is a single store).
 * Returns the context to load, made current, and its stack's bounds. */
static void *exit_target(cap__thread *self, cap__thread *next, const void **lo, size_t *size)
{
    cap__worker *w = self->worker;
    atomic_store_explicit(&w->homed, atomic_load_explicit(&w->homed, memory_order_relaxed) - 1,
                          memory_order_relaxed);
    leave_after(w, self, CAP__AFTER_EXIT, NULL, NULL);
    if (!direct_turn(w)) {
        if (next != NULL)
            cap__make_runnable(next);
        next = NULL;
    } else if (next == NULL && !cap__stack_linked_mode()) {
        next = next_direct(w);
    }
    if (next == NULL) {
        *lo = w->sched_lo;
        *size = w->sched_size;
        return w->sched_sp;
    }
    enter(w, next);
    *lo = stack_lo(next);
    *size = stack_size(next);
    return next->sp;
}

void cap__switch_exit(cap__thread *self, cap__thread *next)
{
    const void *lo;
    size_t size;
    void *to = exit_target(self, next, &lo, &size);
    cap__switch_final(to, lo, size);
}

#ifndef CAP__ASAN
void *cap__switch_exit_prepare(cap__thread *self, cap__thread *next)
{
    const void *lo;
    size_t size;
    void *to = exit_target(self, next, &lo, &size);
    cap__switch_final_hook(lo);
    return to;
}
#endif

/* ---- the loop ------------------------------------------------------- */

static void requeue(cap__worker *w, cap__thread *t)
{
    atomic_store_explicit(&t->state, CAP__T_RUNNABLE, memory_order_relaxed);
    if (cap__cfg.migrate && t->kernel_bound == 0)
        steal_push(w, t);
    else
        policy_enqueue(w, t);
}

static void finish_switch_step(cap__worker *w)
{
    cap__thread *back = w->prev;
    w->prev = NULL;
    switch (w->after) {
    case CAP__AFTER_PARK: {
        /* Only now, with its context saved, may anyone claim the thread.
         * A park at a cancellation point gets its own token, one that a
         * signal sent to the thread may end a flag in it, and after
         * publishing it we look for a cancel request or a pending signal
         * that raced with the park (the Dekker halves described in
         * park.h). The flags are read before the store: once the token is
         * out, a waker may resume the thread, which then owns its fields
         * again. */
        bool cancellable = back->park_cancellable;
        bool signallable = back->park_signallable;
        uint32_t token = cancellable ? CAP__WAIT_WAITING_CANCELLABLE : CAP__WAIT_WAITING;
        atomic_store(&back->wait, signallable ? token | CAP__WAIT_SIGNALLABLE : token);
        if (w->after_unlock != NULL && !w->after_unlock(w->after_arg)) {
            if (cap__wait_claim(back)) {
                back->wake_result = EAGAIN;
                requeue(w, back);
            }
        } else if ((cancellable && cap__cancel_recheck(back)) ||
                   (signallable && atomic_load(&back->sig_pending) != 0 &&
                    cap__sig_wake_recheck(back))) {
            requeue(w, back);
        }
        break;
    }
    case CAP__AFTER_YIELD:
        /* Yields reach the scheduler only periodically, or when the local
         * queue is empty: either way the steal queue's turn has come.
         * Not under migration, where every yield comes here and the
         * yielder itself waits in the steal queue: the local queue's
         * threads (bound to this worker) would never run while it yields
         * (tests/sched/yielders_leave_room, w1-migrate). */
        w->steal_first = !cap__cfg.migrate;
        requeue(w, back);
        break;
    case CAP__AFTER_EXIT:
        cap__thread_finish(back);
        break;
    case CAP__AFTER_NONE:
        break;
    }
    w->after = CAP__AFTER_NONE;
}

/* Called whenever the scheduler context regains control. */
static void back_on_scheduler(cap__worker *w)
{
    w->current = NULL;
    finish_switch(w);
}

static void run(cap__worker *w, cap__thread *t)
{
    if (cap__cfg.migrate) /* any runnable thread may come from another worker */
        t->worker = w;
    bool fresh = !t->started;
    enter(w, t);
    prefetch_following(w);
    cap__switch_to(&w->sched_sp, &w->sched_fake, t->sp, stack_lo(t), stack_size(t), fresh);
    back_on_scheduler(w);
}

static void fire_timer(cap__timer *tm);

/* Whether v, whose new threads w is barred from, has made no scheduling
 * round for STALL_NS. w watches one such worker at a time; a watched one
 * that moves on is dropped, so the next barred one gets its turn. */
static bool stuck(cap__worker *w, cap__worker *v)
{
    uint32_t ticks = __atomic_load_n(&v->ticks, __ATOMIC_RELAXED);
    if (w->watch == NULL) {
        w->watch = v;
        w->watch_ticks = ticks;
        w->watch_since = cap__now();
        return false;
    }
    if (w->watch != v)
        return false;
    if (w->watch_ticks != ticks) {
        w->watch = NULL;
        return false;
    }
    return cap__now() - w->watch_since >= STALL_NS;
}

/* Whether w may start one of the new threads dealt to v (see the top). */
static bool may_take_new(cap__worker *w, cap__worker *v)
{
    size_t len = atomic_load_explicit(&v->steal_len, memory_order_relaxed) +
                 (atomic_load_explicit(&v->lone, memory_order_relaxed) != NULL);
    if (len == 0) {
        if (w->watch == v)
            w->watch = NULL;
        return false;
    }
    if (cap__cfg.migrate)
        return true;
    /* Our own count first: while it is small, v's (a line v writes at
     * every thread start and exit) need not be read. */
    int mine = atomic_load_explicit(&w->homed, memory_order_relaxed) - (int)len - BALANCE_SLACK;
    if (mine <= 0 || mine <= atomic_load_explicit(&v->homed, memory_order_relaxed)) {
        if (w->watch == v)
            w->watch = NULL;
        return true;
    }
    return stuck(w, v);
}

static cap__thread *steal_from_others(cap__worker *w)
{
    for (int i = 1; i < cap__rt.nworkers; i++) {
        cap__worker *victim = &cap__rt.workers[(w->id + i) % cap__rt.nworkers];
        if (!may_take_new(w, victim))
            continue;
        cap__thread *t = take_new(victim);
        if (t != NULL) {
            w->watch = NULL; /* a stuck victim gives one thread per STALL_NS */
            return t;
        }
    }
    return NULL;
}

static cap__thread *find_work(cap__worker *w)
{
    /* The periodic turn: this loop's own every-61st round, or a yield or
     * park that came here because the shared count reached a multiple.
     * Test before counting this round, or the second never matches (a
     * worker whose threads only park or yield would then never poll I/O
     * or flush disk submissions while it has threads to run). */
    bool turn = w->ticks++ % STEAL_QUEUE_EVERY == 0;
    bool poll = turn || w->poll_first || sig_work_waiting();
    w->poll_first = false;
    inbox_drain(w);
    if (cap__timer_next(&w->timers) != CAP__FOREVER)
        cap__timer_expire(&w->timers, cap__now(), fire_timer, NULL, NULL);
    /* A busy worker looks for ready I/O every so often, but only while some
     * I/O could complete. */
    if (poll && poll_worthwhile())
        cap__poller_active->poll(w, false);

    cap__thread *t = NULL;
    if (w->steal_first || turn) {
        w->steal_first = false;
        t = take_new(w);
    }
    if (t == NULL)
        t = policy_pick_next(w);
    if (t == NULL)
        t = take_new(w);
    if (t == NULL)
        t = steal_from_others(w);
    return t;
}

/* Any work w could run, including new threads it could steal. */
static bool has_work(cap__worker *w)
{
    if (cap__worker_has_own_work(w))
        return true;
    for (int i = 0; i < cap__rt.nworkers; i++)
        if (i != w->id && may_take_new(w, &cap__rt.workers[i]))
            return true;
    return false;
}

/* Whether a worker other than w is awake (w itself is not yet counted
 * asleep). */
static bool others_awake(void)
{
    return atomic_load(&cap__rt.nsleeping) < cap__rt.nworkers - 1;
}

/* Whether w is to be the re-checker of its next sleep: the one sleeping
 * worker that wakes every RECHECK_NS, while others are awake, to look for
 * the new threads they hold and do not run (a lone one, or one the balance
 * rule kept from an idle worker before). One is enough, and every sleeper
 * doing it does not scale: each wake-up scans every worker, so with 1,024
 * workers on 2 CPUs the re-checks took the CPUs (100 threads created and
 * joined took 27 s). The others sleep until woken or a timer of their own;
 * work dealt to a worker wakes it, and a lone new thread wakes one that
 * sleeps without a deadline (cap__schedule_new). */
static bool take_recheck(cap__worker *w)
{
    int none = 0;
    return atomic_load_explicit(&cap__rt.rechecker, memory_order_relaxed) == w->id + 1 ||
           atomic_compare_exchange_strong(&cap__rt.rechecker, &none, w->id + 1);
}

/* Gives the role back after a sleep: a worker that wakes may run threads
 * for long; the next one to sleep takes it. */
static void drop_recheck(cap__worker *w)
{
    int mine = w->id + 1;
    atomic_compare_exchange_strong(&cap__rt.rechecker, &mine, 0);
}

/* Whether a worker other than tm's may fire it: its thread has finished
 * parking (its wait token is out, or already claimed). A thread arms its
 * timer before it switches away, and the token is published only once
 * its registers are saved (finish_switch, park.h): a timer fired in
 * between would find nothing to claim and be gone, and the thread would
 * then wait past its deadline for good. The worker the thread parks on
 * never sees that window: it is running the park. A thread that has
 * resumed cancels its timer before its token goes back to idle (park.c),
 * so an armed timer with an idle token is always such a park, over in
 * moments. */
static bool timer_parked(const cap__timer *tm)
{
    const cap__thread *t = (const cap__thread *)((const char *)tm - offsetof(cap__thread, timer));
    return atomic_load(&t->wait) != CAP__WAIT_IDLE;
}

/* Under CAP_MIGRATE=1: fires the expired timers of the workers other
 * than w (see the top: the threads land in w's steal queue), and returns
 * how many fired; next, if not NULL, gets the earliest deadline left
 * among the workers that are awake (one still parking counts as left: w
 * then looks again soon). A heap with no timer costs one racy load. */
static unsigned expire_others(cap__worker *w, uint64_t *next)
{
    unsigned fired = 0;
    uint64_t now = 0, earliest = CAP__FOREVER;
    for (int i = 1; i < cap__rt.nworkers; i++) {
        cap__worker *v = &cap__rt.workers[(w->id + i) % cap__rt.nworkers];
        if (__atomic_load_n(&v->timers.len, __ATOMIC_RELAXED) == 0)
            continue;
        if (now == 0)
            now = cap__now();
        uint64_t left;
        fired += cap__timer_expire(&v->timers, now, fire_timer, timer_parked, &left);
        if (left < earliest && atomic_load_explicit(&v->sleeping, memory_order_relaxed) == 0)
            earliest = left;
    }
    if (next != NULL)
        *next = earliest;
    return fired;
}

static void idle(cap__worker *w)
{
    /* Ready I/O is work: harvest it without blocking before spinning, or a
     * worker whose threads all wait on descriptors spins with their events
     * already queued in the backend. */
    const cap__poller *p = cap__poller_active;
    if (poll_worthwhile()) {
        p->poll(w, true);
        if (has_work(w))
            return;
    }
    /* The spin waits for work: a thread another worker hands us, or, by
     * its descriptor poll every few rounds, a descriptor that becomes
     * ready. So a worker alone spins too: without it, one worker serving
     * 10 HTTP connections slept in the kernel every 12-15 requests and
     * paid a wake-up each time (p99 168 us against the epoll server's
     * 146; with it 102 us, medians of 8 alternating runs). Its
     * length adapts (spin_rounds): a spin that finds work, or a sleep that
     * ends about as soon as a spin would have, restores the whole budget;
     * a sleep longer than that halves it. A worker whose waits are long
     * (a lightly loaded server) thus stops burning CPU that the rest of
     * the machine (a load generator, other processes) could use, and one
     * handed work at a high rate keeps spinning. A check that follows a
     * yield which ran another task counts against spin_rounds; one after
     * a yield that found nothing else to run, against 16 times as many:
     * the spin is long where its CPU is wanted by no one, and short where
     * each round is two context switches and CPU taken from the task that
     * shares it. */
    bool spin_ok = p->spin_ok == NULL || p->spin_ok();
    int rounds = spin_ok ? w->spin_rounds : 0;
    /* With disk requests of its own in flight, the worker spins for them
     * (by time: a device's answer takes tens of microseconds, a round
     * under a microsecond when nothing else wants the CPU), on one worker
     * too. A completion caught so spares the sleep and the wake-up that
     * would put a device's latency and a kernel wake-up in series (NPTL's
     * blocked reader pays only the second). The budget adapts as the
     * rounds' does: a spin that catches a completion, or a sleep short
     * enough that a whole budget's spin would have, restores it; a longer
     * sleep halves it, so a device slower than the budget stops costing
     * CPU after a few reads (by design: the disk here answers within it). */
    uint64_t own_until = 0;
    bool awaits_own = spin_ok && p->spin_awaits != NULL && p->spin_awaits(w);
    if (awaits_own && w->own_spin_ns != 0) {
        own_until = cap__now() + w->own_spin_ns;
        uint64_t timer = cap__timer_next(&w->timers);
        if (timer < own_until) /* not past a timer due here */
            own_until = timer;
    }
    bool spun = rounds > 0 || own_until != 0;
    bool found = false;
    int costly = 0, cheap = 0; /* checks after a yield that ran / did not run another task */
    for (int i = 0; (costly < rounds && cheap < rounds * (FREE_SPIN_ROUNDS / IDLE_SPIN_ROUNDS)) ||
                    (own_until != 0 && cap__now() < own_until);
         i++) {
        /* The poller's spin check: completions of our own disk requests
         * that arrived while we spun, seen without a system call. */
        if (cap__worker_has_own_work(w) || (p->spin != NULL && p->spin(w) && cap__worker_has_own_work(w))) {
            found = true;
            break;
        }
        /* Between two checks the CPU goes to whatever else the kernel
         * has runnable here (a load generator, another process): it
         * returns at once when there is nothing, so an idle machine
         * spins as with pause instructions, and a shared one does not
         * lose the CPU to our wait. */
        uint64_t yield_at = cap__now();
        cap__kernel_yield();
        if (cap__now() - yield_at > YIELD_FREE_NS)
            costly++;
        else
            cheap++;
        /* A long spin looks at descriptors too: every 8 rounds (~4 us
         * when nothing else runs), or 16 while it waits for our disk
         * requests. The work an idle server waits for mostly comes as
         * readiness that nobody harvests while the other workers run
         * threads: Knot's spins of 64 rounds that ended in a sleep found
         * it at once in 40% of the sleeps (4 rounds: 16%). */
        if ((own_until != 0 ? i % 16 == 15 : i % 8 == 7) && poll_worthwhile())
            p->poll(w, true);
    }
    /* Whatever the spin silenced is switched back on before we run
     * threads or sleep (poller.h). */
    if (spun && p->spin_end != NULL && p->spin_end(w) && cap__worker_has_own_work(w))
        found = true;
    if (found || (spun && has_work(w))) { /* has_work: a lone new thread elsewhere */
        w->spin_rounds = IDLE_SPIN_ROUNDS;
        if (own_until != 0)
            w->own_spin_ns = OWN_SPIN_NS;
        return;
    }
    /* Other workers' sleepers whose time has come, which this worker may
     * run (see the top); and the deadlines to wake for. */
    uint64_t others = CAP__FOREVER;
    if (cap__cfg.migrate && expire_others(w, &others) != 0)
        return;
    uint64_t deadline = cap__timer_next(&w->timers);
    if (others < deadline)
        deadline = others;
    if (w->watch != NULL && w->watch_since + STALL_NS < deadline)
        deadline = w->watch_since + STALL_NS; /* look at the stuck one again */
    uint64_t slept_at = cap__now();
    if (deadline != CAP__FOREVER && deadline <= slept_at)
        return;
    bool recheck = others_awake() &&
                   (deadline == CAP__FOREVER || deadline - slept_at > RECHECK_NS) &&
                   take_recheck(w);
    if (recheck)
        deadline = slept_at + RECHECK_NS;

    bool forever = deadline == CAP__FOREVER;
    atomic_fetch_add(&cap__rt.nsleeping, 1);
    if (forever)
        atomic_fetch_add(&cap__rt.nsleeping_forever, 1);
    atomic_store(&w->sleeping, 1);
    if (!has_work(w)) {
        if (forever)
            cap__deadlock_check_enter(w);
        cap__poller_active->wait(w, deadline);
        if (forever)
            cap__deadlock_check_leave(w);
    }
    atomic_store(&w->sleeping, 0);
    if (forever)
        atomic_fetch_sub(&cap__rt.nsleeping_forever, 1);
    atomic_fetch_sub(&cap__rt.nsleeping, 1);
    if (recheck)
        drop_recheck(w);
    if (cap__cfg.migrate) /* woken perhaps for another worker's deadline: run it now */
        expire_others(w, NULL);
    uint64_t slept = cap__now() - slept_at;
    if (slept <= SPIN_WORTH_NS)
        w->spin_rounds = IDLE_SPIN_ROUNDS;
    else
        w->spin_rounds /= 2;
    if (awaits_own) /* could a spin of the whole budget have caught it? */
        w->own_spin_ns = slept <= OWN_SPIN_NS ? OWN_SPIN_NS : w->own_spin_ns / 2;
}

static void fire_timer(cap__timer *tm)
{
    cap__thread *t = (cap__thread *)((char *)tm - offsetof(cap__thread, timer));
    if (cap__wait_claim(t)) { /* either waiting token (park.h) */
        t->wake_result = ETIMEDOUT;
        cap__make_runnable(t);
    }
}

_Noreturn static void worker_loop(cap__worker *w)
{
    bool idled = false;
    for (;;) {
        cap__thread *t = find_work(w);
        if (t != NULL) {
            if (idled && cap__poller_active->idle_end != NULL)
                cap__poller_active->idle_end(w);
            idled = false;
            run(w, t);
        } else {
            idle(w);
            idled = true;
        }
    }
}

/* ---- start-up ------------------------------------------------------- */

/* Worker 0's scheduler context starts here the first time main() parks,
 * so that first park must be finished before the loop proper. */
static void *sched_entry(void *arg)
{
    cap__switch_first_entry();
    back_on_scheduler(arg);
    worker_loop(arg);
}

static void *worker_kthread(void *arg)
{
    cap__worker *w = arg;
    cap__self_worker = w;
    atomic_store_explicit(&w->tid, (pid_t)syscall(SYS_gettid), memory_order_release);
    w->errno_slot = &errno;
    w->dlerror_slot = cap__dl_error_slot();
    cap__stack_kthread_init(); /* alternate signal stack: overflow reports */
    cap__sigmask_kthread_init(); /* the kick and the faults, inherited blocked */
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *lo;
        size_t size;
        pthread_attr_getstack(&attr, &lo, &size);
        w->sched_lo = lo;
        w->sched_size = size;
        pthread_attr_destroy(&attr);
    }
    atomic_store_explicit(&w->set_up, 1, memory_order_release);
    cap__futex_wake((uint32_t *)&w->set_up, 1);
    worker_loop(w);
}

/* dl_iterate_phdr callback: adds an object's static TLS block to *arg. */
static int add_tls_block(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    size_t *total = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_TLS)
            *total += ph->p_memsz + ph->p_align;
    }
    return 0;
}

/* Starts worker w's kernel thread, whose own stack is its scheduler
 * stack: kthread_stack_size, as large as worker 0's plus the static TLS
 * that glibc carves out of it (cap__workers_start), not glibc's default
 * of 8 MiB, which under an address-space limit (`ulimit -v`) was the most
 * a program of two workers needed, and with one worker per CPU on a large
 * machine came to half a GiB. Should glibc still refuse the size (EINVAL),
 * the thread gets glibc's default. */
static int start_kthread(cap__worker *w)
{
    pthread_attr_t attr;
    int rc = pthread_attr_init(&attr);
    if (rc != 0)
        return rc;
    rc = pthread_attr_setstacksize(&attr, kthread_stack_size);
    if (rc == 0)
        rc = pthread_create(&w->kthread, &attr, worker_kthread, w);
    pthread_attr_destroy(&attr);
    if (rc == EINVAL)
        rc = pthread_create(&w->kthread, NULL, worker_kthread, w);
    return rc;
}

/* The set-up every worker starts with (at start-up, and in a fork's child
 * for the workers the fork left behind). */
static void init_worker(cap__worker *w, int id)
{
    w->id = id;
    w->spin_rounds = IDLE_SPIN_ROUNDS;
    w->own_spin_ns = OWN_SPIN_NS;
    if (cap__policy_active->init != NULL && cap__policy_active->init(w) != 0)
        cap__die("scheduling policy %s failed to start\n", cap__policy_active->name);
}

/* Starts the kernel threads of the workers of cap__rt.workers other than
 * running (the caller's), and returns once each has set itself up (see
 * cap__workers_start). A worker counted must run: one the kernel refuses
 * ends the program. */
static void start_others(const cap__worker *running)
{
    int n = cap__rt.nworkers;
    for (int i = 0; i < n; i++) {
        cap__worker *w = &cap__rt.workers[i];
        int rc = w == running ? 0 : start_kthread(w);
        if (rc != 0)
            cap__die("cannot start worker %d of %d: %s (CAP_WORKERS sets how many run)\n", i,
                     n, strerror(rc));
    }
    for (int i = 0; i < n; i++) {
        cap__worker *w = &cap__rt.workers[i];
        while (w != running && atomic_load_explicit(&w->set_up, memory_order_acquire) == 0)
            cap__futex_wait((uint32_t *)&w->set_up, 0, CAP__FOREVER);
    }
}

/* Sets up worker 0 around the calling (initial) kernel thread, whose
 * current code becomes user thread `main_thread`, and starts the others.
 * Returns once every worker's kernel thread has set itself up: that
 * set-up allocates (the sanitizer's thread start, pthread_getattr_np),
 * and an allocator whose lock is not fork-safe (GCC 12's AddressSanitizer)
 * would leave a fork made early in main() a child that hangs on it. */
void cap__workers_start(cap__thread *main_thread, size_t sched_stack_size)
{
    size_t tls = 0; /* the static TLS blocks, once */
    dl_iterate_phdr(add_tls_block, &tls);
    kthread_stack_size = sched_stack_size + tls;
    int n = cap__cfg.workers;
    cap__rt.nworkers = n;
    cap__rt.workers = calloc((size_t)n, sizeof *cap__rt.workers);
    if (cap__rt.workers == NULL)
        cap__die("cannot allocate %d workers\n", n);
    for (int i = 0; i < n; i++)
        init_worker(&cap__rt.workers[i], i);

    cap__worker *w0 = &cap__rt.workers[0];
    if (cap__stack_alloc(sched_stack_size, &w0->sched_stack) != 0)
        cap__die("cannot allocate the scheduler stack\n");
    w0->kthread = pthread_self();
    w0->sched_lo = w0->sched_stack.lo;
    w0->sched_size = sched_stack_size;
    w0->sched_sp = cap__ctx_make(w0->sched_stack.hi, sched_entry, w0);
    cap__self_worker = w0;
    atomic_store(&w0->tid, (pid_t)syscall(SYS_gettid));
    w0->errno_slot = &errno;
    w0->dlerror_slot = cap__dl_error_slot();
    cap__stack_kthread_init(); /* alternate signal stack: overflow reports */
    main_thread->worker = w0;
    main_thread->started = true;
    atomic_store(&w0->homed, 1);
    atomic_store(&main_thread->state, CAP__T_RUNNING);
    w0->current = main_thread;

    start_others(w0);
}
