/* SPDX-License-Identifier: MIT */
/*
 * Workers: the kernel threads that run user threads.
 *
 * Each worker owns
 *  - a local run queue ordered by the policy; only this worker touches it;
 *  - an inbox: a lock-free LIFO that any kernel thread pushes woken threads
 *    onto; the owner takes the whole list at once (so no ABA) and feeds it
 *    to the policy in FIFO order;
 *  - a steal queue under a spinlock, holding threads that any worker may
 *    take: new threads that have not started yet (and, with CAP_MIGRATE=1,
 *    every runnable thread but one holding kernel-thread state,
 *    kernel_bound in thread/thread.h, which stays with its worker);
 *  - a timer heap;
 *  - a scheduler context (Go's g0): its own stack, where parks finish and
 *    the loop picks the next thread.
 *
 * Worker 0 is the process's initial kernel thread; main() runs on it as a
 * user thread on the process stack.
 *
 * Switches: a thread that yields or parks switches straight to the next
 * thread of the local queue when there is one (and migration is off),
 * otherwise to the scheduler context, as an exiting thread always does.
 * What must happen once the old thread's registers are saved (release the
 * wait structure's lock, publish its wait token, requeue a yielder, reap
 * an exited thread) is left in w->after, and whoever runs next on the
 * worker carries it out first thing (finish_switch): the pattern of the
 * kernel's finish_task_switch. Code that runs after a switch must not
 * reuse a worker pointer or a TLS address computed before it: read
 * self->worker.
 */
#ifndef CAP_SCHED_WORKER_H
#define CAP_SCHED_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sched/park.h"
#include "sched/timer.h"
#include "stack/stack.h"
#include "util/queue.h"
#include "util/spin.h"

struct cap__thread;

/* What the scheduler context must do for the thread that just switched to
 * it. Set by the thread right before the switch. */
enum cap__after {
    CAP__AFTER_NONE = 0,
    CAP__AFTER_PARK,  /* run unlock(arg); on false, requeue the thread */
    CAP__AFTER_YIELD, /* requeue the thread */
    CAP__AFTER_EXIT,  /* the thread is finished: release or hand to joiner */
};

typedef struct cap__worker {
    int id;
    pthread_t kthread;
    void *sched_sp;                     /* saved scheduler context */
    cap__stack sched_stack;             /* worker 0 only; others use their own */
    const void *sched_lo;               /* scheduler stack bounds, for ASan */
    size_t sched_size;
    void *sched_fake;                   /* ASan fake stack of the scheduler */
    struct cap__thread *current;        /* running user thread, or NULL */
    int *errno_slot;                    /* the kernel thread's errno: saves a
                                           call to __errno_location per switch */
    void **dlerror_slot;                /* the kernel thread's dlerror result
                                           (intercept/libc_tls.c) */

    /* The step the last thread to switch away left for whoever runs next
     * on this worker (the scheduler context or, on a direct switch, the
     * next thread itself), and that thread. */
    enum cap__after after;
    cap__unlock_fn after_unlock;
    void *after_arg;
    struct cap__thread *prev;

    cap__tqueue local;                  /* policy's queue (fifo uses it directly) */
    union {                             /* the policy's own state (in the
                                           space of one pointer: a larger
                                           worker moved its fields' cache
                                           lines, yield +6% on 2 workers) */
        void *policy_state;             /* for policies that need more */
        struct cap__thread *fifo_front_end; /* fifo: the front's last thread */
    };
    unsigned fifo_wake_streak;          /* fifo: wakes sent to the front in a row */
    unsigned fifo_front;                /* fifo: local's first threads that are
                                           the front (policy_fifo.h) */
    _Atomic(struct cap__thread *) inbox;/* LIFO of woken threads, linked by run_next */

    cap__spin steal_lock;
    cap__tqueue steal;                  /* threads any worker may take */
    atomic_size_t steal_len;            /* racy read of steal.len for idle scans */
    /* A lone new thread (cap__schedule_new): set by this worker's running
     * thread, taken by this worker or stolen by another (exchange). */
    _Atomic(struct cap__thread *) lone;

    /* Finished TCBs with their stacks, for the next create here
     * (src/thread/table.c); linked by run_next, at most TCB_CACHE_MAX. */
    struct cap__thread *tcb_cache;
    unsigned tcb_cached;

    cap__timer_heap timers;
    uint32_t ticks;                     /* switches and scheduling rounds: periodic
                                           work, the fifo queue's stamps */
    bool steal_first;                   /* next round looks at steal queues first */
    bool poll_first;                    /* next round polls for I/O (cap__yield_polling) */
    uint8_t fifo_back_run;              /* fifo: overdue back threads picked in a
                                           row ahead of the front */
    unsigned place_turn;                /* placement turn of new threads (hashed) */

    /* Idle protocol: the worker sets sleeping=1, re-checks for work, then
     * waits; a waker publishes work, then exchanges sleeping to 0 and wakes
     * it if it was 1. Both sides use seq_cst, so either the worker sees the
     * work or the waker sees sleeping=1 (Dekker). */
    _Atomic uint32_t sleeping;
    int spin_rounds;                    /* idle spin budget, adapted (worker.c) */
    uint32_t own_spin_ns;               /* spin budget for its own disk
                                           requests, adapted (worker.c) */
    void *poller_state;                 /* owned by the active poller */

    /* Balance of started threads (worker.c, may_take_new), last so the
     * fields above keep their cache lines. */
    atomic_int homed;                   /* threads started here and not exited
                                           (written by this worker only) */
    /* Descriptor waits, sleeps and polls begun on this worker minus those
     * ended on it (io/wait.c): written by this worker only, with plain
     * loads and stores; the sum over the workers is what is parked. */
    atomic_long io_waits;
    /* A worker whose new threads this one may not take for balance, and
     * since when it has been seen stuck. */
    struct cap__worker *watch;
    uint32_t watch_ticks;
    uint64_t watch_since;
    /* Signal masks (io/sigmask.h): its kernel thread's id, 0 until it
     * runs, and the target it has installed (written by that thread). */
    _Atomic pid_t tid;
    _Atomic uint64_t sig_applied;
    /* Futex word, 1 once its kernel thread has set itself up (start-up
     * waits for it: cap__workers_start). */
    _Atomic uint32_t set_up;
    /* Program signal handlers open on its kernel thread (nesting depth,
     * src/stack/signal.c): while one interrupts the current thread, a
     * signal sent to that thread is delivered as the outermost returns
     * (io/sigdirect.h). */
    _Atomic unsigned handlers;
    /* Kicks (io/sigintr.h, CAP__SIG_KICK) its kernel thread has taken,
     * counted by the trampoline: one taken after a point in time means
     * the thread has entered the kernel since, and so run the task work
     * queued for it (io/netio_uring.c, release). */
    _Atomic uint32_t kicks_taken;
} cap__worker;

typedef struct cap__runtime {
    int nworkers;
    cap__worker *workers;
    atomic_int nsleeping;              /* workers inside poller wait */
    atomic_int nsleeping_forever;      /* of those, waiting with no deadline */
    atomic_uint next_victim;           /* round-robin for wake-one, and for
                                          placement by foreign kernel threads */
    atomic_int rechecker;              /* 1 + id of the sleeping worker that
                                          looks for stealable work every
                                          RECHECK_NS (worker.c), 0: none */
} cap__runtime;

extern __attribute__((visibility("hidden"))) cap__runtime cap__rt;

/* Forks the process has been through (0 in a process that is no fork's
 * child). A fork's child has only the kernel thread that forked; it keeps
 * the forking user thread (if any) and the threads it creates itself. The
 * parent's other threads are copies of threads that live on in the
 * parent: in the child they never run again (as NPTL's child has only the
 * forking thread), so a wake-up of a thread whose fork_gen is older is
 * dropped (cap__make_runnable). */
extern __attribute__((visibility("hidden"))) uint32_t cap__fork_gen;
/* In a fork's child, right after the fork: forgets every queued thread
 * and makes self (NULL: the fork was made outside the library's threads)
 * the only one left. */
void cap__sched_forked(struct cap__thread *self);
/* In a fork's child: starts again the workers the fork left behind (all
 * but the forking thread's), once; called at the child's first thread
 * creation. A no-op elsewhere. */
void cap__workers_forked_restart(void);

/* The worker whose kernel thread runs the caller, or NULL. initial-exec
 * TLS: one %fs-relative load instead of a __tls_get_addr call on every
 * switch. The library is loaded at start-up (linked or LD_PRELOADed), so
 * static TLS is available; dlopen()ing it late may fail in a process whose
 * static TLS surplus is used up (see the README). Read it afresh after any
 * switch: with migration the caller may be on another kernel thread. */
extern __thread cap__worker *cap__self_worker
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

static inline cap__worker *cap__worker_self(void)
{
    return cap__self_worker;
}

/* Work handed to w: woken threads and new threads dealt to it. What the
 * idle spin watches (worker.c) and what a worker letting go of the
 * netio instance counts as threads to run (io/idle.c); it reads only
 * lines that change when w is given work, so a spinning worker does not
 * pull at the lines of a busy one. */
static inline bool cap__worker_has_own_work(cap__worker *w)
{
    return atomic_load(&w->inbox) != NULL || w->local.len != 0 ||
           atomic_load_explicit(&w->steal_len, memory_order_relaxed) != 0 ||
           atomic_load_explicit(&w->lone, memory_order_relaxed) != NULL;
}

/* The calling user thread, or NULL on a kernel thread we do not run. */
static inline struct cap__thread *cap__current(void)
{
    cap__worker *w = cap__worker_self();
    return w != NULL ? w->current : NULL;
}

/* Starts the workers around the calling initial kernel thread, which
 * becomes worker 0 with its current code running as main_thread. */
void cap__workers_start(struct cap__thread *main_thread, size_t sched_stack_size);

/* Makes t runnable: on the caller's worker if it is t's, else via t's
 * worker's inbox; a thread that has not started (or any, with migration,
 * but a kernel_bound one) goes to a steal queue. Wakes a sleeping worker
 * when needed. */
void cap__make_runnable(struct cap__thread *t);
/* Places a brand-new thread. */
void cap__schedule_new(struct cap__thread *t);

/* glibc's dlerror result per user thread (intercept/libc_tls.c): the
 * calling kernel thread's word (a word of the runtime's that stays NULL
 * when glibc has none); and, as a thread that left with a result
 * resumes, the result back on w. */
void **cap__dl_error_slot(void);
__attribute__((cold)) void cap__dl_error_put_back(cap__worker *w, void *result);

/* Switches from the running thread to w's scheduler context, which will
 * carry out `after`. Returns when the thread next runs. */
void cap__switch_to_scheduler(struct cap__thread *self, enum cap__after after,
                              cap__unlock_fn unlock, void *arg);
/* Parks the running thread: switches to the next local thread directly
 * when there is one, else to the scheduler. Returns when it next runs. */
void cap__switch_park(struct cap__thread *self, cap__unlock_fn unlock, void *arg);
/* The last switch of an exiting thread (which never runs again). next:
 * NULL, or a parked thread of this worker that the caller has claimed
 * (cap__wait_claim) and that should run next, the exiting thread's joiner. */
_Noreturn void cap__switch_exit(struct cap__thread *self, struct cap__thread *next);
/* Without AddressSanitizer: all of cap__switch_exit but the switch itself,
 * whose target it returns, for a thread's entry function to return to the
 * trampoline (cap__ctx_make). */
void *cap__switch_exit_prepare(struct cap__thread *self, struct cap__thread *next);

/* Whether code that a signal interrupted at stack pointer sp, on w's
 * kernel thread while t is w's current thread, is t's own. Not while the
 * worker switches to t or away from it: t is current from before its
 * context is loaded until after it was saved, while the switch runs on
 * the scheduler's stack or on the stack of the thread it came from (a
 * direct switch). A handler that interrupted that code did not interrupt
 * t: a jump into t's frames, or t's exit, would abandon the switch.
 * On t's own stack the switch is not over either while a step left for
 * after it is pending (w->after), nor, under ASan, between the fiber
 * annotations (a switch started in there aborts the program).
 * Under linked stacks only these and the scheduler's stack are told
 * apart.
 * Async-signal-safe; for a signal delivered on w's kernel thread. */
bool cap__worker_runs_frames_of(const cap__worker *w, const struct cap__thread *t,
                                const void *sp);

/* First thing a new user thread runs (after the ASan fiber hook): carries
 * out the step the context that switched to it left pending. */
void cap__worker_entered(void);

/* Direct thread-to-thread yield; see cap_yield. */
void cap__yield(struct cap__thread *self);
/* The libc yields' (intercept/yield.c): cap_yield, and the kernel's
 * sched_yield when no other thread of the worker was there to run, as a
 * loop waiting for a kernel thread (one of the program's own, not a user
 * thread) needs the CPU given away. */
void cap__yield_libc(struct cap__thread *self);
/* A yield whose thread may have kept ready I/O from being seen (the end
 * of an I/O turn, io/io.h): through the scheduler's round, which then
 * polls, whenever some I/O could complete; otherwise as cap__yield. */
void cap__yield_polling(struct cap__thread *self);

/* In a fork's child: no worker counted idle (sched_forked). */
void cap__deadlock_forked(void);
/* Opens what the foreign-thread count reads (sched/deadlock.c); start-up. */
void cap__deadlock_init(void);
/* Deadlock detection: called when a worker is about to sleep with no
 * timer; see deadlock.c. */
void cap__deadlock_check_enter(cap__worker *w);
void cap__deadlock_check_leave(cap__worker *w);

#endif /* CAP_SCHED_WORKER_H */
