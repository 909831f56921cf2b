/* SPDX-License-Identifier: MIT */
/*
 * Whether the calling kernel thread is running one of the program's
 * signal handlers (set by the trampoline, src/stack/signal.c, around the
 * handler's call; nested handlers count up).
 *
 * A handler interrupts whatever ran on its kernel thread, possibly a user
 * thread in the middle of the runtime with a spinlock held, and POSIX lets
 * it call the async-signal-safe functions. So inside a handler:
 *  - the interposed libc calls behave as on a thread the runtime does not
 *    run (intercept.h): the system call itself, blocking the kernel
 *    thread if it must, as under NPTL; never a park, which would switch
 *    stacks from inside the handler (but for a handler its thread runs
 *    at a safe point of its own, which may wait as it: cap__sig_lift);
 *  - sem_post raises the value at once but leaves the wake-up of a waiter
 *    to the signal dispatch that follows the handler (sched/park.h,
 *    cap__wake_on_deferred): waking takes the locks the interrupted code
 *    may hold; so does a write to a pipe the runtime made (io/pipe.h);
 *  - the descriptor calls (close, close_range, dup*, fcntl F_DUPFD,
 *    shutdown, socket, socketpair, accept, pipe, open) make their system
 *    call at once and queue the descriptor table's bookkeeping for that
 *    same dispatch (io/fd.h, io/fdsig.c); descriptors created there are
 *    made as asked, not non-blocking underneath.
 *  - fork, _Fork and exec give the descriptors back their blocking mode
 *    at once, the pipes' wake-ups left to the dispatch (io/pipe.h), and
 *    the locks a fork holds across the real fork know their holder's
 *    kernel thread (util/ownspin.h, intercept/handover.c).
 */
#ifndef CAP_UTIL_SIGCTX_H
#define CAP_UTIL_SIGCTX_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

extern __thread unsigned cap__handler_depth
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* Handlers of the program run on this kernel thread so far (the
 * trampoline counts each before it calls it; kicks and deliveries that
 * run nothing do not count): a blocking system call that failed with
 * EINTR while this did not move was interrupted by the runtime, not by a
 * handler (intercept/sigsuspend.c). */
extern __thread unsigned long cap__handler_runs
    __attribute__((tls_model("initial-exec"), visibility("hidden")));
/* Those of them installed without SA_RESTART: a restartable call that a
 * kernel thread the runtime does not run emulates with poll(2), which no
 * SA_RESTART restarts, fails with EINTR only when this moved
 * (intercept/real.c, cap__ic_foreign_wait). */
extern __thread unsigned long cap__handler_breaks
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

static inline bool cap__in_signal_handler(void)
{
    return __builtin_expect(cap__handler_depth != 0, 0);
}

/* Set by a handler that left work for the signal dispatch (a deferred
 * wake-up, a pipe's wake-up, the descriptor table's bookkeeping; above),
 * after queueing it; cleared by the dispatch before it runs that work
 * (io/sigintr.c). The dispatch follows a numbered delivery anyway; this
 * brings it after one that is not numbered too (a signal aimed at the
 * thread it interrupted: raise, a fault; src/stack/signal.c). */
extern _Atomic _Bool cap__sig_work_left __attribute__((visibility("hidden")));

static inline void cap__sig_note_work_left(void)
{
    atomic_store_explicit(&cap__sig_work_left, 1, memory_order_release);
}

struct __jmp_buf_tag;

/* A longjmp(env, val) to target_sp (env's stack pointer) is about to be
 * made inside a handler (src/stack/longjmp.c): ends every handler whose
 * frame it leaves (src/stack/signal.c), so this kernel thread is no
 * longer "in" them and their deliveries are over (io/sigintr.h). A jump
 * out of every handler into another user thread than the one they
 * interrupted (or out of the worker's scheduler) does not return: it is
 * handed to that thread (src/stack/signal.c, "Jumps into another
 * thread"), or refused with a message. */
void cap__sig_handler_jump(struct __jmp_buf_tag *env, int val, const void *target_sp);

struct cap__thread;
/* The calling user thread t ends (pthread_exit, a cancellation) inside a
 * handler that interrupted it (src/stack/signal.c, "Exits out of
 * handlers"): leaves every handler open on this kernel thread and returns,
 * for the exit to go on; or, inside a call whose records the exit would
 * abandon, hands the exit to t, made as the call returns (does not
 * return then). */
void cap__sig_handler_exit(struct cap__thread *t, void *retval);

/* A handler's jump handed to the calling user thread, due as the call it
 * was parked in returns (intercept/intercept.h, cap__ic_ret): made now,
 * if there is one. cap__sig_jumps_pending counts the jumps handed over
 * and not made, so that the check costs one load of a word nobody writes
 * while there are none. */
void cap__sig_take_jump_slow(void);
extern _Atomic int cap__sig_jumps_pending __attribute__((visibility("hidden")));
static inline void cap__sig_take_jump(void)
{
    if (__builtin_expect(atomic_load_explicit(&cap__sig_jumps_pending, memory_order_relaxed) != 0, 0))
        cap__sig_take_jump_slow();
}
/* The signals the mask of the jump handed to t (sigsetjmp's, if saved)
 * blocks, or 0: the thread's own pending ones among them are not
 * delivered before the jump (io/sigdirect.c). Called by t, or by a
 * handler on its kernel thread. */
uint64_t cap__sig_jump_holds(struct cap__thread *t);
/* Drops the jump handed to t and not made, if any: t ends (thread.c)
 * without making it (a cancellation that ended its call first). */
void cap__sig_jump_drop(struct cap__thread *t);
/* In a fork's child, before any signal is let in (intercept/handover.c):
 * no jump handed over in the parent is made in the child, where the fork
 * returns 0 (the kernel gives a child no pending signal either). */
void cap__sig_jumps_forked(struct cap__thread *self);
/* The signal whose handler handed t a jump not made yet (its delivery in
 * *token), or 0: a call t registers then is interrupted at once
 * (io/sigintr.c). */
int cap__sig_jump_signal(struct cap__thread *t, uint64_t *token);

/* Whether the program has a handler installed (through sigaction or
 * signal) for a signal that can arrive from outside, i.e. any but the
 * faults SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP and SIGSYS: such a
 * handler may still wake a thread (sem_post, a write to a pipe), so the
 * deadlock report (sched/deadlock.c) holds back. */
bool cap__sig_program_handlers(void);

/* Set around a delivery of a signal sent to the running user thread
 * (io/sigdirect.h), saying what a jump out of its handler may do
 * (src/stack/signal.c): leave freely (the thread was outside the
 * runtime's waits), be handed to the thread and made as its call returns
 * (inside a call registered for signals), or nothing (as it resumes from
 * another wait, whose records the jump would abandon: refused with a
 * message). */
enum cap__own_delivery { CAP__OWN_FREE, CAP__OWN_IN_CALL, CAP__OWN_NO_JUMP };
extern __thread int cap__sig_own_delivery
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* A signal whose delivery on this kernel thread now comes at a safe
 * point of the running user thread, or 0: set just around the system
 * calls that deliver it there, the thread's own delivery
 * (cap__sig_deliver_pending, io/sigdirect.c) and its kill() or sigqueue()
 * of its own process, which Linux delivers to the sender's kernel thread
 * if it accepts the signal (intercept/sigsend.c). The trampoline takes
 * the handler it runs for it as one that may wait as its thread
 * (below). */
extern __thread int cap__sig_raising
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/*
 * Handlers that wait as their thread. A handler runs on its kernel thread,
 * so a call in it that blocks (intercept.h) blocks every user thread of
 * that worker; if it waits for one of them (libuv's signal lock: a byte in
 * a pipe, which its handler reads and a thread of the loop writes back),
 * nothing ever wakes it. A handler that a thread delivered to itself at a
 * safe point (holding no lock of the runtime, its frames on its own
 * stack, no call of its registered for signals) can instead wait as that
 * thread: cap__sig_lift takes the handler off the kernel thread (its
 * record, the depth, the handler's kernel mask), gives the thread for the
 * wait the mask it has in the handler under POSIX (its own plus what the
 * delivery blocked: sa_mask and the signal), and keeps the thread on its
 * worker; the wait then parks as any user thread's does, and
 * cap__sig_unlift puts the handler back on whatever kernel state the
 * worker has by then. False, and nothing done, for any other handler (the
 * call then blocks its kernel thread, as before) or outside handlers.
 */
struct cap__sig_lift {
    void *top;          /* the handler's open record (signal.c) */
    uint64_t kernel;    /* the kernel thread's mask in the handler */
    uint64_t mask;      /* the thread's own mask */
};
bool cap__sig_lift(struct cap__sig_lift *l);
void cap__sig_unlift(struct cap__sig_lift *l);

/* What a delivery of sig would do now (io/sigdirect.c): run the program's
 * handler (its sa_flags in *flags), nothing, or the default action when
 * that is not to ignore it (end, dump core, stop the process). */
enum cap__sig_disp { CAP__DISP_HANDLER, CAP__DISP_IGNORE, CAP__DISP_DEFAULT };
enum cap__sig_disp cap__sig_disposition(int sig, int *flags);

/* The runtime's own SIGSEGV and SIGBUS handler (src/stack/overflow.c). It
 * is installed through the interposed sigaction like a program's, but it
 * is no handler of the program's for io/sigintr.h's cap__sig_handled: a
 * fault it does not fix up ends the process or goes to the handler the
 * program had installed before it, which set the flag then. */
void cap__stack_on_fault(int sig, siginfo_t *info, void *uctx);

#endif
