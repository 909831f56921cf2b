/* SPDX-License-Identifier: MIT */
/*
 * close() of a TCP socket whose SO_LINGER has a non-zero timeout: Linux
 * waits in close, up to that timeout, until the data written has been
 * acknowledged and the connection's FIN with it, whatever O_NONBLOCK
 * says (inet_release), and so held the worker that long (a probe on one
 * worker: 1 s with no other thread's turn). For a socket the runtime
 * made whose number is still its file's only reference (io/fd.h, sole
 * sockets) the wait is made here, before the close, parked: the caller
 * sleeps in slices (1 ms, doubling to 64 ms) until the socket's send
 * queue (SIOCOUTQ: bytes unsent or unacknowledged) is empty or the
 * timeout has passed, and then turns lingering off, so the kernel's close
 * returns at once and sends what is left, then the FIN, in the
 * background, as it does after its own timeout. Unlike the kernel's, the
 * wait does not cover the acknowledgment of the FIN itself. Cancellation
 * is disabled meanwhile: close was a cancellation point on entry, and a
 * cancel acting in the wait would leave the descriptor open.
 *
 * The setsockopt wrapper marks a file whose lingering it set with a
 * timeout (CAP__FDF_LINGER, net.c). Other sockets with a timeout (a
 * duplicated one, whose close may not be the last; one inherited or
 * received with it set) still wait in the kernel, on the worker.
 */
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <capriccio.h>

#include "intercept/intercept.h"
#include "util/clock.h"

enum { FIRST_SLICE_NS = 1000000, LAST_SLICE_NS = 64000000 };

/* intercept.h */
void cap__ic_linger_before_close(int fd, cap__fd *f)
{
    if (!cap__fd_has(f, CAP__FDF_SOLE))
        return;
    struct linger lg;
    socklen_t len = sizeof lg;
    int proto = 0;
    socklen_t plen = sizeof proto;
    if (syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_LINGER, &lg, &len) != 0 || !lg.l_onoff ||
        lg.l_linger <= 0 ||
        syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_PROTOCOL, &proto, &plen) != 0 ||
        proto != IPPROTO_TCP)
        return;
    int cancel_state;
    cap_thread_setcancelstate(CAP_CANCEL_DISABLE, &cancel_state);
    uint64_t deadline = cap__deadline_after(cap__timeout_ns((uint64_t)lg.l_linger, 0));
    uint64_t slice = FIRST_SLICE_NS;
    for (;;) {
        int queued = 0;
        if (syscall(SYS_ioctl, fd, SIOCOUTQ, &queued) != 0 || queued == 0)
            break;
        uint64_t now = cap__now();
        if (now >= deadline)
            break;
        cap_sleep_ns(deadline - now < slice ? deadline - now : slice);
        if (slice < LAST_SLICE_NS)
            slice *= 2;
    }
    struct linger off = { 0, 0 };
    syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_LINGER, &off, sizeof off);
    cap_thread_setcancelstate(cancel_state, NULL);
}
