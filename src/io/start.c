/* SPDX-License-Identifier: MIT */
/*
 * Choosing the I/O backends at start-up, from the environment:
 *
 *   CAP_NETIO   epoll (default) | poll | uring
 *   CAP_DISKIO  uring (default) | threads | blocking
 *   CAP_FILE_WRITES  auto (default) | worker | backend: where buffered
 *               writes to local files that refuse RWF_NOWAIT are made
 *               (io/disk.c, "Buffered writes"); no effect under
 *               CAP_DISKIO=blocking, which makes every call on the worker
 *
 * An unknown value exits with status 2 and a message listing the valid
 * ones. A backend that was asked for by name but cannot start here (an
 * old kernel, io_uring disabled by sysctl or a seccomp filter) is also a
 * start-up error, with the reason ("... is not available here"); only the
 * defaults fall back quietly (epoll -> poll, uring -> threads), because
 * nobody asked for them.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "io/diskio.h"
#include "io/io.h"
#include "io/netio.h"
#include "io/nowait_ring.h"
#include "io/ownfd.h"
#include "io/sigintr.h"
#include "sched/poller.h"
#include "util/die.h"
#include "util/sigctx.h"

/* The process the backends were started in (or a fork's child, which
 * starts its own): a child that shares its memory has another pid. */
static _Atomic pid_t backend_pid;

const cap__netio *cap__netio_active = &cap__netio_epoll;
const cap__diskio *cap__diskio_active = &cap__diskio_blocking;
enum cap__file_writes cap__file_writes = CAP__FILE_WRITES_AUTO;

static _Noreturn void bad_setting(const char *var, const char *value, const char *valid)
{
    cap__say("capriccio: invalid %s=\"%s\"; valid values: %s\n", var, value, valid);
    _exit(2);
}

static _Noreturn void unavailable(const char *var, const char *value, int err)
{
    cap__say("capriccio: %s=%s is not available here: %s\n", var, value, strerror(-err));
    _exit(2);
}

static void start_netio(void)
{
    static const cap__netio *const all[] = { &cap__netio_epoll, &cap__netio_poll,
                                             &cap__netio_uring };
    const char *s = getenv("CAP_NETIO");
    const cap__netio *chosen = NULL;
    if (s == NULL) {
        chosen = &cap__netio_epoll;
    } else {
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            if (strcmp(s, all[i]->name) == 0)
                chosen = all[i];
        if (chosen == NULL)
            bad_setting("CAP_NETIO", s, "epoll (default), poll, uring");
    }
    int rc = chosen->start();
    if (rc != 0 && s == NULL) {
        chosen = &cap__netio_poll;
        rc = chosen->start();
    }
    if (rc != 0)
        unavailable("CAP_NETIO", chosen->name, rc);
    cap__netio_active = chosen;
    cap__poller_active = &cap__poller_netio;
}

static void start_diskio(void)
{
    static const cap__diskio *const all[] = { &cap__diskio_uring, &cap__diskio_threads,
                                              &cap__diskio_blocking };
    const char *s = getenv("CAP_DISKIO");
    const cap__diskio *chosen = NULL;
    if (s == NULL) {
        chosen = &cap__diskio_uring;
    } else {
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            if (strcmp(s, all[i]->name) == 0)
                chosen = all[i];
        if (chosen == NULL)
            bad_setting("CAP_DISKIO", s, "uring (default), threads, blocking");
    }
    int rc = chosen->start();
    if (rc != 0 && s == NULL) {
        chosen = &cap__diskio_threads;
        rc = chosen->start();
    }
    if (rc != 0)
        unavailable("CAP_DISKIO", chosen->name, rc);
    cap__diskio_active = chosen;

    static const char *const writes[] = { [CAP__FILE_WRITES_AUTO] = "auto",
                                          [CAP__FILE_WRITES_WORKER] = "worker",
                                          [CAP__FILE_WRITES_BACKEND] = "backend" };
    const char *w = getenv("CAP_FILE_WRITES");
    if (w != NULL) {
        size_t i = 0;
        while (i < sizeof writes / sizeof writes[0] && strcmp(w, writes[i]) != 0)
            i++;
        if (i == sizeof writes / sizeof writes[0])
            bad_setting("CAP_FILE_WRITES", w, "auto (default), worker, backend");
        cap__file_writes = (enum cap__file_writes)i;
    }
}

/* A fork's child (handover.c). The parent's backend instances are kernel
 * objects the child shares (an epoll set, io_uring rings, eventfds): a
 * registration the child removed (closing an inherited socket), or an
 * event or completion it harvested, would be the parent's lost. So the
 * child forgets every registration and waiter (the waiters are the
 * parent's threads, which never run here: sched/worker.h), lets go of
 * its references to the parent's instances without touching them (the
 * backends' forget(): a ring the child kept mapped and open would live,
 * with the files its polls hold, as long as the child; and each
 * generation of children would hold one set more), and starts its own:
 * the parent's backends, the disk rings and the accept rings
 * (io/nowait_ring.h) one per worker on first use, as at start-up. */
static void forget_waiters(int fd, cap__fd *f, void *arg)
{
    (void)fd;
    (void)arg;
    /* Records with nothing to forget are only read: every page the child
     * writes is copied (for a child that only execs, most of its cost). */
    if (atomic_load_explicit(&f->lock.held, memory_order_relaxed) != 0)
        f->lock = (cap__spin)CAP__SPIN_INIT; /* held by a lost thread */
    if (cap__fd_has(f, CAP__FDF_REGISTERED))
        cap__fd_clear(f, CAP__FDF_REGISTERED);
    if (__atomic_load_n(&f->backend_slot, __ATOMIC_RELAXED) != 0)
        __atomic_store_n(&f->backend_slot, 0, __ATOMIC_RELAXED); /* the parent's arming */
    if (!cap__io_has_waiters(f))
        return;
    cap__spin_lock(&f->lock);
    cap__io_wake_all_locked(f, EBADF); /* only lost threads wait: dropped */
    cap__spin_unlock(&f->lock);
}

/* The child's own descriptor backend: the parent's, else (memory, the
 * descriptor limit) epoll, then poll; none at all stops the child, as at
 * start-up. */
static void start_forked_netio(void)
{
    const cap__netio *const order[] = { cap__netio_active, &cap__netio_epoll, &cap__netio_poll };
    int rc = 0;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        rc = order[i]->start();
        if (rc == 0) {
            cap__netio_active = order[i];
            return;
        }
    }
    cap__die("cannot start an I/O backend in a fork's child: %s\n", strerror(-rc));
}

void cap__io_forked(void)
{
    atomic_store(&backend_pid, (pid_t)cap__sys6(SYS_getpid, 0, 0, 0, 0, 0, 0));
    cap__ownfd_forked();
    cap__idle_forked();
    cap__offload_forked();
    atomic_store(&cap__io_inflight, 0); /* the lost threads' disk and pool calls */
    cap__sig_forked_begin();
    cap__fd_foreach(forget_waiters, NULL);
    if (cap__netio_active->forget != NULL)
        cap__netio_active->forget();
    if (cap__diskio_active->forget != NULL)
        cap__diskio_active->forget();
    cap__nowait_forked();
    start_forked_netio();
    cap__sig_forked_end();
}

void cap__io_at_exit(void)
{
    /* A fork's child ends its own instance's waits (cap__io_forked). */
    if (cap__netio_active->at_exit != NULL && cap__netio_active->at_exit())
        cap__io_unwatch_all();
}

void cap__io_exec_begin(void)
{
    if (cap__netio_active->exec_begin != NULL && !cap__in_signal_handler())
        cap__netio_active->exec_begin();
}

void cap__io_exec_failed(void)
{
    if (cap__netio_active->exec_failed != NULL && !cap__in_signal_handler())
        cap__netio_active->exec_failed();
}

/* A default-terminate signal is ending the process (io/sigintr.h): the
 * backend's polls must let go of their files first, as at an exit, or
 * the sockets outlive the process by milliseconds (netio_uring.c). The
 * process ends right after, so nothing is made unpollable. A fork's
 * child has its own instance (cap__io_forked). */
static void last_step(void)
{
    if (cap__netio_active->at_exit != NULL)
        cap__netio_active->at_exit();
}

void cap__io_exit_now(void)
{
    if ((pid_t)cap__sys6(SYS_getpid, 0, 0, 0, 0, 0, 0) != atomic_load(&backend_pid))
        return;
    last_step();
}

void cap__io_start(void)
{
    atomic_store(&backend_pid, (pid_t)cap__sys6(SYS_getpid, 0, 0, 0, 0, 0, 0));
    start_netio();
    start_diskio();
    cap__sig_start();
    if (cap__netio_active->at_exit != NULL)
        cap__sig_last_step_arm(last_step);
}
