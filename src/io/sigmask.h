/* SPDX-License-Identifier: MIT */
/*
 * Signal masks of user threads.
 *
 * Each user thread has its own mask, as POSIX gives each thread one: what
 * pthread_sigmask and sigprocmask on it change and report, what a new
 * thread inherits from its creator, and what decides whether a signal may
 * interrupt one of its parked calls (io/sigintr.h). A kernel thread's mask
 * cannot follow the user thread it runs (a system call at every switch),
 * so the workers' kernel threads all block the same set, the *target*:
 * the signals that every live user thread blocks. A signal some thread
 * accepts can then be delivered to some worker, and its handler runs
 * there (the dispatch interrupts a call of a thread that accepts it); one
 * that every thread blocks stays pending in the kernel, for sigwait,
 * sigwaitinfo, sigtimedwait and signalfd, which are served there too
 * (intercept/sigwait.c). A parked sigsuspend, pselect, ppoll or
 * epoll_pwait has the call's mask as its thread's for the wait, so a
 * signal it accepts reaches it even when every other thread blocks it.
 *
 * Bookkeeping: threads with the same mask share a class (a mask and the
 * count of live threads that have it); the target is the intersection of
 * the classes with live threads, recomputed under a lock when a class's
 * count goes from or to zero. The first class (main's mask at start-up,
 * which every thread has until the program changes one) is counted as
 * the live threads minus those with another mask, both in one word
 * (cap__live_threads), so that its threads cost nothing more. Never applied to a kernel thread, whatever
 * the masks say: SIGKILL and SIGSTOP (the kernel refuses), glibc's two
 * internal signals (its pthread_sigmask refuses), the fault signals
 * (blocking them turns a fault into death) and the runtime's kick
 * (CAP__SIG_KICK, io/sigintr.h), which carries changes of the target.
 *
 * Applying a change. The thread whose call changed the target installs
 * it on its own kernel thread before the call returns (a pending signal
 * it now accepts is delivered there, as POSIX asks). A change that blocks
 * more must reach every worker before the call returns: the others are
 * kicked (their kick handler installs the target by editing the mask the
 * interrupted code gets back) and the caller waits for each to report it.
 * A change that blocks less is left to the others: the caller's worker
 * accepts the signal now, and each worker installs the latest target
 * whenever it applies one, and as a thread starts there
 * (cap__sigmask_catch_up: a thread made with a mask that accepts a
 * signal every other thread blocks, started on another worker, would
 * otherwise run there with it blocked, and a signal aimed at that
 * worker's kernel thread, a timer with SIGEV_THREAD_ID, stayed pending
 * for as long as the thread did not park). A worker's kernel mask is
 * thus the target or a superset of it that some worker accepts; never
 * less than the target.
 * A handler's frame keeps the mask of the code it interrupted, which it
 * restores as it returns: the trampoline corrects it for any target
 * installed on that kernel thread meanwhile (cap__sigmask_handler_*).
 *
 * The handler mark. Every handler the trampoline runs is installed with
 * glibc's SIGCANCEL (CAP__SIG_HANDLER_MARK) in its sa_mask, which no
 * other mask of a worker holds: a kick can tell from the mask it
 * interrupted whether that code is a handler, from the kernel's delivery
 * to its sigreturn (the trampoline's own record is linked later and
 * unlinked earlier). A kick that took a handler there for user code gave
 * it the target as its whole mask, which let the handler's own signal
 * through, nested, again and again while senders kept sending, until the
 * stack ran out. The mark holds back little: nothing sends SIGCANCEL to
 * a worker, and a kernel thread of glibc's own that a handler runs on
 * (a preloaded program's) is cancelled as that handler returns. An exec
 * or spawn from a handler drops it for the new program
 * (cap__sigmask_own).
 */
#ifndef CAP_IO_SIGMASK_H
#define CAP_IO_SIGMASK_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "thread/thread.h"

struct cap__sigclass {
    _Atomic long live;           /* live threads with this mask (not the first's) */
    uint64_t mask;               /* [sigmask.c's class_lock] while live is 0 */
    struct cap__sigclass *next;  /* [class_lock] */
} __attribute__((aligned(64)));

/* Main's mask at start-up, the class of every thread until the program
 * changes one; its count is derived from cap__live_threads (below). */
extern __attribute__((visibility("hidden"))) struct cap__sigclass cap__sigclass_first;

/* Signals a thread's mask can hold: all but SIGKILL, SIGSTOP and glibc's
 * internal two, which pthread_sigmask leaves out silently. */
uint64_t cap__sigmask_holdable(void);

/* At start-up, on the initial kernel thread once the workers are made
 * (they inherited its mask): main's mask is that thread's, and so is the
 * first target. */
void cap__sigmask_init(struct cap__thread *main_thread);

/* At the start of every other worker's kernel thread: unblocks the
 * signals no kernel thread of the runtime blocks (above), which it may
 * have inherited blocked from the mask the program was started with (a
 * parent's system() blocks the kick, say). The rest of that mask is the
 * first target, as cap__sigmask_init takes it, and counts as this
 * kernel thread's installed mask until it installs one. Left blocked,
 * the kick stayed pending there and a change of the mask that blocked
 * more waited for that worker for good; a fault there killed the
 * process. */
void cap__sigmask_kthread_init(void);

/* t, being created by the running user thread (NULL: by a thread the
 * runtime does not run, whose new threads get main's first mask), takes
 * its creator's mask and counts as live (thread/thread.h,
 * cap__live_threads): returns the number of live threads with it. */
long cap__sigmask_thread_created_slow(struct cap__thread *t, struct cap__thread *creator);
static inline long cap__sigmask_thread_created(struct cap__thread *t,
                                               struct cap__thread *creator)
{
    if (creator == NULL || creator->sigclass != &cap__sigclass_first)
        return cap__sigmask_thread_created_slow(t, creator);
    t->sigclass = &cap__sigclass_first; /* counted in cap__live_threads */
    return cap__live_count(atomic_fetch_add(&cap__live_threads, 1) + 1);
}
/* The same for a t created with its own mask (a thread attribute:
 * cap_thread_attr_setsigmask), whatever its creator's; -1 when the mask's
 * record cannot be allocated (nothing counted then). */
long cap__sigmask_thread_created_with(struct cap__thread *t, uint64_t mask);
/* t (running, or never started) no longer counts as live: returns the
 * number of live threads before, t included. */
long cap__sigmask_thread_gone_slow(struct cap__thread *t, long before);
static inline long cap__sigmask_thread_gone(struct cap__thread *t)
{
    if (t->sigclass != &cap__sigclass_first)
        return cap__sigmask_thread_gone_slow(t, 0);
    long before = atomic_fetch_sub(&cap__live_threads, 1);
    /* Not the last thread with the first mask, or the last of all. */
    if (cap__live_count(before) - (before >> 32) != 1 || cap__live_count(before) == 1)
        return cap__live_count(before);
    return cap__sigmask_thread_gone_slow(t, before);
}

/* The mask of t (bit sig - 1 set: blocked). */
uint64_t cap__sigmask_of(const struct cap__thread *t);
/* Gives the running user thread t the mask `mask` (holdable bits only),
 * installing the resulting target as above before it returns. 0, or
 * ENOMEM when no class could be made (the mask is then unchanged). */
int cap__sigmask_set(struct cap__thread *t, uint64_t mask);

enum { CAP__SIG_HANDLER_MARK = 32 };

/* The mark's bit in a kernel mask's first word (above). */
static inline uint64_t cap__sigmask_mark_bit(void)
{
    return UINT64_C(1) << (CAP__SIG_HANDLER_MARK - 1);
}

/* Whether a kernel mask's first word is a handler's. */
static inline bool cap__sigmask_marked(uint64_t kernel_mask)
{
    return (kernel_mask & cap__sigmask_mark_bit()) != 0;
}

/* Kick handler (src/stack/signal.c), on a worker's kernel thread: installs
 * the latest target by editing the mask in uctx, which the kernel
 * restores as the handler returns, and reports it. The mask of user code
 * or the scheduler becomes the target; a handler's (marked) only gains
 * what the target gained: what it holds besides may be its own signal or
 * its sa_mask, and the mask it returns to is corrected as it returns. */
void cap__sigmask_kicked(void *uctx);
/* The target this kernel thread installed last (its mask outside
 * handlers, bar the signals never blocked). Around a program's handler:
 * taken as the handler starts and passed to _exit, which corrects uctx's
 * mask for a target installed in between. */
uint64_t cap__sigmask_installed(void);
void cap__sigmask_handler_exit(uint64_t entry, void *uctx);
/* A handler that waits as its thread (util/sigctx.h, cap__sig_lift), on
 * its kernel thread: _lift gives t the mask `mask` plus what the kernel
 * thread's mask (the handler's, returned) blocks, and installs the target
 * there for the threads the worker runs meanwhile; *rc 0, or ENOMEM with
 * nothing changed. _unlift_begin blocks every signal on the kernel thread
 * (the caller puts the handler's state back), and _unlift gives t `mask`
 * back and installs the handler's kernel mask plus the latest target. */
uint64_t cap__sigmask_lift(struct cap__thread *t, uint64_t mask, int *rc);
void cap__sigmask_unlift_begin(void);
void cap__sigmask_unlift(struct cap__thread *t, uint64_t mask, uint64_t handler);
/* A thread ended inside a program's handler (pthread_exit from it:
 * src/stack/signal.c): its kernel thread still blocks what the handler's
 * delivery blocked, which only the handler's return would undo. Installs
 * the latest target on this kernel thread. */
void cap__sigmask_handlers_left(void);

/* As a new user thread starts on a worker: has the latest target
 * installed if this kernel thread's is older (a kick to itself only
 * then; a load and a compare otherwise). Not on the scheduler context
 * before each thread it runs: a thread parked in a handler there (a
 * lifted one) keeps its handler's mask across the switches, which a
 * plain install dropped (io/thread_kill_handler_jumps_out deadlocked on
 * a shard lock so, sanitized). */
void cap__sigmask_catch_up(void);
/* The mask a siglongjmp restores (first word of the jmp_buf's saved
 * mask): from now on the running thread's, and the word is rewritten to
 * the kernel mask the jump must leave. Not in a handler's frame's own
 * context: the jump may come from one, so nothing here waits. */
void cap__sigmask_jump(uint64_t *saved_word);

/* Around a call that gives a new program its mask from this kernel
 * thread's (exec, posix_spawn, popen): _own installs the running user
 * thread's mask (all of it, the fault signals too) on its kernel thread
 * and returns what to pass to _back, which puts back what _own changed
 * (when the call returns: an exec that failed). In a handler, and on
 * other threads, the mask stays as it is, without the handler mark. */
enum cap__sigmask_owned {
    CAP__MASK_AS_IS,    /* nothing changed */
    CAP__MASK_OWNED,    /* the thread's own mask installed */
    CAP__MASK_UNMARKED, /* the handler mark dropped */
};
enum cap__sigmask_owned cap__sigmask_own(void);
void cap__sigmask_back(enum cap__sigmask_owned owned);

/* Sends sig to the calling kernel thread and delivers it there: the
 * handler of the program's runs (or the default action) before this
 * returns, whatever the kernel thread's mask blocks; then the mask is
 * what it was (on a worker: the latest target). Signals directed at a
 * user thread are delivered so, by that thread (io/sigdirect.h). */
void cap__sigmask_raise_here(int sig);
/* The same with the siginfo *info (rt_tgsigqueueinfo: a signal of the
 * process's own, SI_USER or SI_QUEUE, sent to the calling kernel
 * thread); 0, or the send's error number (EAGAIN: the queue is full). */
int cap__sigmask_queue_here(int sig, const siginfo_t *info);

/* In a fork's child, on its one kernel thread: the forking thread (NULL:
 * none of ours) is the only one, and its mask the target. *kernel, the
 * kernel thread's mask the fork wrapper saved (intercept/handover.c),
 * becomes the one it must have once the wrapper lets signals in again:
 * the target's (plus what a handler that forked adds; unchanged when
 * self is NULL: that kernel thread's own mask), not the
 * parent's kernel mask it saved, which lacked what threads of the
 * parent did not block (a child forked by a thread that blocks SIGUSR2,
 * its only thread then, was killed by a SIGUSR2 sent to it). */
void cap__sigmask_forked(struct cap__thread *self, sigset_t *kernel);

#endif /* CAP_IO_SIGMASK_H */
