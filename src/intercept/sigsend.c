/* SPDX-License-Identifier: MIT */
/*
 * A user thread's own pending signals (io/sigdirect.h): raise() sends
 * the signal to the calling thread, as POSIX says (pthread_kill of
 * itself), so a signal it blocks waits in its own pending set, and
 * sigpending reports that set with the process's. Elsewhere, and in a
 * handler, both are libc's. kill and sigqueue are libc's, marked on a
 * user thread for the handler Linux may run as they return (below).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/sigdirect.h"
#include "io/sigroute.h"

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

/* The kernel delivers a signal sent to the process to the sender's own
 * kernel thread as the call returns, if the sender accepts it: a safe
 * point of the calling thread, so its handler may wait as it
 * (util/sigctx.h). */
int kill(pid_t pid, int sig)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user() || sig <= 0)
        return CAP__REAL(kill)(pid, sig);
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
