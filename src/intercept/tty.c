/* SPDX-License-Identifier: MIT */
/*
 * The terminal calls that wait for the line: tcdrain (until the output
 * is sent), tcsetattr with TCSADRAIN or TCSAFLUSH (the same, then the
 * change) and tcsendbreak (the break itself, a quarter to half a second
 * on a serial line). glibc makes them through its internal ioctl, which
 * no wrapper sees, so on a user thread each would block the worker for
 * as long as the line needs. Here they run on the offload pool while only
 * the caller parks; a signal ends the wait as the kernel's would (EINTR;
 * a SA_RESTART handler restarts it). tcdrain is a cancellation point, as
 * glibc's; tcsetattr and tcsendbreak are not (nor in glibc). tcsetattr
 * with TCSANOW never waits and stays glibc's call. Elsewhere, glibc's.
 * A pseudo-terminal never waits in any of them (no line to drain).
 */
#include <errno.h>
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

/* One glibc call on a pool thread, its errno carried back. */
struct line_call {
    int fd, action, duration;
    const struct termios *t;
    bool send_break;
    long result;
};

static void run_line_call(void *arg)
{
    struct line_call *c = arg;
    int r = c->send_break ? CAP__REAL(tcsendbreak)(c->fd, c->duration)
                          : CAP__REAL(tcsetattr)(c->fd, c->action, c->t);
    c->result = r == 0 ? 0 : -errno;
}

static int on_pool(struct line_call *c)
{
    return (int)cap__ic_ret(cap__offload_call(run_line_call, c, &c->result,
                                              cap__ic_intr(CAP__FOREVER)));
}

int tcsetattr(int fd, int action, const struct termios *t)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user() || action == TCSANOW)
        return CAP__REAL(tcsetattr)(fd, action, t);
    struct line_call c = { .fd = fd, .action = action, .t = t };
    return on_pool(&c);
}

int tcsendbreak(int fd, int duration)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_user())
        return CAP__REAL(tcsendbreak)(fd, duration);
    struct line_call c = { .fd = fd, .duration = duration, .send_break = true };
    return on_pool(&c);
}
