/* SPDX-License-Identifier: MIT */
/*
 * Thread lifecycle: create, exit, join, detach, and the public identity
 * functions (handle, name, the attributes and stack a thread runs with).
 *
 * Lifetime of a TCB:
 *   alloc -> RUNNABLE -> (RUNNING <-> PARKED/RUNNABLE)* -> exit path ->
 *   final switch -> cap__thread_finish, run by whatever the worker runs
 *   next (the scheduler context, or the thread switched to directly):
 *     detached: release now;
 *     joiner parked: mark EXITED and wake it; the joiner releases;
 *     otherwise: EXITED (a zombie) until join or detach releases it.
 * EXITED is set only after the final switch, so whoever releases the TCB
 * (and its stack) knows the thread no longer runs on that stack.
 *
 * Lock: t->lock guards detached, joined, joiner, retval and the EXITED
 * transition. It is initialised once, with the TCB, and never reset (see
 * cap_thread_create). The handle's generation is re-checked under it, so a handle
 * that went stale between lookup and lock is reported as ESRCH.
 */
#include "thread/thread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/sigdirect.h"
#include "io/sigintr.h"
#include "io/sigmask.h"
#include "io/sigroute.h"
#include "runtime/config.h"
#include "sched/park.h"
#include "sched/switch.h"
#include "sched/worker.h"
#include "sync/cancel.h"
#include "sync/sync.h"
#include "util/clock.h"
#include "util/die.h"
#include "util/sigctx.h"

#ifdef CAP__ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

atomic_long cap__live_threads;
cap_thread_t cap__main_handle;

void cap__runtime_ensure(void);

/* ---- attributes ------------------------------------------------------ */

int cap_thread_attr_init(cap_thread_attr_t *attr)
{
    if (attr == NULL)
        return EINVAL;
    *attr = (cap_thread_attr_t)CAP_THREAD_ATTR_INITIALIZER;
    return 0;
}

int cap_thread_attr_destroy(cap_thread_attr_t *attr)
{
    return attr == NULL ? EINVAL : 0;
}

int cap_thread_attr_setstacksize(cap_thread_attr_t *attr, size_t size)
{
    if (attr == NULL || size < CAP_STACK_MIN || size > CAP_STACK_MAX)
        return EINVAL;
    attr->stack_size = size;
    return 0;
}

int cap_thread_attr_getstacksize(const cap_thread_attr_t *attr, size_t *size)
{
    if (attr == NULL || size == NULL)
        return EINVAL;
    *size = attr->stack_size != 0 ? attr->stack_size : cap__cfg.stack_size;
    return 0;
}

int cap_thread_attr_setdetachstate(cap_thread_attr_t *attr, int state)
{
    if (attr == NULL || (state != CAP_CREATE_JOINABLE && state != CAP_CREATE_DETACHED))
        return EINVAL;
    attr->detach_state = state;
    return 0;
}

int cap_thread_attr_getdetachstate(const cap_thread_attr_t *attr, int *state)
{
    if (attr == NULL || state == NULL)
        return EINVAL;
    *state = attr->detach_state;
    return 0;
}

int cap_thread_attr_setname(cap_thread_attr_t *attr, const char *name)
{
    if (attr == NULL || name == NULL)
        return EINVAL;
    if (strlen(name) >= CAP_THREAD_NAME_MAX)
        return ERANGE;
    strcpy(attr->name, name);
    return 0;
}

int cap_thread_attr_setsigmask(cap_thread_attr_t *attr, const sigset_t *set)
{
    if (attr == NULL)
        return EINVAL;
    attr->has_sigmask = set != NULL;
    attr->sigmask = set != NULL ? cap__sig_bits(set) : 0;
    return 0;
}

int cap_thread_attr_getsigmask(const cap_thread_attr_t *attr, sigset_t *set)
{
    if (attr == NULL || set == NULL)
        return EINVAL;
    sigemptyset(set);
    memcpy(set, &attr->sigmask, sizeof attr->sigmask); /* cap__sig_bits's layout */
    return attr->has_sigmask ? 0 : CAP_ATTR_NO_SIGMASK;
}

bool cap__thread_attr_valid(const cap_thread_attr_t *attr)
{
    if (attr->stack_size != 0 &&
        (attr->stack_size < CAP_STACK_MIN || attr->stack_size > CAP_STACK_MAX))
        return false;
    return attr->detach_state == CAP_CREATE_JOINABLE || attr->detach_state == CAP_CREATE_DETACHED;
}

/* ---- create ------------------------------------------------------------ */

/* Where a new thread's stack begins. Every stack ends on a page
 * boundary, so two threads at the same point of the same code (two
 * yielders) save and load their switch frames at addresses equal modulo
 * 4 KiB, and a load whose low 12 address bits match a just-stored one is
 * held back as if it depended on it (4K aliasing): the pops of a switch
 * waited on the pushes just made to the other stack. Consecutive threads
 * therefore start STAGGER_BYTES apart, in STAGGER_STEPS steps (yield
 * switch 9.8 -> 9.2 ns, medians of 11 interleaved runs); not on stacks
 * under STAGGER_MIN_STACK (a linked-stack first chunk is 2 KiB). */
enum { STAGGER_BYTES = 64, STAGGER_STEPS = 8, STAGGER_MIN_STACK = 16384 };

static void *stack_top(const cap__thread *t)
{
    size_t size = (size_t)((char *)t->stack.hi - (char *)t->stack.lo);
    if (size < STAGGER_MIN_STACK)
        return t->stack.hi;
    return (char *)t->stack.hi - (size_t)(t->slot % STAGGER_STEPS) * STAGGER_BYTES;
}

int cap_thread_create(cap_thread_t *handle, const cap_thread_attr_t *attr,
                      void *(*start)(void *), void *arg)
{
    if (handle == NULL || start == NULL)
        return EINVAL;
    size_t size = cap__cfg.stack_size;
    bool detached = false;
    cap_thread_attr_t defaults;
    if (attr == NULL && cap__thread_default_attr(&defaults))
        attr = &defaults;
    if (attr != NULL) {
        if (!cap__thread_attr_valid(attr))
            return EINVAL;
        if (attr->stack_size != 0)
            size = attr->stack_size;
        detached = attr->detach_state == CAP_CREATE_DETACHED;
    }
    if (__builtin_expect(cap__fork_gen != 0, 0))
        cap__workers_forked_restart(); /* a fork's child's first thread */
    /* A cached TCB comes from a running worker: the runtime is up. */
    cap__thread *t = cap__thread_take_cached(size);
    if (t == NULL) {
        cap__runtime_ensure();
        t = cap__thread_alloc();
        if (t == NULL)
            return EAGAIN;
        if (cap__stack_alloc_thread(size, &t->stack) != 0) {
            cap__thread_release(t);
            return EAGAIN;
        }
        t->stack_request = size;
    }
    t->worker = NULL;
    t->started = false;
    t->is_main = false;
    t->main_exited = false;
    t->kernel_bound = 0;
    t->fork_gen = cap__fork_gen;
    t->saved_errno = 0;
    /* t->lock is not reset: it is unlocked whenever a TCB is released, and
     * may still be held for an instant by the previous thread's finish on
     * another worker (it unparks the joiner, who does not wait for the
     * unlock, and then unlocks); the TCB's next users simply queue for it.
     * Relaxed stores: the thread is published by cap__schedule_new. */
    atomic_store_explicit(&t->wait, CAP__WAIT_IDLE, memory_order_relaxed);
    t->reason = CAP__PARK_NONE;
    t->reason_obj = NULL;
    t->timer = (cap__timer){ 0 };
    t->detached = detached;
    t->joined = false;
    t->joiner = NULL;
    t->retval = NULL;
    t->start = start;
    t->start_arg = arg;
    t->create_site = __builtin_return_address(0);
    t->keys = NULL;
    t->nkeys = 0;
    t->held_locks = NULL; /* (a thread that exited holding one left it here) */
    if (t->rare != NULL) /* POSIX: a new thread starts in the global locale */
        *t->rare = (cap__thread_rare){ 0 };
    t->robust_noted = 0; /* (a thread lost in a fork left its count here) */
    atomic_store_explicit(&t->jump_due, NULL, memory_order_relaxed);
    atomic_store_explicit(&t->sig_pending, 0, memory_order_relaxed); /* POSIX: none at start */
    cap__sig_queued_clear(t);
    atomic_store_explicit(&t->sig_edge_told, 0, memory_order_relaxed);
    atomic_store_explicit(&t->sig_delivering, false, memory_order_relaxed);
    atomic_store_explicit(&t->sig_closed, false, memory_order_relaxed);
    t->sig_call = NULL;
    t->in_sigsafe = 0; /* (a thread that ended inside a call left it counted) */
    memset(t->name, 0, sizeof t->name);
    if (attr != NULL)
        memcpy(t->name, attr->name, sizeof t->name);
    t->asan_fake_stack = NULL;
    t->sp = cap__ctx_make(stack_top(t), cap__thread_entry, t);

    long live = attr != NULL && attr->has_sigmask
                    ? cap__sigmask_thread_created_with(t, attr->sigmask)
                    : cap__sigmask_thread_created(t, cap__current());
    if (live < 0) { /* no memory for the mask's record */
        cap__stack_free(&t->stack);
        cap__thread_release(t);
        return EAGAIN;
    }
    if (cap__park_reserve(live) != 0) {
        cap__sigmask_thread_gone(t);
        cap__stack_free(&t->stack);
        cap__thread_release(t);
        return EAGAIN;
    }
    /* The handle must be taken before the thread can run: a detached one
     * may finish and be released before we look at it again. */
    *handle = cap__thread_handle(t);
    cap__schedule_new(t);
    return 0;
}

/* ---- exit ---------------------------------------------------------------- */

/* The parked joiner of the exiting self, claimed so that it can run next
 * on this worker and finish the exit itself (one switch, no trip through
 * the scheduler); NULL when there is none, it waits on another worker
 * (it could run before self is off its stack), or a cancel claimed it
 * first. cap__thread_finish then finds no joiner to wake. Only a parked
 * joiner is ever linked in t->joiner (its park finished before the TCB
 * lock was released), so the claim cannot beat the park. */
static cap__thread *claim_joiner(cap__thread *self)
{
    if (cap__cfg.migrate)
        return NULL;
    cap__spin_lock(&self->lock);
    cap__thread *joiner = self->joiner;
    if (joiner != NULL && joiner->worker == self->worker && cap__wait_claim(joiner)) {
        joiner->wake_result = 0;
        self->joiner = NULL;
        self->handed_off = true;
    } else {
        joiner = NULL;
    }
    cap__spin_unlock(&self->lock);
    return joiner;
}

/* Cancellation (issue 3): cleanup handlers run first, then the key
 * destructors, as POSIX orders them; then the TCB's cancellation fields
 * are reset for its next thread (src/sync/cancel.h). Returns the joiner
 * to switch to (claim_joiner), once nothing is left but the last switch. */
static cap__thread *exit_begin(cap__thread *self, void *retval)
{
    /* Out of every async-signal-safe call it was inside (io/sigsafe.h);
     * a handler's jump handed to it and not made (its call ended by the
     * cancellation instead) is dropped: made from a cleanup handler's
     * call, it would run the thread on; left, its record stays taken. */
    self->in_sigsafe = 0;
    if (__builtin_expect(atomic_load_explicit(&self->jump_due, memory_order_relaxed) != NULL, 0))
        cap__sig_jump_drop(self);
    cap__cleanup_run_all(self);
    if (self->keys != NULL) /* most threads have none: no call */
        cap__keys_run_destructors(self);
    /* After the destructors, which may set a locale or fail a dlopen. */
    if (self->rare != NULL || *self->worker->dlerror_slot != NULL)
        cap__libc_tls_exit(self);
    if (self->robust_noted != 0)
        cap__robust_exit(self);
    if (self->kernel_bound != 0)
        cap__kernel_bound_exit(self);
    cap__cancel_reset(self);
    /* Process signals routed to it and not taken go back (io/sigroute.h):
     * the mark, then the count's locked subtraction (on x86-64 a full
     * barrier), then the look, against a router's record and look. */
    atomic_store_explicit(&self->sig_closed, true, memory_order_relaxed);
    if (cap__sigmask_thread_gone(self) == 1)
        exit(0); /* the last thread, and main has already exited */
    cap__sig_routes_closing(self);
    if (self->is_main) {
        /* pthread_exit from main: the process lives on until the last
         * thread exits (which calls exit above). Main stays parked on the
         * process stack, yet POSIX lets another thread join it as any
         * other: its value and its end are handed over here, and join
         * sees main_exited instead of EXITED and releases nothing. */
        cap__spin_lock(&self->lock);
        self->retval = retval;
        self->main_exited = true;
        cap__thread *joiner = self->joiner;
        self->joiner = NULL;
        if (joiner != NULL)
            cap__unpark(joiner); /* under self->lock, as park.h requires */
        cap__spin_unlock(&self->lock);
        cap__park(CAP__PARK_EXITED_MAIN, NULL, CAP__FOREVER, NULL, NULL);
        cap__die("main thread woke after cap_thread_exit\n");
    }
    self->retval = retval; /* read by the joiner only after EXITED */
    return claim_joiner(self);
}

_Noreturn static void exit_thread(cap__thread *self, void *retval)
{
    if (cap__in_signal_handler())
        cap__sig_handler_exit(self, retval);
    cap__switch_exit(self, exit_begin(self, retval));
}

/* A thread whose start function returns ends by returning, to the
 * trampoline, the context to resume (cap__ctx_make): the return-address
 * predictor then stays in step with the thread that started this one,
 * most often its joiner (src/arch/x86_64/switch.S). With ASan the last
 * switch must follow the fiber annotation at once, so it is made here. */
void *cap__thread_entry(void *arg)
{
    cap__switch_first_entry();
    cap__worker_entered();
    cap__thread *self = arg;
    cap__sigmask_catch_up(); /* a target that blocks less, made by its creation (io/sigmask.h) */
    cap__sig_pending_check(self, CAP__OWN_FREE); /* sent before it first ran (io/sigdirect.h) */
    void *ret = self->start(self->start_arg);
#ifdef CAP__ASAN
    exit_thread(self, ret);
#else
    return cap__switch_exit_prepare(self, exit_begin(self, ret));
#endif
}

void cap_thread_exit(void *retval)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        cap__die("cap_thread_exit called outside a user thread\n");
    exit_thread(self, retval);
}

static void release_finished(cap__thread *t)
{
    if (t->keys != NULL)
        cap__keys_free(t);
#ifdef CAP__ASAN
    /* The dead thread's frames left poisoned shadow behind; the next user
     * of this stack must start clean. */
    __asan_unpoison_memory_region(t->stack.lo,
                                  (size_t)((char *)t->stack.hi - (char *)t->stack.lo));
#endif
    if (!cap__thread_release_keep(t)) {
        cap__stack_free(&t->stack);
        cap__thread_release(t);
    }
}

void cap__thread_finish(cap__thread *t)
{
    if (t->handed_off) {
        /* Running on the joiner t handed itself to: joined, so nobody
         * else may detach or join t, and the joiner is awake already. */
        t->handed_off = false;
        atomic_store_explicit(&t->state, CAP__T_EXITED, memory_order_release);
        return;
    }
    cap__spin_lock(&t->lock);
    atomic_store_explicit(&t->state, CAP__T_EXITED, memory_order_release);
    if (t->detached) {
        cap__spin_unlock(&t->lock);
        release_finished(t);
        return;
    }
    if (t->joiner != NULL) {
        cap__thread *joiner = t->joiner;
        t->joiner = NULL;
        cap__unpark(joiner); /* under t->lock, as park.h requires */
    }
    cap__spin_unlock(&t->lock);
}

/* ---- join / detach ------------------------------------------------------- */

static bool unlock_tcb(void *arg)
{
    cap__spin_unlock(&((cap__thread *)arg)->lock);
    return true;
}

/* Looks h up and returns its TCB locked, or NULL (ESRCH). */
static cap__thread *lookup_locked(cap_thread_t h)
{
    cap__thread *t = cap__thread_lookup(h);
    if (t == NULL)
        return NULL;
    cap__spin_lock(&t->lock);
    if (cap__thread_handle(t) != h || atomic_load(&t->state) == CAP__T_FREE) {
        cap__spin_unlock(&t->lock);
        return NULL;
    }
    return t;
}

/* Unlinks self, the joiner of t that stopped waiting (a cancel, a signal,
 * the timeout), leaving t joinable. False if t's exit took self off
 * first: the join is then done, and t stays joined unless always (a
 * cancel or a signal, whose join starts over or is abandoned). */
static bool unjoin(cap__thread *t, cap__thread *self, bool always)
{
    cap__spin_lock(&t->lock);
    bool waiting = t->joiner == self;
    if (waiting)
        t->joiner = NULL;
    if (waiting || always)
        t->joined = false;
    cap__spin_unlock(&t->lock);
    return waiting;
}

/* Joins h: waits for its end until to's time (NULL: none) when block, else
 * EBUSY if it has not ended.
 *
 * A cancellation point (issue 3): a joiner cancelled while it waits
 * unlinks itself under t->lock, as POSIX wants t left joinable, and then
 * acts; if t finished meanwhile its unpark of us lost to the cancel, and t
 * simply stays a zombie for the next joiner. A signal sent to the joiner
 * (sched/park.h) ends its park the same way: it runs the handler with t
 * joinable and starts over. A timeout unlinks the joiner too, unless t's
 * end took it off first (the timer claimed the joiner, then t's finish
 * found it still linked): that join is done, with t's value. */
static int join(cap_thread_t h, void **retval, cap__timeout *to, bool block)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        return EPERM;
    if (h == cap__thread_handle(self))
        return block ? EDEADLK : EBUSY; /* a try finds it running, as glibc's */
again:
    if (block)
        cap__cancel_point();
    cap__thread *t = lookup_locked(h);
    if (t == NULL)
        return ESRCH;
    bool ended = atomic_load(&t->state) == CAP__T_EXITED || t->main_exited;
    if (!block && !ended) { /* glibc's order: before the checks below */
        cap__spin_unlock(&t->lock);
        return EBUSY;
    }
    if (t->detached || t->joined) {
        cap__spin_unlock(&t->lock);
        return EINVAL;
    }
    if (!ended && to != NULL && cap__timeout_expired(to)) {
        cap__spin_unlock(&t->lock); /* a deadline passed: no park */
        return ETIMEDOUT;
    }
    t->joined = true;
    if (!ended) {
        t->joiner = self;
        self->park_signallable = true; /* see below */
        int rc = cap__park_cancellable(CAP__PARK_JOIN, t, to != NULL ? to->deadline : CAP__FOREVER,
                                       unlock_tcb, t);
        self->park_signallable = false;
        if (rc == ETIMEDOUT && !unjoin(t, self, false))
            rc = 0; /* t's exit came with the timer: joined after all */
        if (rc == ETIMEDOUT) {
            if (cap__timeout_expired(to))
                return ETIMEDOUT;
            goto again; /* the caller's clock was set back meanwhile */
        }
        if (rc == ECANCELED || rc == CAP__WAKE_SIGNAL) {
            unjoin(t, self, true);
            if (rc == ECANCELED)
                cap__cancel_act();
            /* A signal sent to us (sched/park.h): its handler runs with
             * t joinable again, then the join starts over. */
            cap__sig_pending_check(self, CAP__OWN_NO_JUMP);
            goto again;
        }
        /* Woken by t's exit (cap__thread_finish, or t's hand-off to us in
         * claim_joiner), which wrote retval and EXITED before the wake-up
         * and under t->lock: no need to take it again. */
    } else {
        cap__spin_unlock(&t->lock);
    }
    if (retval != NULL)
        *retval = t->retval;
    if (!t->is_main) /* main's TCB and stack live on, parked (exit_begin) */
        release_finished(t);
    return 0;
}

int cap_thread_join(cap_thread_t h, void **retval)
{
    return join(h, retval, NULL, true);
}

int cap_thread_tryjoin(cap_thread_t h, void **retval)
{
    return join(h, retval, NULL, false);
}

int cap_thread_clockjoin(cap_thread_t h, void **retval, clockid_t clock,
                         const struct timespec *abstime)
{
    if (abstime == NULL) /* no time limit, but the clock is checked (glibc) */
        return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC ? join(h, retval, NULL, true)
                                                                   : EINVAL;
    cap__timeout to;
    int rc = cap__timeout_init(&to, clock, abstime);
    return rc != 0 ? rc : join(h, retval, &to, true);
}

int cap_thread_detach(cap_thread_t h)
{
    cap__thread *t = lookup_locked(h);
    if (t == NULL)
        return ESRCH;
    if (t->detached || t->joined) {
        cap__spin_unlock(&t->lock);
        return EINVAL;
    }
    t->detached = true;
    bool exited = atomic_load(&t->state) == CAP__T_EXITED;
    cap__spin_unlock(&t->lock);
    if (exited)
        release_finished(t);
    return 0;
}

/* ---- identity ----------------------------------------------------------- */

cap_thread_t cap_thread_self(void)
{
    cap__thread *self = cap__current();
    return self != NULL ? cap__thread_handle(self) : 0;
}

int cap_thread_equal(cap_thread_t a, cap_thread_t b)
{
    return a == b;
}

int cap_thread_setname(cap_thread_t h, const char *name)
{
    if (name == NULL)
        return EINVAL;
    if (strlen(name) >= CAP_THREAD_NAME_MAX)
        return ERANGE;
    cap__thread *t = lookup_locked(h);
    if (t == NULL)
        return ESRCH;
    memset(t->name, 0, sizeof t->name);
    strcpy(t->name, name);
    cap__spin_unlock(&t->lock);
    return 0;
}

int cap_thread_getname(cap_thread_t h, char *buf, size_t len)
{
    if (buf == NULL)
        return EINVAL;
    cap__thread *t = lookup_locked(h);
    if (t == NULL)
        return ESRCH;
    size_t n = strnlen(t->name, sizeof t->name);
    int rc = 0;
    if (n >= len)
        rc = ERANGE;
    else
        memcpy(buf, t->name, n + 1);
    cap__spin_unlock(&t->lock);
    return rc;
}

int cap_thread_getattr(cap_thread_t h, cap_thread_attr_t *attr)
{
    if (attr == NULL)
        return EINVAL;
    cap__thread *t = lookup_locked(h);
    if (t == NULL)
        return ESRCH;
    *attr = (cap_thread_attr_t)CAP_THREAD_ATTR_INITIALIZER;
    attr->stack_size = (size_t)((char *)t->stack.hi - (char *)cap__stack_reported_lo(&t->stack));
    attr->detach_state = t->detached ? CAP_CREATE_DETACHED : CAP_CREATE_JOINABLE;
    memcpy(attr->name, t->name, sizeof attr->name);
    cap__spin_unlock(&t->lock);
    return 0;
}

int cap_thread_getstack(cap_thread_t h, void **addr, size_t *size)
{
    if (addr == NULL || size == NULL)
        return EINVAL;
    cap__thread *t = lookup_locked(h);
    if (t == NULL)
        return ESRCH;
    *addr = cap__stack_reported_lo(&t->stack);
    *size = (size_t)((char *)t->stack.hi - (char *)*addr);
    cap__spin_unlock(&t->lock);
    return 0;
}
