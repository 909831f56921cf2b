/* SPDX-License-Identifier: MIT */
/*
 * Signalfds and a user thread's own pending signals (io/sigfd.h): the
 * mask of a signalfd, and the readiness poll reports for it.
 */
#include "io/sigfd.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/fd.h"

/* The open takes a descriptor number for a moment, as an open by another
 * thread would. No stdio: the library defines some of its names. */
uint64_t cap__sigfd_mask(int fd)
{
    static const char dir[] = "/proc/self/fdinfo/";
    char path[sizeof dir + 12], digits[12], text[512];
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + fd % 10);
        fd /= 10;
    } while (fd > 0);
    memcpy(path, dir, sizeof dir - 1);
    for (int i = 0; i < nd; i++)
        path[sizeof dir - 1 + i] = digits[nd - 1 - i];
    path[sizeof dir - 1 + nd] = '\0';
    int pfd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (pfd < 0)
        return 0;
    long n = syscall(SYS_read, pfd, text, sizeof text - 1);
    syscall(SYS_close, pfd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    const char *at = strstr(text, "sigmask:");
    if (at == NULL)
        return 0;
    at += strlen("sigmask:");
    while (*at == '\t' || *at == ' ')
        at++;
    uint64_t mask = 0; /* hex, highest signal first */
    for (;; at++) {
        int d = *at >= '0' && *at <= '9'   ? *at - '0'
                : *at >= 'a' && *at <= 'f' ? *at - 'a' + 10
                                           : -1;
        if (d < 0)
            return mask;
        mask = mask << 4 | (uint64_t)d;
    }
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

uint64_t cap__sigfd_wakes(const struct pollfd *fds, nfds_t n)
{
    uint64_t wakes = 0;
    for (nfds_t i = 0; i < n; i++)
        if (polled_sigfd(&fds[i]))
            wakes |= cap__sigfd_mask(fds[i].fd);
    return wakes;
}
