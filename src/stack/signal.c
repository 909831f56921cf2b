/* SPDX-License-Identifier: MIT */
/*
 * Signal handlers: every handler the program installs runs through one
 * trampoline, for two reasons (and a third, small one: a SIGSEGV or
 * SIGBUS raised inside the runtime's pointer checks, arch/usercheck.h,
 * ends there and never reaches the program's handler).
 *
 * EINTR (always): around the program's handler the trampoline tells the
 * I/O layer (io/sigintr.h), which interrupts a parked blocking call of
 * some user thread as the kernel would have: cap__sig_begin before the
 * handler runs numbers the delivery, so that nothing the handler does can
 * reach the call before the interruption; cap__sig_end after it returns
 * brings the dispatch, so that the call returns EINTR after the handler
 * (sigintr.h, "Ordering"). Between the two the delivery is "open" on this
 * kernel thread: a record in the trampoline's frame, linked from
 * open_top. A jump out of the handler (longjmp.c calls
 * cap__sig_handler_jump) ends every open delivery whose frame it leaves,
 * as over but jumped, and puts cap__handler_depth back to what it was
 * outside them (before, a handler left by siglongjmp kept its kernel
 * thread "in a handler" for good: every wrapper on it then made the raw
 * system call). A jump out of every handler into another user thread's
 * frames is handed to that thread ("Jumps into another thread" below).
 *
 * Only a signal directed at the process interrupts a call. One the
 * kernel aims at the thread that caused it (a fault: SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE, SIGTRAP with a kernel si_code; SIGPIPE or SIGXFSZ from a
 * write, which the kernel sends as SI_USER from the process itself) or
 * that the process sent one of its own kernel threads (raise, tgkill:
 * SI_TKILL) is for whatever ran there, running, which no call waits in
 * (aimed_at_runner): it is not numbered. A kill() of its own process
 * with SIGPIPE or SIGXFSZ looks the same and is taken the same way.
 *
 * The program installs handlers through sigaction, signal and the older
 * names at the end (bsd_signal, sysv_signal, sigset, sigignore,
 * siginterrupt), all of which come here.
 *
 * Linked stacks (linked mode only):
 * A thread on a linked chunk may be close to the chunk's end: the kernel's
 * signal frame (a few KiB with the vector state) would not fit, and a
 * handler built with -fsplit-stack would call __morestack in the middle of
 * whatever it interrupted (perhaps __morestack itself, halfway through a
 * free list). So in linked mode the library interposes sigaction and
 * signal, and every handler the program installs
 *  - runs on the alternate signal stack of its kernel thread (SA_ONSTACK
 *    is added; every worker has one, cap__stack_kthread_init), and
 *  - runs with the stack limit at 0 (no chunk checks: the handler has the
 *    whole alternate stack, 64 KiB, and never links a chunk); the
 *    interrupted limit is put back when it returns.
 * The program's handler is called through a trampoline with the
 * arguments it expects (SA_SIGINFO or not); sigaction reports the
 * program's own handler and flags back, as if nothing were in between.
 * Outside linked mode the handler runs where the program asked, and the
 * stack limit is left alone.
 *
 * The kick signal (io/sigintr.h, CAP__SIG_KICK): once reserved, the
 * trampoline is installed for it whatever the program asks, and the table
 * holds the program's disposition, SIG_DFL and SIG_IGN included (both
 * mean "ignore" for SIGURG). Kicks are told apart by their siginfo: queued
 * by this process with kick_cookie's address as the value. A kick's
 * work here is for a worker: install the workers' signal mask
 * (io/sigmask.h), and deliver the signals sent to the user thread it
 * interrupted (io/sigdirect.h); interrupting the system call is the rest.
 *
 * Every trampoline is installed with the handler mark in its sa_mask
 * (io/sigmask.h): from the kernel's delivery to its sigreturn, the mask
 * a kick interrupts tells it that a handler runs there, also before the
 * trampoline links its record and after it unlinks it. sigaction reports
 * the program's sa_mask without it.
 *
 * Last steps (io/sigintr.h, cap__sig_last_step_arm; CAP_NETIO=uring):
 * SIG_DFL of a signal whose default action ends the process is served by
 * last_step_handler, not the trampoline; the table holds SIG_DFL, which
 * sigaction reports. The handler runs no program code and never returns:
 * the step, then the kernel's SIG_DFL back and the signal again.
 *
 * State: one table entry per signal, written by sigaction under a lock
 * and read by the trampoline (a handler is published before the kernel
 * can call the trampoline for it). fork (intercept/handover.c) holds the
 * lock across the fork: a child made while another kernel thread was
 * inside sigaction would inherit the lock held by a thread it does not
 * have, and its own sigaction (resetting handlers before exec is the
 * idiom) or its trampoline for the kick signal would spin forever.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/ownedxfer.h"
#include "arch/sigframe.h"
#include "arch/sigrestart.h"
#include "arch/syscall.h"
#include "arch/usercheck.h"
#include "io/sigchld.h"
#include "io/sigdirect.h"
#include "io/sigintr.h"
#include "io/sigmask.h"
#include "io/sigroute.h"
#include "sched/switch.h"
#include "sched/worker.h"
#include "stack/linked.h"
#include "thread/thread.h"
#include "util/asan.h"
#include "util/die.h"
#include "util/sigctx.h"
#include "util/spin.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static struct {
    void (*handler)(int);                      /* the program's, one of these two */
    void (*action)(int, siginfo_t *, void *);
    int flags;                                 /* the program's sa_flags */
} table[NSIG];

static cap__spin table_lock = CAP__SPIN_INIT;
__thread unsigned cap__handler_depth __attribute__((tls_model("initial-exec")));
__thread unsigned long cap__handler_runs __attribute__((tls_model("initial-exec")));
__thread unsigned long cap__handler_breaks __attribute__((tls_model("initial-exec")));
__thread int cap__sig_own_delivery __attribute__((tls_model("initial-exec")));
__thread int cap__sig_raising __attribute__((tls_model("initial-exec")));

/* A program handler running on this kernel thread, in the trampoline's
 * frame; the newest is open_top. Linked before the handler runs and
 * unlinked after its delivery ended, each a single store: a nested
 * handler that returns leaves the list as it found it. */
struct open_handler {
    struct open_handler *prev;
    uint64_t token;  /* its delivery (cap__sig_begin), 0 once ended */
    unsigned depth;  /* cap__handler_depth outside it */
    bool in_sched;   /* it interrupted a worker's scheduler, not a user thread */
    bool switching;  /* it interrupted the worker switching to or away from
                        `interrupted`, whose frames were not running */
    int own;         /* a signal sent to the interrupted thread, delivered by
                        it: enum cap__own_delivery (util/sigctx.h) */
    cap__thread *interrupted; /* the user thread it interrupted, if any */
    bool fault;      /* a fault of the code it interrupted (faulted) */
    unsigned char linking; /* it interrupted a change of the linked-stack
                              lists (linked.h, cap__linked_busy_now) */
    bool liftable;   /* the outermost, delivered by `interrupted` to itself
                        at a safe point outside a registered call: may wait
                        as that thread (cap__sig_lift) */
    int sig;
    void *escape[5]; /* __builtin_setjmp: back to the trampoline, as if returned */
};
static __thread struct open_handler *open_top __attribute__((tls_model("initial-exec")));
static sigaction_fn real_sigaction;
static _Atomic bool kick_reserved; /* [written under table_lock] */
static const char kick_cookie;
/* A program's CAP__SIG_KICK raised on this kernel thread by the runtime
 * (cap__sig_raise_here) and not delivered yet as the program's, and the
 * siginfo it was queued with (NULL: raised by tgkill). */
static __thread bool kick_sig_owed __attribute__((tls_model("initial-exec")));
static __thread const siginfo_t *kick_sig_owed_info __attribute__((tls_model("initial-exec")));
static __thread siginfo_t kick_sig_owed_copy __attribute__((tls_model("initial-exec")));
/* Signals whose SIG_DFL is served by last_step_handler, bit sig - 1, and
 * the step it takes (cap__sig_last_step_arm). */
static _Atomic uint64_t last_step_sigs; /* [written under table_lock] */
static void (*_Atomic last_step)(void);

static void trampoline(int sig, siginfo_t *info, void *uctx);
static void last_step_handler(int sig, siginfo_t *info, void *uctx);
static bool has_last_step(int sig);
static void last_step_after_reset(int sig, int flags);
static bool stack_holds(const cap__thread *t, const char *sp);

/* Whether the kernel's disposition act is one of ours (the trampoline,
 * or last_step_handler serving SIG_DFL): the program's is in the table. */
static bool installed_by_us(const struct sigaction *act)
{
    return (act->sa_flags & SA_SIGINFO) &&
           (act->sa_sigaction == trampoline || act->sa_sigaction == last_step_handler);
}

static sigaction_fn real(void)
{
    if (real_sigaction == NULL)
        real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    return real_sigaction;
}

static bool entry_is_function(const __typeof__(table[0]) *h)
{
    if (h->flags & SA_SIGINFO)
        return h->action != NULL;
    return h->handler != SIG_DFL && h->handler != SIG_IGN && h->handler != NULL;
}

static bool has_handler(int sig)
{
    return entry_is_function(&table[sig]);
}

static bool is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
           sig == SIGTRAP || sig == SIGSYS;
}

bool cap__sig_program_handlers(void)
{
    for (int sig = 1; sig < NSIG; sig++) {
        /* Read without the lock: a handler being installed or removed
         * right now may be seen either way, as if a moment earlier or
         * later. */
        __typeof__(table[0]) h = table[sig];
        if (!is_fault(sig) && entry_is_function(&h))
            return true;
    }
    return false;
}

enum cap__sig_disp cap__sig_disposition(int sig, int *flags)
{
    __typeof__(table[0]) h = table[sig]; /* racy, as above */
    *flags = h.flags;
    if (entry_is_function(&h))
        return CAP__DISP_HANDLER;
    /* The kernel's word: a disposition inherited through exec (SIG_IGN
     * under nohup) never passed through the table. */
    struct sigaction cur;
    void (*disp)(int) = h.handler;
    if (real() != NULL && real()(sig, NULL, &cur) == 0 &&
        !installed_by_us(&cur))
        disp = cur.sa_handler;
    if (disp == SIG_IGN)
        return CAP__DISP_IGNORE;
    switch (sig) {
    case SIGCHLD:
    case SIGCONT: /* continues a stopped process: this one runs */
    case SIGURG:
    case SIGWINCH:
        return CAP__DISP_IGNORE;
    default:
        return CAP__DISP_DEFAULT;
    }
}

/* The kick signal's entry for one delivery, applying the program's
 * SA_RESETHAND (kept from the kernel) under the table lock: two
 * deliveries at once on different kernel threads run the handler once,
 * as the kernel's own reset would let them. The lock's holders block
 * every signal, so taking it here cannot deadlock with this thread. */
static bool take_kick_entry(int sig, __typeof__(table[0]) *h)
{
    cap__spin_lock(&table_lock);
    *h = table[sig];
    bool run = has_handler(sig);
    if (run && (h->flags & SA_RESETHAND)) {
        table[sig].flags &= ~SA_SIGINFO;
        table[sig].handler = SIG_DFL;
    }
    cap__spin_unlock(&table_lock);
    return run;
}

/* sig on this kernel thread: tgkill, or queued with info. */
static long raise_on_self(int sig, const siginfo_t *info)
{
    return info == NULL ? syscall(SYS_tgkill, getpid(), gettid(), sig)
                        : syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, info);
}

long cap__sig_raise_here(int sig, const siginfo_t *info)
{
    if (sig == CAP__SIG_KICK && atomic_load_explicit(&kick_reserved, memory_order_relaxed)) {
        if (info != NULL)
            kick_sig_owed_copy = *info;
        kick_sig_owed_info = info != NULL ? &kick_sig_owed_copy : NULL;
        kick_sig_owed = true;
    }
    return raise_on_self(sig, info);
}

static bool is_kick(int sig, const siginfo_t *info)
{
    return sig == CAP__SIG_KICK && info != NULL && info->si_code == SI_QUEUE &&
           info->si_pid == getpid() && info->si_value.sival_ptr == (void *)&kick_cookie;
}

/* The child a SIGCHLD from the kernel says ended, else 0 (io/sigchld.h). */
static pid_t ended_child(int sig, const siginfo_t *info)
{
    return sig == SIGCHLD && info != NULL ? cap__sigchld_ended(info) : 0;
}

/* A fault of the instruction it interrupted: the handler's return runs
 * that instruction again. */
static bool faulted(int sig, const siginfo_t *info)
{
    if (info == NULL || info->si_code <= 0) /* the kernel's own codes only */
        return false;
    switch (sig) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGTRAP:
        return true;
    default:
        return false;
    }
}

/* See the top: a signal for the thread that ran on this kernel thread. */
static bool aimed_at_runner(int sig, const siginfo_t *info)
{
    if (info == NULL)
        return false;
    if (faulted(sig, info))
        return true;
    switch (sig) {
    case SIGPIPE:
    case SIGXFSZ:
        if (info->si_code == SI_USER && info->si_pid == getpid())
            return true;
        break;
    default:
        break;
    }
    return info->si_code == SI_TKILL && info->si_pid == getpid();
}

/* A process-directed signal about to run its handler on a worker whose
 * running user thread blocks it, or that runs no thread (its scheduler:
 * every thread there is parked, and POSIX runs a handler on a thread):
 * kept for a thread that accepts it (io/sigroute.h), and true; the
 * handler does not run here.
 * Not a child's SIGCHLD from the kernel that reached the scheduler: its
 * handler runs there, so that its dispatch can skip the calls that began
 * after a wait returned that child (io/sigchld.h); a routed delivery
 * interrupts whatever call its thread is in when it arrives. */
static bool routed_away(int sig, const siginfo_t *info, int flags)
{
    if (info == NULL || (flags & SA_RESETHAND) || aimed_at_runner(sig, info))
        return false;
    cap__worker *w = cap__worker_self();
    if (w == NULL)
        return false;
    cap__thread *t = w->current;
    if (t == NULL && ended_child(sig, info) != 0)
        return false;
    if (t != NULL &&
        (t->sigclass == NULL || !(cap__sigmask_of(t) & (UINT64_C(1) << (sig - 1)))))
        return false;
    return cap__sig_route_away(sig, info);
}

static void trampoline(int sig, siginfo_t *info, void *uctx)
{
    /* A fault inside the runtime's pointer checks is theirs alone: not
     * the program's handler's, and no signal that interrupts a call. */
    if ((sig == SIGSEGV || sig == SIGBUS) && cap__usercheck_fixup(uctx))
        return;
    /* An owned pipe's test and call, interrupted: made again as this
     * returns, after whatever the handler gives back (arch/ownedxfer.h). */
    cap__arch_owned_xfer_rewind(uctx);
    __typeof__(table[0]) h = table[sig];
    if (sig == CAP__SIG_KICK && atomic_load_explicit(&kick_reserved, memory_order_relaxed)) {
        if (is_kick(sig, info)) {
            cap__worker *kicked = cap__worker_self();
            if (kicked != NULL) /* its task work ran on the way here */
                atomic_fetch_add_explicit(&kicked->kicks_taken, 1, memory_order_release);
            /* Interrupting the system call was the point, a change of the
             * workers' signal mask (io/sigmask.h), or a signal sent to
             * the user thread it interrupted (io/sigdirect.h; not inside
             * a handler, whose sa_mask the signal must wait for). */
            cap__sigmask_kicked(uctx);
            if (open_top == NULL)
                cap__sig_pending_kicked(uctx);
            /* The program's signal of the same number, raised here while
             * this kick was pending, merged into it (one instance of a
             * standard signal): raised again, it arrives as this handler
             * returns (see cap__sig_raise_here). */
            if (kick_sig_owed) {
                int saved = errno;
                raise_on_self(CAP__SIG_KICK, kick_sig_owed_info);
                errno = saved;
            }
            /* A pool thread's call must end (io/offload.c); a worker's
             * goes on (SA_RESTART, arch/sigrestart.h). */
            if (cap__worker_self() == NULL)
                cap__arch_syscall_to_eintr(uctx);
            return;
        }
        kick_sig_owed = false; /* whatever raised it: delivered now */
        if (!take_kick_entry(sig, &h))
            return;
    }
    if (!entry_is_function(&h))
        return; /* set back to SIG_DFL/SIG_IGN as this delivery began */
    if ((h.flags & SA_RESETHAND) && has_last_step(sig))
        last_step_after_reset(sig, h.flags);
    uint64_t mask_entry = cap__sigmask_installed();
    if (routed_away(sig, info, h.flags)) {
        cap__sigmask_handler_exit(mask_entry, uctx); /* a kick nested meanwhile */
        return;
    }
    bool linked = cap__linked_cfg.enabled;
    uintptr_t limit = 0;
    if (linked) {
        __asm__ volatile("movq %%fs:0x70, %0" : "=r"(limit));
        __asm__ volatile("movq %0, %%fs:0x70" : : "r"((uintptr_t)0) : "memory");
    }
    cap__handler_runs++;
    if (!(h.flags & SA_RESTART))
        cap__handler_breaks++;
    cap__worker *w = cap__worker_self();
    cap__thread *current = w != NULL ? w->current : NULL;
    struct open_handler o = { .prev = open_top,
                              .depth = cap__handler_depth,
                              .in_sched = w != NULL && current == NULL,
                              .switching = current != NULL && open_top == NULL &&
                                           !cap__worker_runs_frames_of(
                                               w, current, cap__arch_interrupted_sp(uctx)),
                              .own = aimed_at_runner(sig, info) ? cap__sig_own_delivery
                                                                : CAP__OWN_FREE,
                              .interrupted = current,
                              .fault = faulted(sig, info),
                              .linking = cap__linked_busy_now(),
                              .sig = sig };
    /* Delivered where its thread expected it, at a safe point (its own
     * delivery, io/sigdirect.c, or its kill of its own process), neither
     * in another handler nor between two parks of a registered call. */
    o.liftable = current != NULL && o.depth == 0 && open_top == NULL && !o.switching &&
                 cap__sig_raising == sig && o.own != CAP__OWN_IN_CALL &&
                 __atomic_load_n(&current->sig_call, __ATOMIC_RELAXED) == NULL;
    cap__sig_raising = 0;
    cap__sig_own_delivery = CAP__OWN_FREE; /* not for a nested handler */
    /* A jump handed over (hand_over, hand_to) comes back here, as if the
     * handler had returned. Set before the record is linked: a handler
     * nested in the lines below may hand one over through this record as
     * soon as it is linked (before, a nested handler there escaped to an
     * empty buffer: address 0). */
    if (__builtin_setjmp(o.escape) == 0) {
        open_top = &o;
        atomic_signal_fence(memory_order_seq_cst); /* linked before it counts */
        /* The mark is the interrupted code's (linked.h), read into the
         * record above and cleared for the handler only now: a handler
         * nested before this point finds it still set and no record of
         * ours, so it takes itself for the one that interrupted the
         * change, and puts the mark back as it found it when it returns. */
        cap__linked_busy_swap(0);
        cap__handler_depth = o.depth + 1;
        if (w != NULL)
            atomic_store(&w->handlers, o.depth + 1);
        /* Numbered before the handler runs (io/sigintr.h, "Ordering"),
         * with the flags read as this delivery began. */
        o.token = aimed_at_runner(sig, info) ? 0
                                             : cap__sig_begin(sig, h.flags, ended_child(sig, info));
        atomic_signal_fence(memory_order_seq_cst);
        /* One routed to this thread: the sender's siginfo, not the
         * tgkill's (io/sigroute.h). */
        if (current != NULL && info != NULL && info->si_code == SI_TKILL &&
            aimed_at_runner(sig, info))
            cap__sig_route_claim(current, sig, info);
        if (h.flags & SA_SIGINFO)
            h.action(sig, info, uctx);
        else
            h.handler(sig);
    }
    cap__handler_depth = o.depth;
    if (w != NULL)
        atomic_store(&w->handlers, o.depth); /* before the pending check below */
    if (linked)
        __asm__ volatile("movq %0, %%fs:0x70" : : "r"(limit) : "memory");
    cap__linked_busy_swap(o.linking);
    /* The kick signal is restarted by the kernel: the program's handler
     * without SA_RESTART interrupts the call here. */
    if (sig == CAP__SIG_KICK && !(h.flags & SA_RESTART) &&
        atomic_load_explicit(&kick_reserved, memory_order_relaxed))
        cap__arch_syscall_to_eintr(uctx);
    /* Ended, then unlinked: a nested handler's jump in between ends it
     * again, which cap__sig_end ignores. */
    cap__sig_end(o.token, false);
    atomic_signal_fence(memory_order_seq_cst);
    o.token = 0;
    open_top = o.prev;
    /* The mask it returns to, for a target a kick installed meanwhile. */
    cap__sigmask_handler_exit(mask_entry, uctx);
    /* The outermost handler that interrupted a user thread outside the
     * runtime's own deliveries: signals sent to that thread meanwhile
     * (its sa_mask held them, and the sender did not wait: sigdirect.c)
     * are delivered as it returns to the thread. */
    if (w != NULL && o.depth == 0 && !o.in_sched && o.own == CAP__OWN_FREE)
        cap__sig_pending_kicked(uctx);
}

/* ---- handlers that wait as their thread --------------------------------
 *
 * (util/sigctx.h.) While lifted, the handler's record is off this kernel
 * thread's list and its depth off the counts, so the worker's other
 * threads, and handlers that interrupt them, see a kernel thread in no
 * handler; the record stays in the trampoline's frame on the lifted
 * thread's stack, and the lift record on the same stack keeps what to
 * put back. The thread stays on its worker (kernel_bound) because the
 * kernel's frame of the delivery is this kernel thread's: its sigreturn
 * restores the mask saved there. */

bool cap__sig_lift(struct cap__sig_lift *l)
{
    struct open_handler *o = open_top; /* liftable: the only one open */
    if (o == NULL || !o->liftable)
        return false;
    cap__worker *w = cap__worker_self();
    cap__thread *t = o->interrupted;
    if (w == NULL || w->current != t || !stack_holds(t, __builtin_frame_address(0)))
        return false; /* on an alternate signal stack: this kernel thread's */
    int rc;
    l->mask = cap__sigmask_of(t);
    l->kernel = cap__sigmask_lift(t, l->mask, &rc);
    if (rc != 0)
        return false;
    l->top = o;
    t->kernel_bound++;
    open_top = NULL;
    atomic_signal_fence(memory_order_seq_cst);
    cap__handler_depth = 0;
    atomic_store(&w->handlers, 0);
    return true;
}

void cap__sig_unlift(struct cap__sig_lift *l)
{
    cap__sigmask_unlift_begin(); /* nothing lands until the handler's mask is back */
    cap__thread *t = cap__current();
    cap__worker *w = cap__worker_self();
    struct open_handler *o = l->top;
    t->kernel_bound--;
    cap__handler_depth = o->depth + 1;
    atomic_store(&w->handlers, o->depth + 1);
    atomic_signal_fence(memory_order_seq_cst);
    open_top = o;
    cap__sigmask_unlift(t, l->mask, l->kernel);
}

/* ---- jumps into another thread ---------------------------------------
 *
 * A handler runs on whatever its kernel thread was running: a user
 * thread, or the worker's scheduler when every thread there was parked
 * (only a one-shot handler, a child's SIGCHLD, or with every route slot
 * taken: routed_away keeps the others for a thread).
 * A jump out of it into a user thread parked in a blocking call (bash's
 * `wait` builtin siglongjmps out of a trapped signal's handler into the
 * frames of the wait) cannot be made from here: it would abandon the
 * scheduler's context, or the interrupted thread's, and the call's wait
 * records. So the jump is handed to that thread: the buffer is copied to
 * a record the thread points to (jump_due), the trampoline is re-entered
 * as if the handler had returned (its delivery then ends as usual), and
 * the delivery interrupts that thread's call whatever the flags say
 * (cap__sig_force). The call fails with EINTR, cleaning up as any
 * interrupted call does, and its wrapper, as it returns, makes the jump
 * on the thread's own stack (cap__sig_take_jump). A thread woken from
 * such a call and not yet back makes it as the call returns, whatever
 * the result (Linux runs the handler as the system call returns), and so
 * does one in a wait no signal interrupts (a disk read) once it ends. A
 * thread that runs meanwhile (on another worker), or waits outside such a
 * call (a mutex, a join), or no free record (HANDED_JUMPS jumps pending)
 * stops the program with a message (README, Limits).
 *
 * The same record serves a jump into the thread the handler interrupted
 * while that thread was inside an async-signal-safe call's runtime code
 * (io/sigsafe.h): handed to it, made as the call returns. While one is
 * handed to a thread and not made, any other jump into it is dropped
 * (the first, made first, lands where the program asked first); a jump
 * made at once (the thread outside every such call) drops one still
 * handed, which a handler between a call's end and its look at the
 * record left.
 */

struct cap__handed_jump {
    _Atomic int used;
    struct __jmp_buf_tag env;
    int val;
    bool exits;     /* not a jump: pthread_exit(retval) from the handler */
    void *retval;
    int sig;        /* the handler's */
    uint64_t token; /* its delivery */
};

/* Each jump waits in one until its thread makes it: a thread's own
 * (io/sigdirect.h) too, so room for many threads abandoning calls at once. */
enum { HANDED_JUMPS = 256 };
static struct cap__handed_jump handed[HANDED_JUMPS];

struct owner_search {
    const char *sp;
    cap__thread *found;
};

static bool stack_holds(const cap__thread *t, const char *sp)
{
    return sp >= (const char *)t->stack.lo && sp < (const char *)t->stack.hi;
}

static void find_owner(cap__thread *t, void *arg)
{
    struct owner_search *s = arg;
    if (stack_holds(t, s->sp))
        s->found = t;
    /* Linked stacks: a frame on a chunk the thread linked. Its link list
     * is read only while it does not run (it could change under us). */
    else if (cap__linked_cfg.enabled && atomic_load(&t->state) != CAP__T_RUNNING &&
             cap__linked_holds(t->stack.slot, s->sp))
        s->found = t;
}

/* Whether sp lies on t's stack (not known in linked mode, where a stack
 * is chunks: taken as yes). */
static bool on_stack_of(const cap__thread *t, const char *sp)
{
    return cap__linked_cfg.enabled || stack_holds(t, sp);
}

/* Whether t is parked in, or woken from and not yet back from, a wait
 * of a call whose return makes a handed jump (cap__ic_ret, sleeps,
 * semaphores). A running thread is not: it may have left the frames the
 * handler meant (the handler ran beside it, not in it, reading state it
 * was changing). */
static bool in_a_call(const cap__thread *t)
{
    int state = atomic_load(&t->state);
    if (state != CAP__T_PARKED && state != CAP__T_RUNNABLE)
        return false;
    /* Any wait inside one: made as it returns (io/sigsafe.h). */
    if (__atomic_load_n(&t->in_sigsafe, __ATOMIC_RELAXED) != 0)
        return true;
    switch (t->reason) {
    case CAP__PARK_SLEEP:
    case CAP__PARK_SEM:
    case CAP__PARK_IO_READ:
    case CAP__PARK_IO_WRITE:
    case CAP__PARK_IO_DISK:
    case CAP__PARK_OFFLOAD:
        return true;
    default:
        return false;
    }
}

static _Noreturn void refuse(const char *why)
{
    cap__die("a signal handler jumped (longjmp) into the frames of another user "
             "thread than the one it interrupted, and not into a thread the "
             "runtime could hand the jump to (%s): not supported (README, Limits)\n",
             why);
}

/* What a handed record makes: a jump to env with val, or (env NULL) the
 * thread's exit with retval. */
struct handed_act {
    struct __jmp_buf_tag *env;
    int val;
    void *retval;
};

/* Ends the open handler o, the newest, as left by a jump. */
static void leave_open(struct open_handler *o)
{
    uint64_t token = o->token;
    o->token = 0;
    /* The depth outside it, then unlinked (as the trampoline does): a
     * handler nested in between records a depth that matches its prev.
     * The other order let one record depth 1 with no handler outside
     * it, and its jump left the kernel thread "in a handler" (and, under
     * linked stacks, the limit at 0). */
    cap__handler_depth = o->depth;
    cap__worker *w = cap__worker_self();
    if (w != NULL)
        atomic_store(&w->handlers, o->depth);
    atomic_signal_fence(memory_order_seq_cst);
    open_top = o->prev;
    cap__sig_end(token, true);
}

/* Records the act for t (its record and jump_due), then leaves the
 * handler as if it had returned. */
static _Noreturn void hand_to(cap__thread *t, struct open_handler *o, struct handed_act act);

/* Drops the jump handed to t and not made (see the top of this part). */
static void drop_handed(cap__thread *t)
{
    struct cap__handed_jump *j = atomic_exchange(&t->jump_due, NULL);
    if (j == NULL)
        return;
    atomic_store(&j->used, 0);
    atomic_fetch_sub(&cap__sig_jumps_pending, 1);
}

/* Leaves the handler as if it had returned. */
static _Noreturn void escape(struct open_handler *o)
{
    cap__asan_leaving_frames(); /* the handler's frames are left */
    __builtin_longjmp(o->escape, 1);
}

static _Noreturn void hand_over(struct open_handler *o, struct __jmp_buf_tag *env, int val,
                                const char *to)
{
    struct owner_search s = { .sp = to };
    cap__thread_foreach(find_owner, &s); /* reads only: fine in a handler */
    cap__thread *t = s.found;
    if (t == NULL)
        refuse("no user thread's stack holds the target");
    if (t == o->interrupted || o->token == 0)
        refuse("the thread it interrupted, on another stack");
    if (atomic_load(&t->jump_due) != NULL)
        escape(o); /* one is handed already: that one is made */
    /* Still "running" on this worker, whose scheduler the handler
     * interrupted: t is switching away (its state is set once the switch
     * is over), so its frames are saved. Handed if it is inside a call
     * that makes handed jumps (the count: its park reason may be an
     * earlier wait's). */
    bool leaving_here = o->in_sched && atomic_load(&t->state) == CAP__T_RUNNING &&
                        t->worker == cap__worker_self() &&
                        __atomic_load_n(&t->in_sigsafe, __ATOMIC_RELAXED) != 0;
    if (!in_a_call(t) && !leaving_here)
        refuse(atomic_load(&t->state) == CAP__T_RUNNING ? "it runs on another worker"
                                                        : "it waits outside a blocking call");
    hand_to(t, o, (struct handed_act){ .env = env, .val = val });
}

static _Noreturn void hand_to(cap__thread *t, struct open_handler *o, struct handed_act act)
{
    struct cap__handed_jump *j = NULL;
    for (int i = 0; i < HANDED_JUMPS && j == NULL; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&handed[i].used, &free_slot, 1))
            j = &handed[i];
    }
    if (j == NULL)
        cap__die("more than %d jumps (longjmp) out of signal handlers wait to be "
                 "made by their threads at once: not supported\n",
                 HANDED_JUMPS);
    j->exits = act.env == NULL;
    if (!j->exits)
        memcpy(&j->env, act.env, sizeof j->env);
    else
        j->env.__mask_was_saved = 0; /* holds no signal back (cap__sig_jump_holds) */
    j->val = act.val;
    j->retval = act.retval;
    j->sig = o->sig;
    j->token = o->token;
    atomic_fetch_add(&cap__sig_jumps_pending, 1);
    struct cap__handed_jump *none = NULL;
    /* Release: the record before t sees it. A handler on another kernel
     * thread that handed one first wins; this one is dropped. An exit
     * wins over a jump: the jump is dropped instead. */
    while (!atomic_compare_exchange_strong(&t->jump_due, &none, j)) {
        if (j->exits) {
            drop_handed(t);
            none = NULL;
            continue;
        }
        atomic_store(&j->used, 0);
        atomic_fetch_sub(&cap__sig_jumps_pending, 1);
        escape(o);
    }
    if (o->token != 0) /* else t itself ran the handler, inside its call */
        cap__sig_force(o->token, t);
    escape(o);
}

/* A jump (or exit) out of every handler, o the outermost, into the
 * thread o interrupted, o->interrupted: handed to that thread (does not
 * return) where it cannot be made at once, and refused where it cannot
 * be made at all; returns when it is made now.
 *  - The worker was switching to or away from the thread: its frames
 *    were not running, so nothing is left by the act; handed if the
 *    thread is inside an async-signal-safe call (only the count says
 *    so: its park reason may be a past wait's while it yields).
 *  - A signal it delivered to itself inside a call registered for
 *    signals, whose records are linked on the frames the act would leave
 *    (io/sigdirect.h); any signal that found it inside an
 *    async-signal-safe call's runtime code (io/sigsafe.h); or one that
 *    found it changing its chunk lists (linked.h): made as the call or
 *    the change ends. Not a fault's: its handler's return would fault
 *    again (and one inside a chunk change is the runtime's own, or
 *    memory ran out: the act now would leave the lists torn).
 *  - In a wait that signals do not interrupt (a mutex, condition
 *    variable, join, file read): its records would be abandoned. */
static void hand_if_held(struct open_handler *o, struct handed_act act)
{
    cap__thread *t = o->interrupted;
    const char *what = act.env != NULL ? "jumped (longjmp)" : "ended its thread (pthread_exit)";
    atomic_signal_fence(memory_order_seq_cst);
    bool in_sigsafe = __atomic_load_n(&t->in_sigsafe, __ATOMIC_RELAXED) != 0;
    if (o->fault && (o->switching || o->linking))
        cap__die("a signal handler %s out of a fault (signal %d) raised while its "
                 "worker was switching threads or the thread was linking or unlinking "
                 "a stack chunk: not supported\n",
                 what, o->sig);
    if (o->switching && !in_sigsafe)
        cap__die("a signal handler that interrupted its worker switching threads %s "
                 "into a thread that was not inside an async-signal-safe call: not "
                 "supported (README, Limits)\n",
                 what);
    if (!o->fault && (o->switching || o->own == CAP__OWN_IN_CALL || in_sigsafe || o->linking)) {
        /* One handed already is made; an exit replaces it (hand_to). */
        if (act.env != NULL && atomic_load(&t->jump_due) != NULL)
            escape(o);
        hand_to(t, o, act);
    }
    if (o->own == CAP__OWN_NO_JUMP)
        cap__die("the handler of a signal sent to a thread (pthread_kill, raise) %s "
                 "out of a wait that signals do not interrupt (a mutex, condition "
                 "variable, join or file read): not supported "
                 "(docs/pthread-compat.md, Signals)\n",
                 what);
}

void cap__sig_handler_jump(struct __jmp_buf_tag *env, int val, const void *target)
{
    /* The handler's frames lie between here and its record (on one stack:
     * the thread's or the alternate one): a jump to a frame in that range
     * stays inside the handler; any other target leaves it. */
    const char *here = __builtin_frame_address(0), *to = target;
    struct open_handler *o;
    while ((o = open_top) != NULL && !(to >= here && to < (const char *)o)) {
        /* Out of every handler, into a frame that is not the interrupted
         * code's: the scheduler's sets no jump buffers. */
        if (o->prev == NULL &&
            (o->in_sched || (o->interrupted != NULL && !on_stack_of(o->interrupted, to))))
            hand_over(o, env, val, to);
        cap__thread *t = o->prev == NULL ? o->interrupted : NULL;
        if (t != NULL)
            hand_if_held(o, (struct handed_act){ .env = env, .val = val });
        /* Made now: one handed to the thread before is dropped (a handler
         * that came as its call ended, between the count and the look).
         * And the jump leaves every async-signal-safe call the thread was
         * inside (a fault's, made at once from inside one): a count left
         * standing would hand over every later jump of the thread, made
         * at its next call instead of now. */
        if (t != NULL && o->own == CAP__OWN_FREE)
            drop_handed(t);
        if (t != NULL)
            t->in_sigsafe = 0;
        leave_open(o);
    }
}

/* ---- exits out of handlers -------------------------------------------
 *
 * A handler may end the thread it interrupted: pthread_exit, or a
 * cancellation acted on in it (glibc unwinds the thread from the
 * handler). The exit leaves every handler open on the kernel thread, as
 * a jump out of them does, so that the kernel thread is no longer "in" a
 * handler for the threads it runs next, and its mask is the workers'
 * again (the kernel set the handler's; only a sigreturn would undo it).
 * Where a jump out of the handler would be handed to the thread (inside
 * a call registered for signals, or inside an async-signal-safe call's
 * runtime code), so is the exit: made as the call returns, once the
 * call's records are gone from the frames the exit abandons. Elsewhere
 * the exit goes on at once, on the handler's frames (in linked mode that
 * is the alternate signal stack, with no chunk checks: the cleanup
 * handlers and key destructors run there).
 */
void cap__sig_handler_exit(cap__thread *self, void *retval)
{
    struct open_handler *o;
    while ((o = open_top) != NULL) {
        if (o->prev == NULL && (o->in_sched || o->interrupted != self))
            cap__die("a signal handler that did not interrupt the calling thread ended "
                     "it (pthread_exit): not supported\n");
        if (o->prev == NULL)
            hand_if_held(o, (struct handed_act){ .retval = retval });
        leave_open(o);
    }
    cap__sigmask_handlers_left();
}

uint64_t cap__sig_jump_holds(cap__thread *t)
{
    struct cap__handed_jump *j = atomic_load(&t->jump_due);
    if (__builtin_expect(j == NULL, 1) || !j->env.__mask_was_saved)
        return 0;
    uint64_t m;
    memcpy(&m, &j->env.__saved_mask, sizeof m); /* the kernel's layout: bit sig-1 */
    return m;
}

void cap__sig_jump_drop(cap__thread *t)
{
    drop_handed(t);
}

void cap__sig_jumps_forked(cap__thread *self)
{
    /* The child runs only self, and no handler ran in it: a jump handed
     * to self in the parent (its handler interrupted the fork) is the
     * parent's to make, and the other threads' records are no one's. */
    if (self != NULL)
        atomic_store(&self->jump_due, NULL);
    for (int i = 0; i < HANDED_JUMPS; i++)
        atomic_store(&handed[i].used, 0);
    atomic_store(&cap__sig_jumps_pending, 0);
    /* A raise the fork interrupted was the parent's: a child starts with
     * no signal pending. */
    kick_sig_owed = false;
}

int cap__sig_jump_signal(cap__thread *t, uint64_t *token)
{
    struct cap__handed_jump *j = atomic_load(&t->jump_due);
    if (j == NULL)
        return 0;
    *token = j->token;
    return j->sig;
}

_Atomic int cap__sig_jumps_pending;

void cap__sig_take_jump_slow(void)
{
    cap__thread *self = cap__current();
    if (self == NULL || atomic_load_explicit(&self->jump_due, memory_order_relaxed) == NULL ||
        cap__in_signal_handler())
        return;
    /* With every signal of this kernel thread blocked, so that no handler
     * sees the record taken but the thread still inside its calls (it
     * would hand over a jump that no one then makes) or the reverse. */
    uint64_t all = ~(uint64_t)0, saved; /* the kernel's sigset: 64 bits */
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, sizeof saved);
    struct cap__handed_jump *j = atomic_exchange(&self->jump_due, NULL);
    struct __jmp_buf_tag env;
    int val = 0;
    bool exits = false;
    void *retval = NULL;
    if (j != NULL) {
        memcpy(&env, &j->env, sizeof env);
        val = j->val;
        exits = j->exits;
        retval = j->retval;
        atomic_store(&j->used, 0);
        atomic_fetch_sub(&cap__sig_jumps_pending, 1);
        self->in_sigsafe = 0; /* the jump leaves every call it is inside */
    }
    atomic_signal_fence(memory_order_seq_cst);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, sizeof saved);
    if (j != NULL && exits)
        cap_thread_exit(retval); /* the handler's, made outside it */
    if (j != NULL) /* a handler that came since jumped at once, not here */
        cap__linked_jump_now(&env, val);
}

/* The flags the kernel gets for the trampoline in place of the program's. */
static int kernel_flags(int sig, int flags)
{
    flags |= SA_SIGINFO | (cap__linked_cfg.enabled ? SA_ONSTACK : 0);
    if (sig == CAP__SIG_KICK && atomic_load_explicit(&kick_reserved, memory_order_relaxed))
        flags = (flags | SA_RESTART) & ~SA_RESETHAND;
    return flags;
}

/* The default action of these is to end the process without a core
 * dump (signal(7)); SIGKILL cannot be caught. */
static bool ends_process(int sig)
{
    switch (sig) {
    case SIGHUP:
    case SIGINT:
    case SIGPIPE:
    case SIGALRM:
    case SIGTERM:
    case SIGUSR1:
    case SIGUSR2:
    case SIGIO:
    case SIGPROF:
    case SIGVTALRM:
    case SIGSTKFLT:
    case SIGPWR:
        return true;
    default: /* glibc keeps the first real-time signals below SIGRTMIN */
        return sig >= SIGRTMIN && sig <= SIGRTMAX;
    }
}

static bool has_last_step(int sig)
{
    return atomic_load_explicit(&last_step_sigs, memory_order_relaxed) & (UINT64_C(1) << (sig - 1));
}

/* The kernel's flags for last_step_handler in place of SIG_DFL's. Every
 * signal is blocked while it runs (its sa_mask is the program's, which
 * sigaction reports back), by the handler itself. */
static int last_step_flags(int flags)
{
    return (flags & ~(SA_RESETHAND | SA_NODEFER)) | SA_SIGINFO | SA_ONSTACK;
}

/* The handler mark in a trampoline's sa_mask (io/sigmask.h); glibc's
 * sigaddset refuses its internal signals, so the word is edited. */
static void mark(struct sigaction *act)
{
    uint64_t word;
    memcpy(&word, &act->sa_mask, sizeof word);
    word |= cap__sigmask_mark_bit();
    memcpy(&act->sa_mask, &word, sizeof word);
}

static void unmark(struct sigaction *act)
{
    uint64_t word;
    memcpy(&word, &act->sa_mask, sizeof word);
    word &= ~cap__sigmask_mark_bit();
    memcpy(&act->sa_mask, &word, sizeof word);
}

static bool is_function(const struct sigaction *act)
{
    if (act->sa_flags & SA_SIGINFO)
        return act->sa_sigaction != NULL;
    return act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN &&
           act->sa_handler != SIG_ERR;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn fn = real();
    if (fn == NULL) {
        errno = ENOSYS;
        return -1;
    }
    if (sig <= 0 || sig >= NSIG)
        return fn(sig, act, old);

    /* Before the kernel can run a handler function of the program's, the
     * I/O layer's parked calls must be reachable by its deliveries
     * (io/sigintr.h). Once per process; not under the table lock. */
    if (act != NULL && is_function(act) &&
        !((act->sa_flags & SA_SIGINFO) && act->sa_sigaction == cap__stack_on_fault))
        cap__sig_handler_coming();

    /* A handler may call sigaction itself (re-arming with signal() is an
     * old idiom): with signals blocked while this kernel thread holds the
     * table lock, it cannot interrupt the holder and spin on the lock. */
    sigset_t all, saved;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, _NSIG / 8);
    cap__spin_lock(&table_lock);
    struct sigaction mine, prev;
    const struct sigaction *use = act;
    __typeof__(table[0]) before = table[sig];
    bool reserved = sig == CAP__SIG_KICK && atomic_load(&kick_reserved);
    bool hidden = false; /* SIG_DFL, served by last_step_handler */
    if (act != NULL && (reserved || is_function(act))) {
        mine = *act;
        mine.sa_flags = kernel_flags(sig, act->sa_flags);
        mine.sa_sigaction = trampoline;
        mark(&mine);
        table[sig].handler = act->sa_handler;
        table[sig].action = act->sa_sigaction;
        table[sig].flags = act->sa_flags;
        use = &mine;
    } else if (act != NULL && act->sa_handler == SIG_DFL && has_last_step(sig)) {
        mine = *act;
        mine.sa_flags = last_step_flags(act->sa_flags);
        mine.sa_sigaction = last_step_handler;
        use = &mine;
        hidden = true;
    }
    int rc = fn(sig, use, &prev);
    if (rc != 0) {
        table[sig] = before;
    } else if ((use == act || hidden) && act != NULL) {
        /* SIG_DFL or SIG_IGN, recorded once the kernel has it: the
         * trampoline never calls it, cap__sig_program_handlers sees it. */
        table[sig].handler = act->sa_handler;
        table[sig].action = NULL;
        table[sig].flags = act->sa_flags & ~SA_SIGINFO;
    }
    if (rc == 0 && prev.sa_handler == SIG_DFL && entry_is_function(&before) &&
        (before.flags & SA_RESETHAND)) {
        /* The kernel reset the program's one-shot handler at a delivery:
         * it keeps the flags the trampoline was installed with. Report the
         * program's (glibc's sigaction shows no SA_SIGINFO there), and
         * forget the handler if this call installs nothing. */
        prev.sa_flags = (prev.sa_flags & ~SA_SIGINFO) | (before.flags & SA_SIGINFO);
        if (act == NULL) {
            table[sig].handler = SIG_DFL;
            table[sig].action = NULL;
            table[sig].flags = prev.sa_flags & ~SA_SIGINFO;
        }
    }
    if (rc == 0 && old != NULL) {
        *old = prev;
        if (installed_by_us(&prev)) {
            /* Report what the program had installed, not ours. */
            unmark(old);
            old->sa_flags = before.flags;
            if (before.flags & SA_SIGINFO)
                old->sa_sigaction = before.action;
            else
                old->sa_handler = before.handler;
        }
    }
    cap__spin_unlock(&table_lock);
    int saved_errno = errno;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
    errno = saved_errno;
    return rc;
}

void cap__sig_kick_reserve(void)
{
    sigaction_fn fn = real();
    if (fn == NULL || atomic_load(&kick_reserved))
        return;
    sigset_t all, saved;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, _NSIG / 8);
    cap__spin_lock(&table_lock);
    struct sigaction cur;
    if (!atomic_load(&kick_reserved) && fn(CAP__SIG_KICK, NULL, &cur) == 0) {
        int sig = CAP__SIG_KICK;
        if (!((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == trampoline)) {
            /* Not ours: whatever is installed is the program's. */
            table[sig].flags = cur.sa_flags;
            table[sig].handler = cur.sa_handler;
            table[sig].action = cur.sa_sigaction;
        }
        atomic_store(&kick_reserved, true);
        struct sigaction mine = cur;
        mine.sa_flags = kernel_flags(sig, table[sig].flags);
        mine.sa_sigaction = trampoline;
        mark(&mine);
        if (fn(sig, &mine, NULL) != 0)
            atomic_store(&kick_reserved, false);
    }
    cap__spin_unlock(&table_lock);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
}

/* A signal at SIG_DFL that ends the process (see cap__sig_last_step_arm):
 * the step first, with every other signal held off, then the kernel's
 * SIG_DFL back and the signal again, which ends the process as the
 * first would have (the parent's wait sees this signal). Never returns. */
static void last_step_handler(int sig, siginfo_t *info, void *uctx)
{
    (void)info;
    (void)uctx;
    sigset_t all;
    sigfillset(&all);
    cap__sys6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, _NSIG / 8, 0, 0);
    void (*step)(void) = atomic_load(&last_step);
    if (step != NULL)
        step();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    real()(sig, &dfl, NULL);
    cap__sys6(SYS_tgkill, getpid(), cap__sys6(SYS_gettid, 0, 0, 0, 0, 0, 0), sig, 0, 0, 0);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    cap__sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&one, 0, _NSIG / 8, 0, 0);
    cap__die("signal %d did not end the process\n", sig); /* a tracer may hold it */
}

/* Serves the kernel's SIG_DFL of sig, cur (its mask kept), by
 * last_step_handler; the table records SIG_DFL with the program's flags.
 * Under table_lock. False if the kernel refused. */
static bool install_last_step(int sig, const struct sigaction *cur, int flags)
{
    struct sigaction mine = *cur;
    mine.sa_flags = last_step_flags(cur->sa_flags);
    mine.sa_sigaction = last_step_handler;
    table[sig].handler = SIG_DFL;
    table[sig].action = NULL;
    table[sig].flags = flags;
    return real()(sig, &mine, NULL) == 0;
}

/* A one-shot handler (SA_RESETHAND) is being delivered: the kernel has
 * put its own SIG_DFL back, to be served by last_step_handler again, as
 * the program's record says (flags: the handler's), unless a sigaction
 * came in between. The lock's holders block every signal, so a handler
 * can take it. */
static void last_step_after_reset(int sig, int flags)
{
    cap__spin_lock(&table_lock);
    struct sigaction cur;
    if (real()(sig, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL)
        install_last_step(sig, &cur, flags);
    cap__spin_unlock(&table_lock);
}

void cap__sig_last_step_arm(void (*step)(void))
{
    sigaction_fn fn = real();
    if (fn == NULL)
        return;
    atomic_store(&last_step, step);
    sigset_t all, saved;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &saved, _NSIG / 8);
    cap__spin_lock(&table_lock);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction cur;
        /* Only where SIG_DFL is the kernel's: a disposition inherited
         * through exec (SIG_IGN under nohup) or installed before the
         * runtime started stays. */
        if (!ends_process(sig) || fn(sig, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL ||
            entry_is_function(&table[sig]))
            continue;
        if (install_last_step(sig, &cur, cur.sa_flags & ~SA_SIGINFO))
            atomic_fetch_or(&last_step_sigs, UINT64_C(1) << (sig - 1));
    }
    cap__spin_unlock(&table_lock);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
}

void cap__sig_fork_prepare(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, saved, _NSIG / 8);
    cap__spin_lock(&table_lock);
}

void cap__sig_fork_done(const sigset_t *saved)
{
    cap__spin_unlock(&table_lock);
    int saved_errno = errno;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, saved, NULL, _NSIG / 8);
    errno = saved_errno;
}

void cap__sig_kick(pid_t tid)
{
    cap__sig_kick_reserve(); /* once; then one load */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = CAP__SIG_KICK;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_ptr = (void *)&kick_cookie;
    int saved = errno;
    syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, CAP__SIG_KICK, &si);
    errno = saved;
}

/* The older ways to install a handler. glibc's call its internal
 * sigaction, which no interposition sees: the handler would run without
 * the trampoline and interrupt no parked call (a pause() under sigset()
 * never returned), and siginterrupt's change of SA_RESTART would reach
 * the kernel but not the table. Each is redone here on the sigaction
 * above, with glibc's flags and results. */

/* Signals siginterrupt(sig, 1) made interrupting, bit sig - 1: signal()
 * installs their handlers without SA_RESTART, as glibc's does. An atomic
 * word, not a set under a lock: signal() is called from handlers (the
 * System V re-arming idiom), which may interrupt a holder on the same
 * kernel thread (tests/stack/sigaction_from_handler.c). */
static _Atomic uint64_t interrupting;
_Static_assert(NSIG - 1 <= 64, "one bit per signal");

static bool valid_for_install(int sig, void (*handler)(int))
{
    if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
        errno = EINVAL;
        return false;
    }
    return true;
}

/* Installs handler with mask {sig} if with_self, else empty; the old
 * handler, or SIG_ERR. */
static void (*install(int sig, void (*handler)(int), bool with_self, int flags))(int)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    if (with_self)
        sigaddset(&act.sa_mask, sig);
    act.sa_flags = flags;
    if (sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

void (*signal(int sig, void (*handler)(int)))(int)
{
    if (!valid_for_install(sig, handler))
        return SIG_ERR;
    bool interrupts = atomic_load(&interrupting) & (UINT64_C(1) << (sig - 1));
    /* BSD semantics, as glibc's signal() */
    return install(sig, handler, true, interrupts ? 0 : SA_RESTART);
}

void (*bsd_signal(int sig, void (*handler)(int)))(int)
{
    return signal(sig, handler);
}

void (*sysv_signal(int sig, void (*handler)(int)))(int)
{
    if (!valid_for_install(sig, handler))
        return SIG_ERR;
    return install(sig, handler, false, SA_RESETHAND | SA_NODEFER);
}

void (*__sysv_signal(int sig, void (*handler)(int)))(int)
{
    return sysv_signal(sig, handler);
}

int siginterrupt(int sig, int interrupt)
{
    struct sigaction act;
    if (sigaction(sig, NULL, &act) != 0)
        return -1;
    uint64_t bit = UINT64_C(1) << (sig - 1);
    if (interrupt) {
        atomic_fetch_or(&interrupting, bit);
        act.sa_flags &= ~SA_RESTART;
    } else {
        atomic_fetch_and(&interrupting, ~bit);
        act.sa_flags |= SA_RESTART;
    }
    return sigaction(sig, &act, NULL);
}

int sigignore(int sig)
{
    return install(sig, SIG_IGN, false, 0) == SIG_ERR ? -1 : 0;
}

/* System V's sigset: SIG_HOLD blocks sig (in the calling thread's mask,
 * like sigprocmask); any other disposition is installed and unblocks it.
 * The result is SIG_HOLD if sig was blocked, else the old handler. */
void (*sigset(int sig, void (*disp)(int)))(int)
{
    if (!valid_for_install(sig, disp))
        return SIG_ERR;
    sigset_t set, was;
    sigemptyset(&set);
    sigaddset(&set, sig);
    if (disp == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &set, &was) != 0)
            return SIG_ERR;
        if (sigismember(&was, sig))
            return SIG_HOLD;
        struct sigaction old;
        if (sigaction(sig, NULL, &old) != 0)
            return SIG_ERR;
        return old.sa_handler;
    }
    void (*old)(int) = install(sig, disp, false, 0);
    if (old == SIG_ERR || sigprocmask(SIG_UNBLOCK, &set, &was) != 0)
        return SIG_ERR;
    return sigismember(&was, sig) ? SIG_HOLD : old;
}
