/* SPDX-License-Identifier: MIT */
/*
 * Signalfds and a user thread's own pending signals (io/sigfd.h): the
 * mask of a signalfd, and the readiness poll and epoll report for it.
 */
#include "io/sigfd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/usercheck.h"
#include "io/fd.h"

/* Opens /proc/self/fdinfo/<fd>: -1 if it cannot. The open takes a
 * descriptor number until close_fdinfo, as an open by another thread
 * would. A handler run on this kernel thread meanwhile would see it: an
 * open() there got a number one higher than the lowest free, which a
 * single-threaded program can tell (POSIX: the lowest). So signals wait
 * on this kernel thread from the open to the close (*saved: its mask
 * before). No stdio: the library defines some of its names. */
static int open_fdinfo(int fd, uint64_t *saved)
{
    static const char dir[] = "/proc/self/fdinfo/";
    char path[sizeof dir + 12], digits[12];
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + fd % 10);
        fd /= 10;
    } while (fd > 0);
    memcpy(path, dir, sizeof dir - 1);
    for (int i = 0; i < nd; i++)
        path[sizeof dir - 1 + i] = digits[nd - 1 - i];
    path[sizeof dir - 1 + nd] = '\0';
    uint64_t all = ~UINT64_C(0);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, saved, sizeof all);
    int pfd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (pfd < 0) {
        int e = errno;
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, saved, NULL, sizeof *saved);
        errno = e;
    }
    return pfd;
}

/* Closes what open_fdinfo opened, and lets this kernel thread's signals
 * come again. */
static void close_fdinfo(int pfd, const uint64_t *saved)
{
    int e = errno;
    syscall(SYS_close, pfd);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, saved, NULL, sizeof *saved);
    errno = e;
}

/* The hex number at *at (after blanks), advancing *at past it. */
static uint64_t hex_at(const char **at)
{
    const char *p = *at;
    while (*p == '\t' || *p == ' ')
        p++;
    uint64_t v = 0;
    for (;; p++) {
        int d = *p >= '0' && *p <= '9'   ? *p - '0'
                : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                                         : -1;
        if (d < 0)
            break;
        v = v << 4 | (uint64_t)d;
    }
    *at = p;
    return v;
}

uint64_t cap__sigfd_mask(int fd)
{
    char text[512];
    uint64_t saved;
    int pfd = open_fdinfo(fd, &saved);
    if (pfd < 0)
        return 0;
    long n = syscall(SYS_read, pfd, text, sizeof text - 1);
    close_fdinfo(pfd, &saved);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    const char *at = strstr(text, "sigmask:");
    if (at == NULL)
        return 0;
    at += strlen("sigmask:");
    return hex_at(&at); /* highest signal first */
}

/* fds[i]'s record if it is a signalfd of ours polled for POLLIN. */
static bool polled_sigfd(const struct pollfd *p)
{
    cap__fd *f = p->fd >= 0 ? cap__fd_peek(p->fd) : NULL;
    return f != NULL && cap__fd_has(f, CAP__FDF_SIGNALFD) && (p->events & POLLIN);
}

int cap__sigfd_poll(struct pollfd *fds, nfds_t n, cap__thread *self)
{
    int more = 0;
    for (nfds_t i = 0; i < n; i++) {
        if ((fds[i].revents & POLLIN) || !polled_sigfd(&fds[i]) ||
            !(atomic_load(&self->sig_pending) & cap__sigfd_mask(fds[i].fd)))
            continue;
        if (fds[i].revents == 0)
            more++;
        fds[i].revents |= POLLIN;
    }
    return more;
}

/* ---- epoll sets ------------------------------------------------------------ */

/* One registration of an epoll set, as its fdinfo shows it
 * ("tfd: %8d events: %8x data: %16llx ..." since Linux 3.8). */
struct ep_item {
    int fd;
    uint32_t events;
    uint64_t data;
};

/* Parses the NUL-terminated line at into *it; false if it is no "tfd:" line. */
static bool parse_item(const char *at, struct ep_item *it)
{
    if (strncmp(at, "tfd:", 4) != 0)
        return false;
    at += 4;
    while (*at == ' ' || *at == '\t')
        at++;
    int fd = 0;
    for (; *at >= '0' && *at <= '9'; at++)
        fd = fd * 10 + (*at - '0');
    const char *ev = strstr(at, "events:"), *data = strstr(at, "data:");
    if (ev == NULL || data == NULL)
        return false;
    ev += strlen("events:");
    data += strlen("data:");
    it->fd = fd;
    it->events = (uint32_t)hex_at(&ev);
    it->data = hex_at(&data);
    return true;
}

/* What one epoll wait adds: to ev[0, n) (the kernel's), up to max. */
struct ep_add {
    int epfd;
    struct epoll_event *ev;
    int n, max;
    cap__thread *self;
    uint64_t pending; /* self's own pending signals as the look began */
    bool fault;       /* ev[n] could not be written */
    bool owed;        /* one was due that found no room (n == max) */
};

/* Reports it if it is a signalfd of ours asking for EPOLLIN, one of its
 * mask is pending for the thread, and for an edge-triggered one, not
 * reported since its send (sig_edge_told). Level-triggered, it is
 * reported at every wait while the signal is pending, as the kernel's. */
static void add_item(struct ep_add *a, const struct ep_item *it)
{
    /* A one-shot registration that fired shows no EPOLLIN until
     * EPOLL_CTL_MOD re-arms it. */
    if (!(it->events & EPOLLIN))
        return;
    cap__fd *f = cap__fd_peek(it->fd);
    if (f == NULL || !cap__fd_has(f, CAP__FDF_SIGNALFD))
        return;
    uint64_t due = a->pending & cap__sigfd_mask(it->fd);
    if (it->events & EPOLLET)
        due &= ~atomic_load(&a->self->sig_edge_told);
    if (due == 0)
        return;
    /* Reported by the kernel already (a process-directed signal of its
     * mask is pending too): not twice. Its data is the one mark the
     * caller sees, so an equal one is taken for it. */
    bool reported = false;
    for (int i = 0; i < a->n && !reported; i++)
        reported = a->ev[i].data.u64 == it->data && (a->ev[i].events & EPOLLIN);
    if (!reported) {
        if (a->n >= a->max) {
            a->owed = true;
            return;
        }
        if (!cap__user_writable(&a->ev[a->n], sizeof a->ev[a->n])) {
            a->fault = true;
            return;
        }
        /* Disarmed as the kernel disarms a one-shot registration that
         * fired: its flags stay, its events go. A registration changed
         * or removed meanwhile (the number is another file's) is not
         * reported. */
        if (it->events & EPOLLONESHOT) {
            struct epoll_event off = {
                .events = it->events & (EPOLLET | EPOLLONESHOT | EPOLLWAKEUP),
                .data.u64 = it->data,
            };
            if (syscall(SYS_epoll_ctl, a->epfd, EPOLL_CTL_MOD, it->fd, &off) != 0)
                return;
        }
        a->ev[a->n++] = (struct epoll_event){ .events = EPOLLIN, .data.u64 = it->data };
    }
    if (it->events & EPOLLET)
        atomic_fetch_or(&a->self->sig_edge_told, due);
}

/* Adds to a->ev the set's signalfds of ours that are due, after what it
 * holds, until one is owed (no room), a write faults or the set's
 * registrations end. */
static void add_own(struct ep_add *a)
{
    uint64_t saved;
    int pfd = open_fdinfo(a->epfd, &saved);
    if (pfd < 0)
        return;
    /* Line by line through a buffer: a set may hold thousands (a line
     * longer than the buffer is no registration line, and is skipped). */
    char text[4096];
    size_t len = 0;
    bool skip = false;
    long got;
    while (!a->owed && !a->fault &&
           (got = syscall(SYS_read, pfd, text + len, sizeof text - 1 - len)) > 0) {
        len += (size_t)got;
        text[len] = '\0';
        char *line = text, *nl;
        while (!a->owed && !a->fault && (nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            struct ep_item it;
            if (!skip && parse_item(line, &it))
                add_item(a, &it);
            skip = false;
            line = nl + 1;
        }
        len -= (size_t)(line - text);
        memmove(text, line, len);
        if (len == sizeof text - 1) { /* no newline in a full buffer */
            len = 0;
            skip = true;
        }
    }
    close_fdinfo(pfd, &saved);
}

int cap__sigfd_epoll(int epfd, struct epoll_event *ev, int max, cap__thread *self)
{
    struct ep_add a = { .epfd = epfd, .ev = ev, .max = max, .self = self,
                        .pending = atomic_load(&self->sig_pending) };
    /* Whose turn it is when both cannot fit: the kernel's first, unless
     * the last look of the thread owed one of ours. Always the kernel's
     * first would starve ours behind a descriptor that stays ready (and
     * ours first the kernel's behind a signal left pending); Linux moves
     * a reported level-triggered registration to the back of the ready
     * list, so both come in turn. */
    bool ours_first = self->sig_epoll_ours_first && a.pending != 0;
    self->sig_epoll_ours_first = false;
    if (!ours_first) {
        long k = syscall(SYS_epoll_wait, epfd, ev, max, 0);
        if (k < 0)
            return -errno;
        a.n = (int)k;
        if (a.pending == 0)
            return a.n;
        add_own(&a);
        self->sig_epoll_ours_first = a.owed;
        return a.n == 0 && a.fault ? -EFAULT : a.n;
    }
    add_own(&a);
    if (a.n == 0 && a.fault)
        return -EFAULT;
    if (a.n >= max)
        return a.n; /* the kernel's first next time */
    long k = syscall(SYS_epoll_wait, epfd, ev + a.n, max - a.n, 0);
    if (k < 0)
        return a.n > 0 ? a.n : -errno;
    /* A registration the kernel reports too (a process-directed signal
     * of its mask is pending as well) is reported once: its data is the
     * one mark the caller sees. */
    int out = a.n;
    for (int i = a.n; i < a.n + (int)k; i++) {
        bool twice = false;
        for (int j = 0; j < a.n && !twice; j++)
            twice = (ev[i].events & EPOLLIN) && ev[i].data.u64 == ev[j].data.u64;
        if (!twice)
            ev[out++] = ev[i];
    }
    return out;
}
