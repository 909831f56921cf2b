/* SPDX-License-Identifier: MIT */
/*
 * pause and sigsuspend. On a user thread they park only the caller until
 * a caught signal is chosen to interrupt it (io/sigintr.h), then return
 * -1 with EINTR, as they always do. sigsuspend's mask is its thread's
 * while it waits (io/sigmask.h), so it decides which signals may end the
 * wait: one in the mask never does. Elsewhere both are libc's. Both are
 * cancellation points (cap__io_sleep is one).
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
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user())
        return CAP__REAL(pause)();
    cap__io_sleep(CAP__FOREVER, &cap__intr_always);
    return (int)cap__ic_ret(-EINTR);
}

int sigsuspend(const sigset_t *mask)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
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
