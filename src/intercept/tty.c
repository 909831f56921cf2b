/* SPDX-License-Identifier: MIT */
/*
 * tcdrain: waits until a terminal has sent all its output, which on a
 * slow line takes as long as the line needs. On a user thread the wait
 * (glibc's ioctl TCSBRK with a nonzero argument) runs on the offload pool
 * while only the caller parks; it is a cancellation point, and a signal
 * ends it as the kernel's wait would (EINTR; a SA_RESTART handler
 * restarts it). Elsewhere, glibc's.
 */
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>

#include "intercept/intercept.h"
#include "io/io.h"

int tcdrain(int fd)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(tcdrain)(fd);
    cap__sys_call c = { SYS_ioctl, { fd, TCSBRK, 1 }, 0 };
    cap__intr in = cap__ic_intr_cancel(CAP__FOREVER);
    return (int)cap__ic_ret_cancel(cap__ic_offload_sys(&c, &in));
}
