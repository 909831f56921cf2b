/* SPDX-License-Identifier: MIT */
/*
 * pause and sigsuspend. On a user thread they park only the caller until
 * a caught signal is chosen to interrupt it (io/sigintr.h), then return
 * -1 with EINTR, as they always do. sigsuspend's mask decides which
 * signals may end the wait: one in the mask never does. As with ppoll,
 * the mask is not installed in the kernel (docs/pthread-compat.md,
 * "Signals"). Elsewhere both are libc's. Both are cancellation points
 * (cap__io_sleep is one).
 *
 * sigtimedwait and sigwaitinfo still block the worker (intercept/ipc.c
 * says why), but on a user thread they fail with EINTR only as Linux
 * says: when a handler of the program ran. What the runtime does to the
 * waiting kernel thread ends the system call with EINTR too: a readiness
 * event of a poll that worker armed in the io_uring backend, or a disk
 * request it submitted, completes as io_uring task work queued to it
 * (which wakes a sleeping system call, COOP_TASKRUN or not), and the
 * idle wake-ups of the other workers (netio kicks) make such events all
 * the time; a CAP__SIG_KICK would too. So an EINTR with no program
 * handler run on this kernel thread meanwhile (cap__handler_runs,
 * util/sigctx.h) is waited again with the time left (none left: one
 * more look, which says EAGAIN if nothing came). glibc's sigwait retries
 * EINTR by itself. Elsewhere both are libc's.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "util/clock.h"

int pause(void)
{
    if (!cap__ic_user())
        return CAP__REAL(pause)();
    cap__io_sleep(CAP__FOREVER, &cap__intr_always);
    return (int)cap__ic_ret(-EINTR);
}

int sigsuspend(const sigset_t *mask)
{
    if (!cap__ic_user())
        return CAP__REAL(sigsuspend)(mask);
    if (!cap__user_readable(mask, _NSIG / 8)) /* the bytes the kernel reads */
        return (int)cap__ic_ret(-EFAULT);
    cap__intr in = cap__intr_always;
    in.blocked = cap__sig_bits(mask);
    in.masked = true;
    cap__io_sleep(CAP__FOREVER, &in);
    return (int)cap__ic_ret(-EINTR);
}

/* The time left of ts after the wait that began at t0 (monotonic ns), at
 * least 0. */
static struct timespec left_of(const struct timespec *ts, uint64_t t0)
{
    uint64_t total = (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
    uint64_t spent = cap__now() - t0;
    return cap__ns_to_timespec(spent < total ? total - spent : 0);
}

static int wait_signal(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
    uint64_t t0 = ts != NULL ? cap__now() : 0;
    struct timespec left;
    for (;;) {
        unsigned long runs = cap__handler_runs;
        long r = syscall(SYS_rt_sigtimedwait, set, info, ts, _NSIG / 8);
        if (r >= 0 || errno != EINTR || cap__handler_runs != runs)
            return (int)r;
        /* Ours: the kernel had read *ts, so it is readable. */
        if (ts != NULL) {
            left = left_of(ts, t0);
            ts = &left;
            t0 = cap__now();
        }
    }
}

int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *ts)
{
    if (!cap__ic_enter())
        return CAP__REAL(sigtimedwait)(set, info, ts);
    return wait_signal(set, info, ts);
}

int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    if (!cap__ic_enter())
        return CAP__REAL(sigwaitinfo)(set, info);
    return wait_signal(set, info, NULL);
}
