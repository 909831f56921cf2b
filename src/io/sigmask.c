/* SPDX-License-Identifier: MIT */
/*
 * Signal masks of user threads: the classes, the target and how workers
 * install it. The model is in sigmask.h.
 *
 * State. cap__sigclass_first, main's mask at start-up, whose count is derived
 * from cap__live_threads (sigmask.h), and `classes`, a list of the others
 * (never freed; one whose count is zero is reused for the next new mask),
 * each on a cache line of its own: its count is what a create and exit of
 * a thread with it touch. class_lock serialises the list, a thread's move
 * between classes and the recomputation of `target`; it is taken with
 * every signal blocked (a jump out of a handler reaches it:
 * cap__sigmask_jump). Counts change without it on creates and exits: one
 * that takes a count to zero recomputes under it afterwards, and a create
 * never takes one from zero (its creator has the mask) but for a thread
 * made by a kernel thread we do not run, which recomputes too. So every
 * change of which classes have threads is followed by a recomputation
 * that sees it. A thread's `sigclass` is written only by that thread (or
 * its creator, before it runs).
 *
 * Per kernel thread, `applied`: the target this kernel thread installed
 * last (0 on threads that never install one: they are not workers). A
 * worker also publishes it in w->sig_applied, which a caller waiting for
 * the workers to block more reads (reach_all). It is stored before the
 * system call that installs it, with every signal blocked until that
 * call: no signal can land in between, and a kick that comes during the
 * call is handled after it and installs what is newest.
 */
#include "io/sigmask.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "io/sigdirect.h"
#include "io/sigintr.h"
#include "io/sigroute.h"
#include "sched/worker.h"
#include "thread/thread.h"
#include "util/sigctx.h"
#include "util/spin.h"

struct cap__sigclass cap__sigclass_first; /* live: unused (above) */
static struct cap__sigclass *classes;
static struct cap__sigclass *spare;   /* [class_lock] one made in advance, for jumps */
static cap__spin class_lock = CAP__SPIN_INIT;
static _Atomic uint64_t target;
static __thread uint64_t applied __attribute__((tls_model("initial-exec")));

static uint64_t bit(int sig)
{
    return UINT64_C(1) << (sig - 1);
}

uint64_t cap__sigmask_holdable(void)
{
    return ~(bit(SIGKILL) | bit(SIGSTOP) | bit(32) | bit(33));
}

/* Signals no kernel thread of the runtime blocks (sigmask.h). */
static uint64_t never_blocked(void)
{
    return ~cap__sigmask_holdable() | bit(SIGSEGV) | bit(SIGBUS) | bit(SIGILL) |
           bit(SIGFPE) | bit(SIGTRAP) | bit(SIGSYS) | bit(CAP__SIG_KICK);
}

/* What a worker's kernel thread blocks for target t. */
static uint64_t kernel_mask(uint64_t t)
{
    return t & ~never_blocked();
}

/* saved: the mask before, or NULL. */
static void block_all(uint64_t *saved)
{
    uint64_t all = ~UINT64_C(0);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, saved, sizeof all);
}

static void set_kernel_mask(uint64_t m)
{
    int saved_errno = errno;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &m, NULL, sizeof m);
    errno = saved_errno;
}

/* ---- classes (class_lock held) ------------------------------------------- */

static struct cap__sigclass *new_class(void)
{
    struct cap__sigclass *c;
    if (posix_memalign((void **)&c, 64, sizeof *c) != 0)
        return NULL;
    atomic_init(&c->live, 0);
    c->mask = 0;
    c->next = NULL;
    return c;
}

/* The class for mask: the first, or a live one that has it, else a dead
 * one (renamed), else a new one (from the spare when may_alloc is false). */
static struct cap__sigclass *class_for(uint64_t mask, bool may_alloc)
{
    if (mask == cap__sigclass_first.mask)
        return &cap__sigclass_first;
    struct cap__sigclass *dead = NULL;
    for (struct cap__sigclass *c = classes; c != NULL; c = c->next) {
        long live = atomic_load(&c->live);
        if (c->mask == mask && live > 0)
            return c;
        if (live == 0 && dead == NULL)
            dead = c;
    }
    if (dead == NULL) {
        if (spare != NULL) {
            dead = spare;
            spare = NULL;
        } else if (!may_alloc || (dead = new_class()) == NULL) {
            return NULL;
        }
        dead->next = classes;
        classes = dead;
    }
    dead->mask = mask;
    return dead;
}

/* The intersection of the live classes' masks; true if it changed. */
static bool recompute(void)
{
    long word = atomic_load(&cap__live_threads);
    bool any = cap__live_count(word) - (word >> 32) > 0;
    uint64_t m = any ? cap__sigclass_first.mask : ~UINT64_C(0);
    for (struct cap__sigclass *c = classes; c != NULL; c = c->next) {
        if (atomic_load(&c->live) > 0) {
            m &= c->mask;
            any = true;
        }
    }
    if (!any || m == atomic_load(&target))
        return false; /* no thread left: the process is ending */
    atomic_store(&target, m);
    return true;
}

static void lock_classes(uint64_t *saved)
{
    block_all(saved);
    cap__spin_lock(&class_lock);
}

/* One more live thread with c, or one fewer (delta -1). */
static void count(struct cap__sigclass *c, int delta)
{
    if (c == &cap__sigclass_first) /* the count of the others moves the other way */
        atomic_fetch_sub(&cap__live_threads, delta * CAP__LIVE_MASKED);
    else
        atomic_fetch_add(&c->live, delta);
}

/* Moves the running thread t to class c (class_lock held). */
static void move(cap__thread *t, struct cap__sigclass *c)
{
    struct cap__sigclass *old = t->sigclass;
    if (c == old)
        return;
    count(c, 1);
    t->sigclass = c;
    count(old, -1);
    recompute();
}

/* ---- installing ------------------------------------------------------------ */

static void publish(uint64_t m)
{
    applied = m;
    cap__worker *w = cap__worker_self();
    if (w != NULL)
        atomic_store_explicit(&w->sig_applied, m, memory_order_release);
}

/* settle_target publishes m, read from the target, and returns it, or a
 * later target read after the publish and published in turn
 * (publish_then_look: the one step). A thread that moves the target
 * reads the workers' publications after its move (reach_all), and each
 * worker reads the target after its publication: one of the two sees
 * the other's store, so a worker never publishes and then installs
 * a target a mover has already taken for installed (one that blocks
 * less than the mover's: a signal it has just blocked everywhere could
 * land there). */
static uint64_t publish_then_look(uint64_t m)
{
    publish(m);
    atomic_thread_fence(memory_order_seq_cst);
    return kernel_mask(atomic_load(&target));
}

static uint64_t settle_target(uint64_t m)
{
    for (uint64_t now; (now = publish_then_look(m)) != m;)
        m = now;
    return m;
}

/* With every signal blocked, installs the latest target on this kernel
 * thread, plus extra (a handler's mask: cap__sigmask_unlift), which
 * leaves the blocked state. */
static void install_here_plus(uint64_t extra)
{
    uint64_t m = settle_target(kernel_mask(atomic_load(&target)));
    set_kernel_mask(m | extra);
}

static void install_here(void)
{
    install_here_plus(0);
}

/* The same from any mask. */
static void install_now(void)
{
    block_all(NULL);
    install_here();
}

void cap__sigmask_catch_up(void)
{
    if (applied == kernel_mask(atomic_load_explicit(&target, memory_order_relaxed)))
        return;
    /* The kick's own handler installs it (cap__sigmask_kicked), by the
     * rules for whatever this kernel thread's mask holds besides the
     * target (a thread parked in a handler here keeps its handler's
     * mask): a kick to ourselves, delivered as tgkill returns. */
    cap__worker *w = cap__worker_self();
    pid_t tid = w != NULL ? atomic_load_explicit(&w->tid, memory_order_acquire) : 0;
    if (tid != 0)
        cap__sig_kick(tid);
}

/* After the target moved from `before`: kicks every other worker that
 * has not installed what it gained and, if wait, waits until each has.
 * What it lost is left to the others: each installs the latest target
 * whenever it applies one, and as a thread starts there
 * (cap__sigmask_catch_up). A kick can be lost (merged with a pending
 * SIGURG of the program's): it is sent again now and then. (Session 65
 * tried kicking for what it lost too, without waiting: such a kick, on
 * its way for as long as it likes, could then unblock a signal on
 * another worker while the thread that had just unblocked it was still
 * taking it, which then reached that thread only after its
 * sigprocmask returned: io/sigmask_blocks_every_worker failed so once
 * in CI and in 3 of 900 local runs.) */
static void reach_all(uint64_t before, bool wait)
{
    uint64_t gained = kernel_mask(atomic_load(&target) & ~before);
    if (gained == 0)
        return;
    cap__worker *self = cap__worker_self();
    for (int i = 0; i < cap__rt.nworkers; i++) {
        cap__worker *w = &cap__rt.workers[i];
        if (w == self)
            continue;
        for (unsigned round = 0;; round++) {
            uint64_t need = gained & atomic_load(&target);
            if ((atomic_load(&w->sig_applied) & need) == need) /* after the move: settle_target */
                break;
            pid_t tid = atomic_load_explicit(&w->tid, memory_order_acquire);
            if (round % 4096 == 0 && tid != 0)
                cap__sig_kick(tid);
            if (!wait)
                break;
            cap__kernel_yield();
        }
    }
}

/* ---- the interface ---------------------------------------------------------- */

void cap__sigmask_kthread_init(void)
{
    uint64_t m = never_blocked(), inherited = 0;
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &m, &inherited, sizeof m);
    applied = inherited & ~m; /* installed, as far as a kick can tell */
}

void cap__sigmask_init(cap__thread *main_thread)
{
    uint64_t m = 0;
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &m, sizeof m);
    cap__sigclass_first.mask = m & cap__sigmask_holdable();
    spare = new_class();
    main_thread->sigclass = &cap__sigclass_first; /* counted in cap__live_threads */
    atomic_store(&target, cap__sigclass_first.mask);
    for (int i = 0; i < cap__rt.nworkers; i++) /* they hold at least this */
        atomic_store(&cap__rt.workers[i].sig_applied, kernel_mask(cap__sigclass_first.mask));
    install_now();
}

long cap__sigmask_thread_created_slow(cap__thread *t, cap__thread *creator)
{
    if (creator != NULL) {
        /* The creator has the mask: its count is not zero, and moves
         * only with the creator, which is here. */
        struct cap__sigclass *c = creator->sigclass;
        t->sigclass = c;
        long unit = 1;
        if (c != &cap__sigclass_first) {
            atomic_fetch_add_explicit(&c->live, 1, memory_order_relaxed);
            unit += CAP__LIVE_MASKED;
        }
        return cap__live_count(atomic_fetch_add(&cap__live_threads, unit) + unit);
    }
    t->sigclass = &cap__sigclass_first;
    long live = cap__live_count(atomic_fetch_add(&cap__live_threads, 1) + 1);
    uint64_t saved, before = atomic_load(&target);
    lock_classes(&saved);
    bool changed = recompute();
    cap__spin_unlock(&class_lock);
    set_kernel_mask(saved); /* not a worker's user thread: its own mask */
    if (changed)
        reach_all(before, false);
    return live;
}

/* After a count moved a class to or from zero live threads and the
 * target was recomputed (changed) under class_lock, taken by
 * lock_classes(&saved): releases the lock; a changed target is installed
 * here on a worker's user thread outside handlers (else the caller's own
 * mask is back) and offered to the other workers, which apply it when
 * they next install one (before: the target until then). */
static void unlock_and_apply(bool changed, uint64_t saved, uint64_t before)
{
    cap__spin_unlock(&class_lock);
    if (changed && cap__worker_self() != NULL && !cap__in_signal_handler())
        install_here();
    else
        set_kernel_mask(saved);
    if (changed)
        reach_all(before, false);
}

long cap__sigmask_thread_created_with(cap__thread *t, uint64_t mask)
{
    mask &= cap__sigmask_holdable();
    uint64_t saved, before = atomic_load(&target);
    lock_classes(&saved);
    /* Unlike the creator's class, this one may have no live thread: it is
     * counted under the lock that renames dead ones. */
    struct cap__sigclass *c = class_for(mask, true);
    if (c == NULL) {
        cap__spin_unlock(&class_lock);
        set_kernel_mask(saved);
        return -1;
    }
    t->sigclass = c;
    long unit = 1;
    if (c != &cap__sigclass_first) {
        atomic_fetch_add(&c->live, 1);
        unit += CAP__LIVE_MASKED;
    }
    long live = cap__live_count(atomic_fetch_add(&cap__live_threads, unit) + unit);
    /* A new class can only narrow the target: the creator's worker takes
     * it now, the others when they next apply one (see the top). */
    unlock_and_apply(recompute(), saved, before);
    return live;
}

/* before: for a thread with the first mask, the count before the inline
 * part took it off (it was the last with that mask); else 0. */
long cap__sigmask_thread_gone_slow(cap__thread *t, long before)
{
    struct cap__sigclass *c = t->sigclass;
    bool emptied = true;
    if (c != &cap__sigclass_first) {
        before = atomic_fetch_sub(&cap__live_threads, 1 + CAP__LIVE_MASKED);
        emptied = atomic_fetch_sub(&c->live, 1) == 1;
    }
    if (!emptied || cap__live_count(before) == 1) /* the last: the process ends */
        return cap__live_count(before);
    uint64_t saved, was = atomic_load(&target);
    lock_classes(&saved);
    unlock_and_apply(recompute(), saved, was);
    return cap__live_count(before);
}

uint64_t cap__sigmask_of(const cap__thread *t)
{
    return t->sigclass->mask;
}

/* cap__sigmask_set, installing extra with the target; with always, the
 * two are installed also when the mask does not change (every signal
 * blocked by the caller then). */
static int set_mask(cap__thread *t, uint64_t mask, uint64_t extra, bool always)
{
    mask &= cap__sigmask_holdable();
    if (t->sigclass->mask == mask) {
        if (always)
            install_here_plus(extra);
        return 0;
    }
    uint64_t saved;
    lock_classes(&saved);
    if (spare == NULL) /* for a jump, which may not allocate */
        spare = new_class();
    uint64_t before = atomic_load(&target);
    struct cap__sigclass *c = class_for(mask, true);
    if (c == NULL) {
        cap__spin_unlock(&class_lock);
        set_kernel_mask(saved);
        return ENOMEM;
    }
    uint64_t was = t->sigclass->mask;
    move(t, c);
    cap__spin_unlock(&class_lock);
    if (was & ~mask) /* (every signal still blocked here: lock_classes) */
        cap__sig_routes_merge_kernel(was & ~mask);
    install_here_plus(extra);
    reach_all(before, true);
    /* The process's signals the runtime keeps (io/sigroute.h): those t
     * now accepts become its own to deliver (its caller's pending check,
     * or its next safe point); those handed to it that it now blocks go
     * back, after the change (against the router's record, then look). */
    if (was & ~mask)
        cap__sig_routes_unblocked(t, was & ~mask);
    if (mask & ~was) {
        atomic_thread_fence(memory_order_seq_cst);
        cap__sig_routes_blocked(t, mask & ~was);
    }
    return 0;
}

int cap__sigmask_set(cap__thread *t, uint64_t mask)
{
    return set_mask(t, mask, 0, false);
}

uint64_t cap__sigmask_lift(cap__thread *t, uint64_t mask, int *rc)
{
    uint64_t handler = 0;
    block_all(&handler);
    *rc = set_mask(t, mask | (handler & cap__sigmask_holdable()), 0, true);
    if (*rc != 0)
        set_kernel_mask(handler);
    return handler;
}

void cap__sigmask_unlift_begin(void)
{
    block_all(NULL);
}

void cap__sigmask_unlift(cap__thread *t, uint64_t mask, uint64_t handler)
{
    /* Back to the old mask, whose class is live, or dead and still
     * named so unless another mask took it meanwhile: then set_mask's
     * spare, or an allocation, which only a lack of memory fails; the
     * thread then keeps the lift's mask, as after a longjmp out of the
     * handler. The handler's kernel mask, plus the target installed
     * meanwhile (a kernel thread never blocks less than it). */
    if (set_mask(t, mask, handler, true) != 0)
        install_here_plus(handler);
}

void cap__sigmask_kicked(void *uctx)
{
    if (cap__worker_self() == NULL)
        return; /* an offload thread's kick: its mask is its own */
    uint64_t want = kernel_mask(atomic_load(&target));
    uint64_t *m = (uint64_t *)&((ucontext_t *)uctx)->uc_sigmask;
    /* Interrupted user code or the scheduler has the target as its whole
     * mask, so it becomes want (whatever else it held: a thread's own mask
     * around an exec, cap__sigmask_own). A handler's only gains: a bit
     * the target lost may be its own signal's or its sa_mask's too
     * (sigmask.h, the handler mark). */
    bool handler = cap__sigmask_marked(*m);
    for (;;) {
        uint64_t have = handler ? applied : *m;
        uint64_t gained = want & ~have;
        *m = handler ? *m | gained : (*m & ~(have & ~want)) | gained;
        if (gained != 0) /* at once: no signal in it may land before sigreturn */
            syscall(SYS_rt_sigprocmask, SIG_BLOCK, &gained, NULL, sizeof gained);
        /* Published once the gains are in (a mover that sees them goes
         * on), then the target looked at again, as settle_target does;
         * a later one's gains are installed before it is published. */
        uint64_t now = publish_then_look(want);
        if (now == want)
            return;
        want = now;
    }
}

uint64_t cap__sigmask_installed(void)
{
    return applied;
}

void cap__sigmask_handler_exit(uint64_t entry, void *uctx)
{
    uint64_t now = applied;
    if (now == entry || uctx == NULL)
        return;
    uint64_t *m = (uint64_t *)&((ucontext_t *)uctx)->uc_sigmask;
    *m = (*m & ~(entry & ~now)) | (now & ~entry);
}

void cap__sigmask_handlers_left(void)
{
    install_now();
}

void cap__sigmask_jump(uint64_t *saved_word)
{
    cap__thread *t = cap__current();
    if (t == NULL || t->sigclass == NULL)
        return;
    uint64_t mask = *saved_word & cap__sigmask_holdable();
    uint64_t saved, before = atomic_load(&target);
    lock_classes(&saved);
    struct cap__sigclass *c = class_for(mask, false); /* t's own if it has mask */
    if (c != NULL) /* else no memory: the mask stays */
        move(t, c);
    cap__spin_unlock(&class_lock);
    /* The jump installs this word; meanwhile every signal stays blocked,
     * so the published target is true from here on. */
    uint64_t m = settle_target(kernel_mask(atomic_load(&target)));
    *saved_word = m;
    reach_all(before, false);
}

enum cap__sigmask_owned cap__sigmask_own(void)
{
    cap__thread *t = cap__current();
    if (t != NULL && !cap__in_signal_handler() && t->sigclass != NULL) {
        set_kernel_mask(t->sigclass->mask);
        return CAP__MASK_OWNED;
    }
    uint64_t mark = cap__sigmask_mark_bit(), had = 0;
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &mark, &had, sizeof mark);
    return cap__sigmask_marked(had) ? CAP__MASK_UNMARKED : CAP__MASK_AS_IS;
}

void cap__sigmask_back(enum cap__sigmask_owned owned)
{
    if (owned == CAP__MASK_OWNED) {
        install_now();
    } else if (owned == CAP__MASK_UNMARKED) {
        uint64_t mark = cap__sigmask_mark_bit();
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mark, NULL, sizeof mark);
    }
}

/* Sends sig to this kernel thread (a tgkill, or with *info), then lets
 * it through: returns 0 or the send's error number. */
static int deliver_here(int sig, const siginfo_t *info)
{
    uint64_t saved;
    block_all(&saved);
    int saved_errno = errno;
    long r = cap__sig_raise_here(sig, info);
    int err = r == 0 ? 0 : errno;
    errno = saved_errno;
    /* Delivered as this mask is installed: sig is let through. */
    set_kernel_mask(saved & ~bit(sig));
    if (cap__worker_self() != NULL && !cap__in_signal_handler())
        install_now(); /* the latest target: a kick may have moved it meanwhile */
    else
        set_kernel_mask(saved);
    return err;
}

void cap__sigmask_raise_here(int sig)
{
    deliver_here(sig, NULL);
}

int cap__sigmask_queue_here(int sig, const siginfo_t *info)
{
    return deliver_here(sig, info);
}

void cap__sigmask_forked(cap__thread *self, sigset_t *kernel)
{
    class_lock = (cap__spin)CAP__SPIN_INIT; /* perhaps held by a lost thread */
    for (struct cap__sigclass *c = classes; c != NULL; c = c->next)
        atomic_store(&c->live, 0);
    if (self != NULL) {
        /* The child's only thread: the parent's others never run again.
         * Its pending signals are the parent's (POSIX: none). */
        atomic_store(&self->sig_pending, 0);
        cap__sig_queued_clear(self);
        struct cap__sigclass *c = self->sigclass;
        if (c != &cap__sigclass_first)
            atomic_store(&c->live, 1);
        atomic_store(&cap__live_threads, c != &cap__sigclass_first ? 1 + CAP__LIVE_MASKED : 1);
        atomic_store(&target, c->mask);
    } else {
        atomic_store(&target, cap__sigclass_first.mask);
    }
    if (self == NULL) { /* a kernel thread of another's: its own mask stays */
        install_now();
        return;
    }
    /* What the saved mask has beyond the parent's target (the mask of a
     * handler that forked) stays. */
    uint64_t saved = 0;
    memcpy(&saved, kernel, sizeof saved); /* the kernel's word: _NSIG / 8 bytes */
    uint64_t extra = saved & ~applied;
    install_now();
    uint64_t m = applied | extra;
    sigemptyset(kernel);
    memcpy(kernel, &m, sizeof m);
}
