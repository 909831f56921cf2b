/* SPDX-License-Identifier: MIT */
/*
 * Overflow is never silent: the SIGSEGV handler and the report.
 *
 * A thread that overflows faults on the guard page below its stack with
 * no stack left to run a handler on, so every worker kernel thread gets
 * an alternate signal stack (cap__stack_kthread_init; the worker loop and
 * all the user threads of a worker share its kernel thread, hence one per
 * worker). The handler (SA_ONSTACK) asks: is the fault address in the
 * guard of the stack that was running, i.e. the current user thread's
 * (cap__current), or the worker's scheduler stack? If so it prints the
 * report and aborts. A fault inside the runtime's pointer checks
 * (arch/usercheck.h) only makes the check fail; the same handler is
 * installed for SIGBUS for them. Any other SIGSEGV or SIGBUS goes to
 * whatever handler was installed before ours, exactly as if we were not
 * there: a SA_SIGINFO or plain handler is called with the same arguments;
 * SIG_DFL (or SIG_IGN, which the kernel would override for a fault
 * anyway) is restored and the faulting instruction re-runs into the
 * default action. A SIGSEGV or SIGBUS sent by a process (kill, raise)
 * has no instruction to re-run: under SIG_DFL it is sent again, to end
 * the process as the kernel would have; under SIG_IGN it is dropped.
 * Until the program installs its own, sigaction reports this handler
 * for SIGSEGV and SIGBUS (not SIG_DFL, as the kernel's disposition is
 * ours): a program that chains to the old handler, or puts it back,
 * keeps the overflow report (docs/pthread-compat.md).
 *
 * The report: thread id (the cap_thread_t handle), name, creation site
 * (the return address in cap_thread_create's caller, symbolised with
 * dladdr: exported symbols only, so build with -rdynamic to see static
 * program functions), stack size and the fault address. dladdr is not
 * async-signal-safe (it takes the loader lock); we are about to abort,
 * and the fault came from a thread's own code, so the only risk is a
 * thread overflowing inside the loader itself, where the report would
 * hang instead of printing: a re-entry guard at least prevents loops.
 * The canary path (guard.c) uses the same report from the switch.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/usercheck.h"
#include "sched/worker.h"
#include "stack/internal.h"
#include "stack/linked.h"
#include "thread/thread.h"
#include "util/die.h"
#include "util/sigctx.h"

enum { ALTSTACK_BYTES = 64 * 1024 };
#define MAIN_GAP ((size_t)1 << 20) /* the kernel's stack_guard_gap */

static struct sigaction previous_segv, previous_bus;
static atomic_int handler_installed;
static atomic_int reporting;

/* Finds the TCB whose stack has lo as its lowest usable byte. */
struct find_arg {
    const void *lo;
    cap__thread *found;
};

static void match_lo(cap__thread *t, void *arg)
{
    struct find_arg *f = arg;
    if (t->stack.lo == f->lo)
        f->found = t;
}

static void say_site(const void *site)
{
    Dl_info info;
    if (site == NULL) {
        cap__say("  created by: the process (main)\n");
        return;
    }
    if (dladdr(site, &info) != 0 && info.dli_fname != NULL) {
        if (info.dli_sname != NULL)
            cap__say("  created at: %p %s+0x%lx (%s)\n", site, info.dli_sname,
                     (unsigned long)((const char *)site - (const char *)info.dli_saddr),
                     info.dli_fname);
        else
            cap__say("  created at: %p %s+0x%lx\n", site, info.dli_fname,
                     (unsigned long)((const char *)site - (const char *)info.dli_fbase));
        return;
    }
    cap__say("  created at: %p\n", site);
}

void cap__overflow_report(const void *stack_lo, const void *fault_addr, const char *how)
{
    if (atomic_exchange(&reporting, 1) != 0)
        abort(); /* a second overflow while reporting the first */
    cap__worker *w = cap__worker_self();
    cap__thread *t = NULL;
    if (stack_lo != NULL) {
        struct find_arg f = { stack_lo, NULL };
        cap__thread_foreach(match_lo, &f);
        t = f.found;
    } else if (w != NULL) {
        t = w->current;
    }
    if (t != NULL) {
        size_t size = (size_t)((char *)t->stack.hi - (char *)t->stack.lo);
        char name[CAP_THREAD_NAME_MAX];
        memcpy(name, t->name, sizeof name);
        name[sizeof name - 1] = '\0';
        cap__say("capriccio: stack overflow in thread %llu (slot %u, name \"%s\"): %s "
                 "(address %p)\n",
                 (unsigned long long)cap__thread_handle(t), t->slot, name, how, fault_addr);
        cap__say("  stack: %lu bytes [%p, %p)%s\n", (unsigned long)size, t->stack.lo,
                 t->stack.hi, t->is_main ? " (the process stack)" : "");
        say_site(t->is_main ? NULL : t->create_site);
        cap__say("  hint: give it a bigger stack (cap_thread_attr_setstacksize or "
                 "CAP_STACK_SIZE)\n");
    } else {
        cap__say("capriccio: stack overflow on the scheduler stack of worker %d: %s "
                 "(address %p)\n",
                 w != NULL ? w->id : -1, how, fault_addr);
    }
    abort();
}

static bool guard_of_running_stack(const void *addr)
{
    cap__worker *w = cap__worker_self();
    if (w == NULL)
        return false;
    cap__thread *t = w->current;
    if (t != NULL && t->is_main) {
        /* The process stack: the kernel keeps a gap of MAIN_GAP below it. */
        const char *a = addr, *lo = t->stack.lo;
        return lo != NULL && a < lo && a >= lo - MAIN_GAP;
    }
    if (t != NULL)
        return cap__stack_guard_hit(addr, &t->stack);
    return cap__stack_guard_hit(addr, &w->sched_stack);
}

void cap__stack_on_fault(int sig, siginfo_t *info, void *uctx)
{
    if (cap__usercheck_fixup(uctx))
        return;
    /* Sent by kill, raise, pthread_kill or sigqueue (SI_USER, SI_TKILL,
     * SI_QUEUE: codes <= 0), not a fault: no instruction re-runs, and
     * si_addr is no address. */
    bool sent = info == NULL || info->si_code <= 0;
    if (sig == SIGSEGV && !sent && guard_of_running_stack(info->si_addr)) {
        /* Restore the default for SIGABRT's sake is not needed: abort()
         * resets it itself. Report with the running thread. */
        cap__worker *w = cap__worker_self();
        cap__overflow_report(w->current != NULL ? w->current->stack.lo : NULL, info->si_addr,
                             "it hit the guard page below its stack");
    }
    const struct sigaction *previous = sig == SIGSEGV ? &previous_segv : &previous_bus;
    if (previous->sa_flags & SA_SIGINFO) {
        previous->sa_sigaction(sig, info, uctx);
        return;
    }
    if (previous->sa_handler == SIG_DFL || previous->sa_handler == SIG_IGN) {
        if (sent && previous->sa_handler == SIG_IGN)
            return; /* the kernel ignores a sent one; only faults override SIG_IGN */
        /* Re-run the faulting instruction with the default action. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        /* A sent signal has no instruction to re-run: returning would
         * drop it (a raise(SIGSEGV), as CPython's faulthandler._sigsegv
         * makes, went on as if nothing happened). Send it again to this
         * kernel thread: blocked while its handler runs (no SA_NODEFER),
         * it takes the default action as the handler returns. */
        if (sent)
            syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
        return;
    }
    previous->sa_handler(sig);
}

static void install_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = cap__stack_on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous_segv);
    sigaction(SIGBUS, &sa, &previous_bus);
}

/* This kernel thread's own alternate stack, once mapped (NULL while it
 * runs on one the application gave it before the runtime started). The
 * runtime's calls are raw: the library's sigaltstack is the program's
 * (altstack.c). */
static __thread void *runtime_alt __attribute__((tls_model("initial-exec")));

int cap__stack_alt_restore(void)
{
    if (runtime_alt == NULL) {
        void *p = mmap(NULL, ALTSTACK_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (p == MAP_FAILED)
            return ENOMEM;
        runtime_alt = p;
    }
    stack_t ss = { .ss_sp = runtime_alt, .ss_size = ALTSTACK_BYTES, .ss_flags = 0 };
    if (syscall(SYS_sigaltstack, &ss, NULL) != 0)
        return errno;
    return 0;
}

void cap__stack_kthread_init(void)
{
    stack_t cur;
    if (syscall(SYS_sigaltstack, NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE) &&
        cur.ss_size > 0) {
        /* The application gave this kernel thread one already: keep it. */
    } else if (cap__stack_alt_restore() != 0) {
        cap__die("cannot map or install an alternate signal stack\n");
    }
    if (atomic_exchange(&handler_installed, 1) == 0)
        install_handler();
    cap__linked_kthread_init();
}
