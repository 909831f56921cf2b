/* SPDX-License-Identifier: MIT */
/*
 * Choosing the I/O backends at start-up, from the environment:
 *
 *   CAP_NETIO   epoll (default) | poll | uring
 *   CAP_DISKIO  uring (default) | threads | blocking
 *
 * An unknown value exits with status 2 and a message listing the valid
 * ones. A backend that was asked for by name but cannot start here (an
 * old kernel, io_uring disabled by sysctl or a seccomp filter) is also a
 * start-up error, with the reason ("... is not available here"); only the
 * defaults fall back quietly (epoll -> poll, uring -> threads), because
 * nobody asked for them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/diskio.h"
#include "io/io.h"
#include "io/netio.h"
#include "io/sigintr.h"
#include "sched/poller.h"
#include "util/die.h"

const cap__netio *cap__netio_active = &cap__netio_epoll;
const cap__diskio *cap__diskio_active = &cap__diskio_blocking;

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
}

void cap__io_start(void)
{
    start_netio();
    start_diskio();
    cap__sig_start();
}
