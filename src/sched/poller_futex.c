/* SPDX-License-Identifier: MIT */
/*
 * The poller used until an I/O backend takes over: an idle worker sleeps
 * on a kernel futex on its own `sleeping` word (see the idle protocol in
 * worker.h), with the next timer as the absolute deadline.
 */
#include "sched/poller.h"
#include "sched/worker.h"
#include "util/futex.h"

static void futex_poller_wait(cap__worker *w, uint64_t deadline)
{
    cap__futex_wait((uint32_t *)&w->sleeping, 1, deadline);
}

static void futex_poller_wake(cap__worker *w)
{
    cap__futex_wake((uint32_t *)&w->sleeping, 1);
}

const cap__poller cap__poller_futex = {
    .name = "futex",
    .wait = futex_poller_wait,
    .wake = futex_poller_wake,
    .poll = NULL,
    .idle_end = NULL,
    .pending = NULL,
    .spin = NULL,
    .spin_end = NULL,
    .spin_awaits = NULL,
    .spin_ok = NULL,
};

const cap__poller *cap__poller_active = &cap__poller_futex;
