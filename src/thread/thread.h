/* SPDX-License-Identifier: MIT */
/*
 * The thread control block (TCB) and the handle table.
 *
 * TCBs live in chunks that are never unmapped, indexed by a 32-bit slot;
 * a public handle is (generation << 32 | slot + 1). A freed slot bumps its
 * generation, so a stale handle is recognised (ESRCH) instead of naming a
 * newer thread, and a lookup that races with reuse reads valid memory.
 *
 * Ownership: fields marked [owner] are touched only by the thread itself
 * or by the worker it runs on; [lock] fields only under tcb->lock;
 * [atomic] fields by anyone through atomics.
 */
#ifndef CAP_THREAD_THREAD_H
#define CAP_THREAD_THREAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "capriccio.h"
#include "sched/held.h"
#include "sched/park.h"
#include "sched/timer.h"
#include "stack/stack.h"
#include "util/spin.h"

/* Real-time signals a thread queues instances of (io/sigdirect.c): the
 * kernel's 34..64 (32 and 33 are glibc's own). */
#define CAP__SIG_QUEUED 31

struct cap__worker;

enum cap__thread_state {
    CAP__T_FREE = 0,  /* slot unused */
    CAP__T_RUNNABLE,  /* in some run queue, inbox or steal queue */
    CAP__T_RUNNING,
    CAP__T_PARKED,
    CAP__T_EXITED,    /* finished; waiting to be joined */
};

typedef struct cap__thread {
    void *sp;                      /* [owner] saved stack pointer while not running */
    struct cap__worker *worker;    /* [owner] worker it runs on (or last ran on) */
    struct cap__thread *run_next;  /* [owner of the queue it is in] */
    int saved_errno;               /* [owner] errno while switched out */
    uint32_t robust_noted;         /* [owner] robust mutexes it holds or is
                                      taking (sync/robust.c's table) */
    /* [owner] kernel-thread-owned locks it holds, let go at its switches
     * (sched/held.h); NULL for nearly every thread */
    struct cap__held_lock *held_locks;
    _Atomic uint8_t state;         /* [atomic] enum cap__thread_state */
    bool started;                  /* [owner] has run at least once */
    bool is_main;                  /* runs main() on the process stack */
    bool main_exited;              /* [lock] main called cap_thread_exit: joinable
                                      with its retval, but never released */
    bool wake_front;               /* [inbox] woken from a sync object by a running
                                      thread of another worker: to the front */
    uint16_t kernel_bound;         /* [owner] holds of state the kernel keeps per
                                      kernel thread (glibc's robust, PI, PP and
                                      process-shared mutexes): under CAP_MIGRATE
                                      it stays on its worker while not 0 */
    uint32_t queued_at;            /* [owner of the queue it is in] the worker's
                                      ticks when queued (policy_fifo.h) */

    /* Parking (src/sched/park.c). */
    _Atomic uint32_t wait;         /* [atomic] CAP__WAIT_* token, see park.h */
    int wake_result;               /* [owner] 0 or ETIMEDOUT, set by the waker */
    enum cap__park_reason reason;  /* [owner] why it is parked, for reports */
    uint32_t io_turns;             /* [owner] its I/O calls that returned without
                                      parking since it last parked (io/io.h, turns) */
    /* [own thread; read by a handler on its kernel thread] async-signal-
     * safe calls it is inside: a handler's jump out of them is handed to
     * it, made as the call returns (io/sigsafe.h). Beside io_turns: a line
     * every such call writes anyway. */
    unsigned in_sigsafe;
    const void *reason_obj;        /* [owner] what it waits on, if anything */
    cap__timer timer;              /* [worker] its deadline, when it has one */

    /* Identity and lifetime. */
    uint32_t slot;                 /* index in the handle table */
    _Atomic uint32_t gen;          /* [atomic] generation of the slot */
    cap__spin lock;                /* guards the [lock] fields below */
    bool detached;                 /* [lock] */
    bool joined;                   /* [lock] a joiner has claimed it */
    bool handed_off;               /* [owner] exiting straight to its claimed
                                      joiner, which finishes the exit */
    struct cap__thread *joiner;    /* [lock] parked in cap_thread_join */
    void *retval;                  /* [lock] valid once EXITED */

    void *(*start)(void *);
    void *start_arg;
    struct cap__sigclass *sigclass;/* [owner] its signal mask (io/sigmask.h) */
    /* [atomic] a handler's jump into it (src/stack/signal.c) */
    _Atomic(struct cap__handed_jump *) jump_due;
    /* [atomic] signals sent to it alone (pthread_kill, raise) and not yet
     * delivered or taken, bit sig - 1 (io/sigdirect.h) */
    _Atomic uint64_t sig_pending;
    /* [atomic] instances of each real-time signal in sig_pending (the
     * kernel's first real-time number on: io/sigdirect.c): the low byte
     * counts those pending, the high byte those being sent; a real-time
     * signal's bit is set while its low byte is not 0 */
    _Atomic uint16_t sig_queued[CAP__SIG_QUEUED];
    _Atomic uint16_t sig_runs_intr; /* see sig_runs */
    /* [atomic] sends recorded in sig_pending, counted after the bit is
     * set: an epoll wait, poll or signalfd read that looked at a signalfd
     * before a send parks only if the count is still what it was then
     * (io/sigfd.h) */
    _Atomic uint32_t sig_sends;
    /* [own thread, and a kick's handler while it runs] handlers of
     * signals sent to it alone that it ran (io/sigdirect.c), all of them
     * and those without SA_RESTART: a blocking transfer between two of
     * its parks, not registered for signals, sees by these that a handler
     * interrupted it (io/wait.c, cap__io_do_wait). Compared for change
     * only; the second wraps at 65,536 */
    _Atomic uint32_t sig_runs;
    /* [atomic] signals of sig_pending already reported by an edge-
     * triggered epoll registration of a signalfd (io/sigfd.h); a send
     * that newly sets a bit (or queues a real-time one) clears it */
    _Atomic uint64_t sig_edge_told;
    /* [own thread] its last epoll look at a set holding a signalfd found
     * one of its own signals due and no room for it: the next look
     * reports those before the kernel's events (io/sigfd.h) */
    bool sig_epoll_ours_first;
    /* [atomic] inside cap__sig_deliver_pending in a mode that forbids a
     * free jump (io/sigdirect.c): that loop delivers what comes meanwhile */
    atomic_bool sig_delivering;
    /* [atomic] it is ending: a process signal routed to it goes back to
     * the process (io/sigroute.h) */
    atomic_bool sig_closed;
    /* Read only in a fork's child; here it fills the line's gap. */
    uint32_t fork_gen;             /* cap__fork_gen when created (the child of a
                                      fork runs only its own threads, worker.h) */
    /* [its shard lock] its call registered for signals, if any
     * (io/sigintr.h): where a signal sent to it is delivered */
    struct cap__sig_waiter *sig_call;
    const void *create_site;       /* return address of cap_thread_create's caller */
    cap__stack stack;
    size_t stack_request;          /* the size asked for: a TCB cached with its
                                      stack serves the next request of that size */

    void **keys;                   /* [owner] lazily allocated key values */
    uint32_t nkeys;                /* [owner] length of keys */
    char name[CAP_THREAD_NAME_MAX];/* [lock] for writers; readers tolerate tearing */

    /* Cancellation (issue 3; src/sync/cancel.c, protocol in park.h).
     * A request is pending while cancel_gen equals gen, so a request made
     * against one life of a slot never leaks into the next one and no
     * field needs resetting at creation. The [owner] fields are zero for a
     * fresh TCB and put back to zero by the exit path (cap__cancel_reset). */
    _Atomic uint32_t cancel_gen;   /* [atomic] generation a cancel was requested for */
    bool cancel_disabled;          /* [owner] CAP_CANCEL_DISABLE */
    bool cancel_async;             /* [owner] CAP_CANCEL_ASYNCHRONOUS was asked for */
    bool cancelling;               /* [owner] acting on a cancel or exiting: no more points */
    bool park_cancellable;         /* [owner] the current park is a cancellation point */
    bool park_signallable;         /* [owner] a signal sent to it may end the current
                                      park (sched/park.h) */
    bool forking;                  /* [owner] inside glibc's fork, called by the
                                      fork wrapper (intercept/handover.c) */
    struct cap_cleanup_frame *cleanup; /* [owner] innermost cleanup handler */

    void *asan_fake_stack;         /* [owner] AddressSanitizer fiber bookkeeping */

    /* [owner] state few threads ever have (below); made on first need and
     * kept with the TCB for its next threads */
    struct cap__thread_rare *rare;
} cap__thread;

/* At the exit of t (the calling thread), holding state the kernel keeps
 * per kernel thread (t->kernel_bound != 0): what the kernel does when a
 * kernel thread ends (a robust mutex's holder died), in
 * src/intercept/libc_mutex.c. */
void cap__kernel_bound_exit(cap__thread *t);

/* glibc's per-kernel-thread state that POSIX or glibc makes per thread,
 * for the user threads that use it (src/intercept/libc_tls.c): the
 * locale uselocale() set, and the buffers of inet_ntoa, strerror and
 * strsignal. `held` is in the
 * thread's held_locks (sched/held.h) while `locale` is set: it moves the
 * locale at the thread's switches. */
typedef struct cap__thread_rare {
    void *locale;      /* [owner] NULL: the global locale */
    cap__held_lock held;
    char inet_ntoa[16];/* [owner] "255.255.255.255" */
    char strerror[96]; /* [owner] "Unknown error 10007", translated */
    char strsignal[96];/* [owner] "Real-time signal 3", "Unknown signal 107" */
} cap__thread_rare;

/* At the exit of t (the calling thread), when t->rare is set or its
 * kernel thread has a dlerror result: the kernel thread goes back to the
 * global locale and frees the result, which the next thread to run there
 * must not see (src/intercept/libc_tls.c). */
void cap__libc_tls_exit(cap__thread *t);

/* Whether the calling thread t must act on a cancel now (t is current). */
static inline bool cap__cancel_requested(cap__thread *t)
{
    return !t->cancel_disabled && !t->cancelling &&
           atomic_load(&t->cancel_gen) == atomic_load_explicit(&t->gen, memory_order_relaxed);
}

/* Handle <-> TCB. */
static inline cap_thread_t cap__thread_handle(const cap__thread *t)
{
    return ((uint64_t)atomic_load_explicit(&t->gen, memory_order_relaxed) << 32) |
           (uint64_t)(t->slot + 1);
}
/* The TCB a handle names, or NULL if the handle is unknown or stale. The
 * result may go stale at once; re-check the generation under t->lock. */
cap__thread *cap__thread_lookup(cap_thread_t h);

/* Allocates a TCB in state FREE with a fresh slot, or NULL. */
cap__thread *cap__thread_alloc(void);
/* Returns the slot for reuse and invalidates every handle to it. */
void cap__thread_release(cap__thread *t);
/* The per-worker cache of finished TCBs that keep their stacks: a worker's
 * create+join cycle then takes no lock and no system call. take returns a
 * FREE TCB whose stack has stack_request == size, or NULL; release_keep
 * releases t like cap__thread_release but keeps its stack attached, or
 * returns false (cache full, not on a worker, or a stack that must go
 * through cap__stack_free) and does nothing. Both run on a worker's kernel
 * thread without switching, so the cache needs no lock. */
cap__thread *cap__thread_take_cached(size_t size);
bool cap__thread_release_keep(cap__thread *t);
/* Whether attr's stack size (0, or CAP_STACK_MIN..CAP_STACK_MAX) and
 * detach state are ones cap_thread_create accepts. */
bool cap__thread_attr_valid(const cap_thread_attr_t *attr);
/* The process's default attributes (thread/default_attr.c), for a create
 * given none: false (*attr untouched) while the program never set them. */
bool cap__thread_default_attr(cap_thread_attr_t *attr);
/* fork holds the defaults' lock across the real fork (intercept/handover.c):
 * false if the code a signal handler that forks interrupted holds it
 * (util/ownspin.h); release is given that result. */
bool cap__thread_default_attr_fork_hold(void);
void cap__thread_default_attr_fork_release(bool held);
/* Calls fn for every TCB not in state FREE (racy snapshot; for reports). */
void cap__thread_foreach(void (*fn)(cap__thread *t, void *arg), void *arg);
/* In a fork's child, on its one kernel thread: the table's lock and the
 * TCB locks that a kernel thread the child does not have held at the fork
 * (a finishing thread's, an instant after its joiner woke) are released,
 * so the child's creates, joins and signals do not wait on them for
 * ever. Only locked ones are written: the pages of the rest stay shared. */
void cap__thread_table_forked(void);

/* Runs key destructors of the calling thread (thread exit path). */
void cap__keys_run_destructors(cap__thread *self);
void cap__keys_free(cap__thread *t);

/* Entry point of every new thread: runs start(), then exits (returning
 * the context to resume, see cap__ctx_make). */
void *cap__thread_entry(void *tcb);
/* Finishes a thread that has switched away for the last time; called on
 * its worker by whatever runs there next (the scheduler context or the
 * thread it switched to). */
void cap__thread_finish(cap__thread *t);
/* Live user threads (created, not yet exited) in the low 32 bits; in the
 * high 32, how many of them have a signal mask other than main's first
 * one (io/sigmask.h, which keeps it). One word, so that one load tells how
 * many have the first mask, and the create and exit of such a thread (all
 * of them in a program that never changes a mask) cost one atomic add, as
 * the count alone did. */
extern __attribute__((visibility("hidden"))) atomic_long cap__live_threads;
#define CAP__LIVE_MASKED ((long)1 << 32)
static inline long cap__live_count(long word)
{
    return word & 0xffffffffL;
}

/* The user thread that the process's initial kernel thread (worker 0's)
 * started with: main, or in a fork's child the forking thread, whose
 * kernel thread glibc then counts as the initial one. 0 before the
 * runtime starts. What glibc's pthread_t of that kernel thread names
 * (intercept/sigsend.c). */
extern __attribute__((visibility("hidden"))) cap_thread_t cap__main_handle;

/* cap_once with an argument for init (thread/once.c; intercept/libc_cond.c
 * runs libstdc++'s call_once through it). */
int cap__once_run(cap_once_t *once, void (*init)(void *), void *arg);

#endif /* CAP_THREAD_THREAD_H */
