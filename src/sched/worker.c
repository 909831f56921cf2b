/* SPDX-License-Identifier: MIT */
/*
 * The worker loop: where each worker's scheduler context spends its life.
 * See worker.h for what a worker owns.
 *
 * One round:
 *   1. move woken threads from the inbox to the policy's local queue;
 *   2. fire expired timers (only if the heap is non-empty);
 *   3. pick: the policy's next thread, else one from our steal queue, else
 *      one stolen from another worker; every 61st round the steal queue
 *      goes first so new threads are not starved by a busy local queue;
 *   4. run it until it switches back, then finish what it asked for
 *      (release a wait-structure lock, requeue a yielder, reap an exited
 *      thread);
 *   5. with nothing to run: spin briefly, then sleep in the poller.
 *
 * Placement policy (why new threads go to a steal queue rather than being
 * dealt round-robin): dealing every new thread to another worker costs a
 * cross-core wake-up per creation even when the creator is about to block
 * and could run it at once; putting it in the creator's steal queue and
 * waking one idle worker lets whichever core is free first take it, which
 * spreads load as well and keeps create+join on one core cheap. Started
 * threads stay on their worker unless CAP_MIGRATE=1 (worker.h).
 */
#include "sched/worker.h"

#include <errno.h>
#include <stdlib.h>

#include "runtime/config.h"
#include "sched/policy.h"
#include "sched/poller.h"
#include "sched/switch.h"
#include "thread/thread.h"
#include "util/clock.h"
#include "util/die.h"

enum {
    STEAL_QUEUE_EVERY = 61, /* rounds between steal-queue-first picks */
    IDLE_SPIN_ROUNDS = 64,  /* checks for work before sleeping */
    IDLE_SPIN_PAUSES = 32,  /* pause instructions between two checks */
};

cap__runtime cap__rt;
static __thread cap__worker *self_worker;

cap__worker *cap__worker_self(void)
{
    return self_worker;
}

/* ---- queues -------------------------------------------------------- */

static void steal_push(cap__worker *w, cap__thread *t)
{
    cap__spin_lock(&w->steal_lock);
    cap__tqueue_push(&w->steal, t);
    atomic_store(&w->steal_len, w->steal.len);
    cap__spin_unlock(&w->steal_lock);
}

static cap__thread *steal_pop(cap__worker *w)
{
    if (atomic_load_explicit(&w->steal_len, memory_order_relaxed) == 0)
        return NULL;
    cap__spin_lock(&w->steal_lock);
    cap__thread *t = cap__tqueue_pop(&w->steal);
    atomic_store(&w->steal_len, w->steal.len);
    cap__spin_unlock(&w->steal_lock);
    return t;
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
 * first. */
static void inbox_drain(cap__worker *w)
{
    if (atomic_load_explicit(&w->inbox, memory_order_relaxed) == NULL)
        return;
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
        cap__policy_active->enqueue(w, fifo);
        fifo = next;
    }
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

void cap__make_runnable(cap__thread *t)
{
    cap__worker *here = self_worker;
    atomic_store_explicit(&t->state, CAP__T_RUNNABLE, memory_order_relaxed);
    if (cap__cfg.migrate) {
        steal_push(here != NULL ? here : t->worker, t);
        wake_one_idle();
        return;
    }
    cap__worker *home = t->worker;
    if (home == here) {
        if (cap__policy_active->on_wake != NULL)
            cap__policy_active->on_wake(home, t);
        cap__policy_active->enqueue(home, t);
        return;
    }
    inbox_push(home, t);
    wake_worker(home);
}

void cap__schedule_new(cap__thread *t)
{
    cap__worker *here = self_worker;
    atomic_store_explicit(&t->state, CAP__T_RUNNABLE, memory_order_relaxed);
    steal_push(here != NULL ? here : &cap__rt.workers[0], t);
    if (here == NULL)
        wake_worker(&cap__rt.workers[0]);
    wake_one_idle();
}

/* ---- switching ------------------------------------------------------ */

void cap__switch_to_scheduler(cap__thread *self, enum cap__after after,
                              cap__unlock_fn unlock, void *arg)
{
    cap__worker *w = self->worker;
    w->after = after;
    w->after_unlock = unlock;
    w->after_arg = arg;
    self->saved_errno = errno;
    cap__switch(&self->sp, &self->asan_fake_stack, w->sched_sp, w->sched_lo, w->sched_size);
}

void cap__switch_to_scheduler_final(cap__thread *self)
{
    cap__worker *w = self->worker;
    w->after = CAP__AFTER_EXIT;
    cap__switch(&self->sp, NULL, w->sched_sp, w->sched_lo, w->sched_size);
    __builtin_unreachable();
}

static const void *stack_lo(const cap__thread *t)
{
    return t->stack.lo;
}

static size_t stack_size(const cap__thread *t)
{
    return (size_t)((const char *)t->stack.hi - (const char *)t->stack.lo);
}

void cap__yield(cap__thread *self)
{
    cap__worker *w = self->worker;
    /* Every so often, and always under migration, yield through the
     * scheduler so timers, the steal queue and other workers get a turn. */
    if (cap__cfg.migrate || ++w->ticks % STEAL_QUEUE_EVERY == 0) {
        cap__switch_to_scheduler(self, CAP__AFTER_YIELD, NULL, NULL);
        return;
    }
    inbox_drain(w);
    cap__thread *next = cap__policy_active->pick_next(w);
    if (next == NULL) {
        if (atomic_load_explicit(&w->steal_len, memory_order_relaxed) != 0)
            cap__switch_to_scheduler(self, CAP__AFTER_YIELD, NULL, NULL);
        return;
    }
    atomic_store_explicit(&self->state, CAP__T_RUNNABLE, memory_order_relaxed);
    cap__policy_active->enqueue(w, self);
    atomic_store_explicit(&next->state, CAP__T_RUNNING, memory_order_relaxed);
    w->current = next;
    atomic_fetch_add_explicit(&w->switches, 1, memory_order_relaxed);
    self->saved_errno = errno;
    errno = next->saved_errno;
    cap__switch(&self->sp, &self->asan_fake_stack, next->sp, stack_lo(next), stack_size(next));
}

/* ---- the loop ------------------------------------------------------- */

static void requeue(cap__worker *w, cap__thread *t)
{
    atomic_store_explicit(&t->state, CAP__T_RUNNABLE, memory_order_relaxed);
    if (cap__cfg.migrate)
        steal_push(w, t);
    else
        cap__policy_active->enqueue(w, t);
}

/* Carries out what the thread that just switched back asked for. */
static void finish_switch(cap__worker *w, cap__thread *back)
{
    switch (w->after) {
    case CAP__AFTER_PARK:
        /* Only now, with its context saved, may anyone claim the thread. */
        atomic_store(&back->wait, CAP__WAIT_WAITING);
        if (w->after_unlock != NULL && !w->after_unlock(w->after_arg)) {
            uint32_t waiting = CAP__WAIT_WAITING;
            if (atomic_compare_exchange_strong(&back->wait, &waiting, CAP__WAIT_CLAIMED)) {
                back->wake_result = EAGAIN;
                requeue(w, back);
            }
        }
        break;
    case CAP__AFTER_YIELD:
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

/* Called whenever the scheduler context regains control: w->current is
 * whoever switched back (not necessarily the thread run() started: yields
 * switch thread to thread). */
static void back_on_scheduler(cap__worker *w)
{
    cap__thread *back = w->current;
    w->current = NULL;
    if (back != NULL)
        finish_switch(w, back);
}

static void run(cap__worker *w, cap__thread *t)
{
    if (!t->started) {
        t->started = true;
        t->worker = w;
    } else if (cap__cfg.migrate) {
        t->worker = w;
    }
    atomic_store_explicit(&t->state, CAP__T_RUNNING, memory_order_relaxed);
    w->current = t;
    atomic_fetch_add_explicit(&w->switches, 1, memory_order_relaxed);
    errno = t->saved_errno;
    cap__switch(&w->sched_sp, &w->sched_fake, t->sp, stack_lo(t), stack_size(t));
    back_on_scheduler(w);
}

static void fire_timer(cap__timer *tm);

static cap__thread *steal_from_others(cap__worker *w)
{
    for (int i = 1; i < cap__rt.nworkers; i++) {
        cap__worker *victim = &cap__rt.workers[(w->id + i) % cap__rt.nworkers];
        cap__thread *t = steal_pop(victim);
        if (t != NULL) {
            atomic_fetch_add_explicit(&w->steals, 1, memory_order_relaxed);
            return t;
        }
    }
    return NULL;
}

static cap__thread *find_work(cap__worker *w)
{
    w->ticks++;
    inbox_drain(w);
    if (cap__timer_next(&w->timers) != CAP__FOREVER)
        cap__timer_expire(&w->timers, cap__now(), fire_timer);
    if (cap__poller_active->poll != NULL && w->ticks % STEAL_QUEUE_EVERY == 0)
        cap__poller_active->poll(w);

    cap__thread *t = NULL;
    if (w->ticks % STEAL_QUEUE_EVERY == 0)
        t = steal_pop(w);
    if (t == NULL)
        t = cap__policy_active->pick_next(w);
    if (t == NULL)
        t = steal_pop(w);
    if (t == NULL)
        t = steal_from_others(w);
    return t;
}

static bool has_work(cap__worker *w)
{
    if (atomic_load(&w->inbox) != NULL || w->local.len != 0)
        return true;
    for (int i = 0; i < cap__rt.nworkers; i++)
        if (atomic_load(&cap__rt.workers[i].steal_len) != 0)
            return true;
    return false;
}

static void idle(cap__worker *w)
{
    for (int i = 0; i < IDLE_SPIN_ROUNDS; i++) {
        if (has_work(w))
            return;
        for (int j = 0; j < IDLE_SPIN_PAUSES; j++)
            cap__cpu_relax();
    }
    uint64_t deadline = cap__timer_next(&w->timers);
    if (deadline != CAP__FOREVER && deadline <= cap__now())
        return;

    atomic_fetch_add(&cap__rt.nsleeping, 1);
    atomic_store(&w->sleeping, 1);
    if (!has_work(w)) {
        bool forever = deadline == CAP__FOREVER;
        if (forever)
            cap__deadlock_check_enter(w);
        cap__poller_active->wait(w, deadline);
        if (forever)
            cap__deadlock_check_leave(w);
    }
    atomic_store(&w->sleeping, 0);
    atomic_fetch_sub(&cap__rt.nsleeping, 1);
}

static void fire_timer(cap__timer *tm)
{
    cap__thread *t = (cap__thread *)((char *)tm - offsetof(cap__thread, timer));
    uint32_t waiting = CAP__WAIT_WAITING;
    if (atomic_compare_exchange_strong(&t->wait, &waiting, CAP__WAIT_CLAIMED)) {
        t->wake_result = ETIMEDOUT;
        cap__make_runnable(t);
    }
}

_Noreturn static void worker_loop(cap__worker *w)
{
    for (;;) {
        cap__thread *t = find_work(w);
        if (t != NULL)
            run(w, t);
        else
            idle(w);
    }
}

/* ---- start-up ------------------------------------------------------- */

/* Worker 0's scheduler context starts here the first time main() parks,
 * so that first park must be finished before the loop proper. */
static void sched_entry(void *arg)
{
    cap__switch_first_entry();
    back_on_scheduler(arg);
    worker_loop(arg);
}

static void *worker_kthread(void *arg)
{
    cap__worker *w = arg;
    self_worker = w;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *lo;
        size_t size;
        pthread_attr_getstack(&attr, &lo, &size);
        w->sched_lo = lo;
        w->sched_size = size;
        pthread_attr_destroy(&attr);
    }
    worker_loop(w);
}

/* Sets up worker 0 around the calling (initial) kernel thread, whose
 * current code becomes user thread `main_thread`, and starts the others. */
void cap__workers_start(cap__thread *main_thread, size_t sched_stack_size)
{
    int n = cap__cfg.workers;
    cap__rt.nworkers = n;
    cap__rt.workers = calloc((size_t)n, sizeof *cap__rt.workers);
    if (cap__rt.workers == NULL)
        cap__die("cannot allocate %d workers\n", n);
    for (int i = 0; i < n; i++) {
        cap__worker *w = &cap__rt.workers[i];
        w->id = i;
        if (cap__policy_active->init != NULL && cap__policy_active->init(w) != 0)
            cap__die("scheduling policy %s failed to start\n", cap__policy_active->name);
    }

    cap__worker *w0 = &cap__rt.workers[0];
    if (cap__stack_alloc(sched_stack_size, &w0->sched_stack) != 0)
        cap__die("cannot allocate the scheduler stack\n");
    w0->kthread = pthread_self();
    w0->sched_lo = w0->sched_stack.lo;
    w0->sched_size = sched_stack_size;
    w0->sched_sp = cap__ctx_make(w0->sched_stack.hi, sched_entry, w0);
    self_worker = w0;
    main_thread->worker = w0;
    main_thread->started = true;
    atomic_store(&main_thread->state, CAP__T_RUNNING);
    w0->current = main_thread;

    for (int i = 1; i < n; i++) {
        cap__worker *w = &cap__rt.workers[i];
        int rc = pthread_create(&w->kthread, NULL, worker_kthread, w);
        if (rc != 0)
            cap__die("cannot start worker %d: error %d\n", i, rc);
    }
}
