/* SPDX-License-Identifier: MIT */
/*
 * A user thread's own pending signals (io/sigdirect.h): raise() sends
 * the signal to the calling thread, as POSIX says (pthread_kill of
 * itself), so a signal it blocks waits in its own pending set, and
 * sigpending reports that set with the process's. Elsewhere, and in a
 * handler, both are libc's. kill and sigqueue of the own process, of a
 * signal the caller accepts and handles, deliver it to the caller before
 * they return (below); otherwise they are libc's, marked on a user
 * thread for the handler Linux may run as they return.
 *
 * glibc's pthread_kill and pthread_sigqueue, called by code built without
 * <capriccio/pthread.h> (whose programs call cap_thread_kill), with the
 * pthread_t of worker 0's kernel thread: that is the initial thread's,
 * which glibc's pthread_self() returns to main, and in a program
 * preloaded or linked without the header main is the only user thread
 * (its other threads are glibc's). Such a send goes to main, the user
 * thread, as cap_thread_kill sends it: a blocking call of main's ends
 * with EINTR, a signal main blocks waits in its pending set (sigwait,
 * sigpending). glibc's aimed it at the kernel thread, which runs another
 * user thread or the scheduler: main's read went on waiting, and a
 * sigwait of main's saw it only when that kernel thread looked. Other
 * threads' handles are glibc's. (A handle that glibc's pthread_self gave
 * another user thread on worker 0, in library code of a program built
 * with the header, reaches main too: it has no user thread of its own.)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/sigdirect.h"
#include "io/sigmask.h"
#include "io/sigroute.h"
#include "sched/worker.h"

int raise(int sig)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user())
        return CAP__REAL(raise)(sig);
    int rc = cap_thread_kill(cap__thread_handle(cap__current()), sig);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

/* A signal a user thread sends to its own process (pid is getpid()) and
 * accepts, with a handler installed, goes to its own kernel thread, so
 * that the handler has run in it when kill or sigqueue returns, as POSIX
 * asks when no other thread accepts the signal (and allows when others
 * do). Sent to the process instead, Linux hands it to the first kernel
 * thread that takes it (worker 0's, whatever user thread runs there),
 * and the handler ran there or, routed to the sender (io/sigroute.h),
 * after the call returned. The siginfo is what the kernel gives a kill
 * or a sigqueue of this process. Delivered at a safe point of the
 * calling thread, its handler may wait as it (util/sigctx.h). Signals it
 * blocks, ignored or default ones, other processes' and process groups
 * go to the kernel as sent. */
static bool sent_to_self(pid_t pid, int sig, int code, const union sigval *value, int *rc)
{
    if (sig >= NSIG || pid != getpid() ||
        (cap__sigmask_of(cap__current()) & (UINT64_C(1) << (sig - 1))))
        return false;
    int flags;
    if (cap__sig_disposition(sig, &flags) != CAP__DISP_HANDLER)
        return false;
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = sig;
    info.si_code = code;
    info.si_pid = pid;
    info.si_uid = getuid();
    if (value != NULL)
        info.si_value = *value;
    cap__sig_raising = sig;
    int err = cap__sigmask_queue_here(sig, &info);
    cap__sig_raising = 0;
    if (err != 0)
        errno = err;
    *rc = err == 0 ? 0 : -1;
    return true;
}

/* Otherwise the kernel may still deliver it to the sender's own kernel
 * thread as the call returns, if the sender accepts it: also a safe
 * point of the calling thread. */
int kill(pid_t pid, int sig)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user() || sig <= 0)
        return CAP__REAL(kill)(pid, sig);
    int rc;
    if (sent_to_self(pid, sig, SI_USER, NULL, &rc))
        return rc;
    cap__sig_raising = sig;
    int r = CAP__REAL(kill)(pid, sig);
    cap__sig_raising = 0;
    return r;
}

int sigqueue(pid_t pid, int sig, const union sigval value)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user() || sig <= 0)
        return CAP__REAL(sigqueue)(pid, sig, value);
    int rc;
    if (sent_to_self(pid, sig, SI_QUEUE, &value, &rc))
        return rc;
    cap__sig_raising = sig;
    int r = CAP__REAL(sigqueue)(pid, sig, value);
    cap__sig_raising = 0;
    return r;
}

int sigpending(sigset_t *set)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user())
        return CAP__REAL(sigpending)(set);
    if (!cap__user_writable(set, _NSIG / 8)) {
        errno = EFAULT;
        return -1;
    }
    /* The process's, and this kernel thread's (a signal raised here that
     * its mask held: none, as the thread raises only what it accepts);
     * the process's that the runtime keeps (io/sigroute.h). */
    if (syscall(SYS_rt_sigpending, set, _NSIG / 8) != 0)
        return -1;
    uint64_t mine = atomic_load(&cap__current()->sig_pending) | cap__sig_routes_ready(), word;
    memcpy(&word, set, sizeof word);
    word |= mine;
    memcpy(set, &word, sizeof word);
    return 0;
}

/* Whether th is worker 0's kernel thread (once the runtime runs, so
 * cap__main_handle is set). */
static bool main_by_glibc_handle(pthread_t th)
{
    return cap__rt.nworkers > 0 && pthread_equal(th, cap__rt.workers[0].kthread);
}

int pthread_kill(pthread_t th, int sig)
{
    if (main_by_glibc_handle(th))
        return cap_thread_kill(cap__main_handle, sig);
    return CAP__REAL(pthread_kill)(th, sig);
}

int pthread_sigqueue(pthread_t th, int sig, const union sigval value)
{
    if (main_by_glibc_handle(th))
        return cap_thread_sigqueue(cap__main_handle, sig, value);
    return CAP__REAL(pthread_sigqueue)(th, sig, value);
}
