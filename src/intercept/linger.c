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
 * timeout (CAP__FDF_LINGER, net.c).
 *
 * Other sockets that linger (a duplicated one, whose close may not be
 * its file's last; one inherited, received, made inside a signal handler
 * or set by a raw system call, which the wrapper did not see) cannot
 * have that wait made here: only the kernel knows whether the close is
 * the last, and turning lingering off would change it for the file's
 * other numbers. Their close is made on the offload pool instead
 * (cap__ic_close_lingering), so only the caller waits, as long as the
 * kernel decides. Which ones: every close by a user thread of a socket
 * that is not sole asks the kernel (SO_LINGER, then SO_PROTOCOL); sole
 * sockets, files, pipes, and descriptors not classified yet make no call.
 * Every open() leaves its record unclassified until the first transfer
 * (io/fd.h), and a file opened, mapped and closed would otherwise pay an
 * ENOTSOCK for nothing; a path never opens a socket. So a socket the
 * wrappers never saw used (inherited or received, then closed untouched)
 * still closes in the kernel, on the worker. A signal sent to the caller ends the kernel's
 * wait, as a signal pending on the closing thread does under NPTL (the
 * pool thread is kicked); the close returns 0 all the same. If the signal
 * comes while the job still waits for a pool thread, the job leaves the
 * queue, and the close is made on the worker with lingering turned off
 * first: what the kernel does when a signal is already pending as the
 * close starts is end the wait at once. Not in a signal handler: there
 * the close is made in place, as before.
 */
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <capriccio.h>

#include "intercept/intercept.h"
#include "io/io.h"
#include "io/sigintr.h"
#include "util/clock.h"

enum { FIRST_SLICE_NS = 1000000, LAST_SLICE_NS = 64000000 };

/* SO_LINGER's timeout in seconds if fd is a TCP socket whose close waits
 * for it; else 0 (lingering off, a zero timeout, not TCP, not a socket). */
static int linger_seconds(int fd)
{
    struct linger lg;
    socklen_t len = sizeof lg;
    int proto = 0;
    socklen_t plen = sizeof proto;
    if (cap__sys6(SYS_getsockopt, fd, SOL_SOCKET, SO_LINGER, (long)&lg, (long)&len, 0) != 0 ||
        !lg.l_onoff || lg.l_linger <= 0 ||
        cap__sys6(SYS_getsockopt, fd, SOL_SOCKET, SO_PROTOCOL, (long)&proto, (long)&plen, 0) != 0 ||
        proto != IPPROTO_TCP)
        return 0;
    return lg.l_linger;
}

/* intercept.h */
void cap__ic_linger_before_close(int fd, cap__fd *f)
{
    int seconds;
    if (!cap__fd_has(f, CAP__FDF_SOLE) || (seconds = linger_seconds(fd)) == 0)
        return;
    int cancel_state;
    cap_thread_setcancelstate(CAP_CANCEL_DISABLE, &cancel_state);
    uint64_t deadline = cap__deadline_after(cap__timeout_ns((uint64_t)seconds, 0));
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

/* A close made on the offload pool: whether it ran there, and its result. */
struct pool_close {
    int fd;
    bool ran;
    long result;
};

static void run_close(void *arg)
{
    struct pool_close *c = arg;
    c->ran = true;
    long r = cap__sys6(SYS_close, c->fd, 0, 0, 0, 0, 0);
    /* The descriptor is gone whatever close says: never made again (the
     * pool retries a call that returns EINTR), it could close another
     * file that took the number meanwhile. */
    c->result = r == -EINTR ? 0 : r;
}

/* Whether the close of fd (record f, or NULL) by the calling thread
 * would wait in the kernel for SO_LINGER's timeout, where
 * cap__ic_linger_before_close cannot wait for it (see the top). */
static bool lingers_in_kernel(int fd, cap__fd *f)
{
    return f != NULL && atomic_load_explicit(&f->kind, memory_order_relaxed) == CAP__FD_SOCKET &&
           !cap__fd_has(f, CAP__FDF_SOLE) && !cap__in_signal_handler() && linger_seconds(fd) != 0;
}

/* intercept.h */
bool cap__ic_close_lingering(int fd, cap__fd *f, int *result)
{
    if (!lingers_in_kernel(fd, f))
        return false;
    struct pool_close c = { fd, false, 0 };
    long r = cap__offload_call(run_close, &c, &c.result, &cap__intr_always);
    if (!c.ran) {
        /* A signal took the job off the queue (see the top). */
        struct linger off = { 0, 0 };
        cap__sys6(SYS_setsockopt, fd, SOL_SOCKET, SO_LINGER, (long)&off, sizeof off, 0);
        r = cap__sys6(SYS_close, fd, 0, 0, 0, 0, 0);
    } else {
        r = c.result; /* a close that was interrupted still closed */
    }
    *result = (int)cap__ic_ret(r);
    return true;
}

/* ---- closes inside other calls ------------------------------------------ */

/* A dup onto a descriptor, made on the offload pool. */
struct pool_dup {
    int oldfd, newfd, flags;
    bool ran;
    long result;
};

static void run_dup(void *arg)
{
    struct pool_dup *c = arg;
    c->ran = true;
    c->result = cap__sys6(SYS_dup3, c->oldfd, c->newfd, c->flags, 0, 0, 0);
}

/* intercept.h */
bool cap__ic_dup_lingering(int oldfd, int newfd, int flags, cap__fd *f, long *result)
{
    if (!lingers_in_kernel(newfd, f))
        return false;
    struct pool_dup c = { oldfd, newfd, flags, false, 0 };
    cap__offload_call(run_dup, &c, &c.result, &cap__intr_always);
    if (!c.ran) { /* a signal took the job off the queue: as close does */
        struct linger off = { 0, 0 };
        cap__sys6(SYS_setsockopt, newfd, SOL_SOCKET, SO_LINGER, (long)&off, sizeof off, 0);
        c.result = cap__sys6(SYS_dup3, oldfd, newfd, flags, 0, 0, 0);
    }
    *result = c.result;
    return true;
}

/* Up to BATCH descriptors of a range whose close may linger, collected
 * by one walk of the table (whose callbacks must not park). */
enum { BATCH = 32 };
struct lingering_batch {
    int fds[BATCH];
    int n;
};

static void collect_lingering(int fd, cap__fd *f, void *arg)
{
    struct lingering_batch *b = arg;
    if (b->n == BATCH)
        return;
    /* Those close() treats: a sole socket its wrapper saw set to linger,
     * and any socket that is not sole (the kernel is asked below). */
    if ((cap__fd_has(f, CAP__FDF_LINGER) && cap__fd_has(f, CAP__FDF_SOLE)) ||
        (atomic_load_explicit(&f->kind, memory_order_relaxed) == CAP__FD_SOCKET &&
         !cap__fd_has(f, CAP__FDF_SOLE)))
        b->fds[b->n++] = fd;
}

/* intercept.h */
void cap__ic_linger_before_close_range(unsigned first, unsigned last)
{
    for (;;) {
        struct lingering_batch b = { .n = 0 };
        cap__fd_foreach_range(first, last, collect_lingering, &b);
        for (int i = 0; i < b.n; i++)
            if (cap__ic_linger_first(b.fds[i]))
                close(b.fds[i]); /* on the pool; closed now rather than in the range */
        if (b.n < BATCH || b.fds[BATCH - 1] == (int)last)
            return;
        first = (unsigned)b.fds[BATCH - 1] + 1;
    }
}

/* intercept.h */
bool cap__ic_linger_first(int fd)
{
    cap__fd *f = fd >= 0 ? cap__fd_peek(fd) : NULL;
    if (f == NULL || !cap__ic_user())
        return false;
    /* As close(): the parked wait of a sole socket, which turns lingering
     * off; then only one that is not sole may still wait in the kernel. */
    if (cap__fd_has(f, CAP__FDF_LINGER))
        cap__ic_linger_before_close(fd, f);
    return lingers_in_kernel(fd, f);
}
