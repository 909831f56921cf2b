/* SPDX-License-Identifier: MIT */
/*
 * CAP_NETIO=epoll (default): one epoll instance for the process,
 * edge-triggered, each descriptor added once per life with both
 * directions and data = gen << 32 | fd, so an event for a closed or
 * reused number is recognised as stale (fd.h). An eventfd in the set
 * (data KICK) interrupts the holder's epoll_wait.
 *
 * The holder blocks in epoll_pwait2 until its next timer (nanosecond
 * deadline, no rounding to milliseconds); busy workers call poll(), which
 * harvests without blocking when the instance is free.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "io/netio.h"
#include "io/ownfd.h"
#include "sched/worker.h"
#include "util/clock.h"

#define KICK UINT64_MAX
enum { MAX_EVENTS = 512 };

static int epfd = -1;
static int kickfd = -1;
static atomic_int kicked;
static struct epoll_event events[MAX_EVENTS]; /* owned by the holder */

static int epoll_start(void)
{
    atomic_store(&kicked, 0); /* again in a fork's child (start.c) */
    epfd = cap__ownfd_adopt((int)syscall(SYS_epoll_create1, EPOLL_CLOEXEC));
    if (epfd < 0)
        return -errno;
    kickfd = cap__ownfd_adopt((int)syscall(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (kickfd < 0)
        return -errno;
    struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = KICK };
    if (syscall(SYS_epoll_ctl, epfd, EPOLL_CTL_ADD, kickfd, &ev) != 0)
        return -errno;
    return 0;
}

static void epoll_forget(void)
{
    cap__ownfd_close(epfd);
    cap__ownfd_close(kickfd);
    epfd = kickfd = -1;
}

static int epoll_arm(cap__fd *f, int fd, uint32_t gen)
{
    (void)f;
    struct epoll_event ev = {
        .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI | EPOLLET,
        .data.u64 = (uint64_t)gen << 32 | (uint32_t)fd,
    };
    if (syscall(SYS_epoll_ctl, epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
        return 0;
    /* Still registered from a life that ended behind our back (the file
     * lives on through a dup): restamp it. */
    if (errno == EEXIST && syscall(SYS_epoll_ctl, epfd, EPOLL_CTL_MOD, fd, &ev) == 0)
        return 0;
    return -errno;
}

static void epoll_disarm(cap__fd *f, int fd, uint32_t gen)
{
    (void)f;
    (void)gen;
    /* Needed even though close removes registrations: a dup of the file
     * would keep this one alive and reporting (stale gens, dropped). Not
     * called for a sole socket (io/fd.h), whose close is the file's last. */
    struct epoll_event ev = { 0 };
    syscall(SYS_epoll_ctl, epfd, EPOLL_CTL_DEL, fd, &ev);
}

/* kicked is 1 from a kick's write until the harvest that drains the
 * eventfd: a kick that finds it set leaves its wake-up to the write
 * already made. So the flag is cleared after the drain, never before: a
 * kick that set it again between a clear and the read had its write
 * drained with the old one, and with the flag left set every later kick
 * skipped its write while the holder blocked for good (an idle worker
 * slept in epoll_wait with threads a foreign thread had woken: the event
 * an edge-triggered eventfd queued is dropped when a drained counter no
 * longer polls readable). A kick between the read and the clear writes
 * nothing: the harvester is awake and looks for work after it. */
static void kick(void)
{
    if (atomic_exchange(&kicked, 1) == 0) {
        uint64_t one = 1;
        syscall(SYS_write, kickfd, &one, sizeof one);
    }
}

static void harvest(int64_t timeout_ns)
{
    long n;
    if (timeout_ns < 0) {
        n = syscall(SYS_epoll_wait, epfd, events, MAX_EVENTS, -1);
    } else {
        struct timespec ts = cap__ns_to_timespec((uint64_t)timeout_ns);
        n = syscall(SYS_epoll_pwait2, epfd, events, MAX_EVENTS, &ts, NULL, 0);
        if (n < 0 && errno == ENOSYS) /* before Linux 5.11: round up to ms */
            n = syscall(SYS_epoll_wait, epfd, events, MAX_EVENTS,
                        (int)((timeout_ns + 999999) / 1000000));
    }
    for (long i = 0; i < n; i++) {
        uint64_t data = events[i].data.u64;
        if (data == KICK) {
            uint64_t v;
            syscall(SYS_read, kickfd, &v, sizeof v);
            atomic_store(&kicked, 0); /* after the drain (kick, above) */
            continue;
        }
        uint32_t e = events[i].events;
        unsigned dirs = 0;
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLPRI | EPOLLHUP | EPOLLERR))
            dirs |= CAP__IO_RBIT;
        if (e & (EPOLLPRI | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            dirs |= CAP__IO_NODRAIN;
        if (e & (EPOLLOUT | EPOLLHUP | EPOLLERR))
            dirs |= CAP__IO_WBIT;
        cap__io_ready((int)(uint32_t)data, (uint32_t)(data >> 32), dirs);
    }
}

static int wait_fd(void)
{
    return epfd; /* an epoll descriptor polls readable while events are queued */
}

const cap__netio cap__netio_epoll = {
    .name = "epoll",
    .edge = true,
    .close_releases = true,
    .start = epoll_start,
    .forget = epoll_forget,
    .arm = epoll_arm,
    .disarm = epoll_disarm,
    .interest = NULL,
    .harvest = harvest,
    .kick = kick,
    .wait_fd = wait_fd,
};
