/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous name resolution's waits: gai_suspend and
 * getaddrinfo_a(GAI_WAIT). glibc resolves on kernel threads of its own
 * and wakes a waiter through a futex, so on a user thread either call
 * blocked the worker until the lookups ended (a DNS answer can take
 * seconds). On a user thread gai_suspend first looks whether any request
 * is still in progress (if none is, it returns EAI_ALLDONE at once, as
 * glibc's does: glibc waits for one in progress even when others have
 * ended); otherwise glibc's call runs on the offload pool while only the
 * caller parks.
 * getaddrinfo_a(GAI_WAIT) submits its requests without waiting and then
 * waits for each through that gai_suspend.
 * Both are cancellation points, as glibc's are; a signal ends
 * gai_suspend's wait with EAI_INTR (a SA_RESTART handler restarts a wait
 * without a timeout; with one, glibc's futex wait ends after any handler,
 * as the kernel does not restart it), while getaddrinfo_a(GAI_WAIT), as
 * glibc's, waits on after a handler. Elsewhere, glibc's.
 */
#include <errno.h>
#include <netdb.h>

#include "intercept/intercept.h"
#include "io/io.h"

struct gai_wait {
    const struct gaicb *const *list;
    int n;
    const struct timespec *timeout;
    uint64_t deadline;          /* the timeout ends here (CAP__FOREVER: none) */
    int code;                   /* glibc's result */
    long result;                /* 0 once code is glibc's; -EINTR to retry a kicked call */
};

static void run_suspend(void *arg)
{
    struct gai_wait *w = arg;
    struct timespec left = cap__ic_time_left(w->deadline); /* it may start late */
    const struct timespec *t = w->deadline == CAP__FOREVER ? w->timeout : &left;
    w->code = CAP__REAL(gai_suspend)(w->list, w->n, t);
    w->result = w->code == EAI_INTR ? -EINTR : 0;
}

/* w's gai_suspend made on the pool; glibc's result, EAI_INTR if a signal
 * ended the wait. A cancel acts. */
static int wait_on_pool(struct gai_wait *w)
{
    /* With a timeout glibc's futex wait ends with EAI_INTR after any
     * handler (the kernel's restart block is not taken), SA_RESTART or not. */
    cap__intr in = w->timeout != NULL ? cap__intr_always : cap__intr_restart;
    in.cancel = true;
    /* Still queued for a pool thread at the timeout: glibc's call with no
     * time left, which looks once (EAI_AGAIN if none has ended). */
    long r = cap__offload_call_until(run_suspend, w, &w->result, &in, w->deadline, run_suspend);
    if (r == -ECANCELED)
        cap__cancel_point();
    return r == -EINTR ? EAI_INTR : w->code;
}

int gai_suspend(const struct gaicb *const list[], int n, const struct timespec *timeout)
{
    if (!cap__ic_enter())
        return CAP__REAL(gai_suspend)(list, n, timeout);
    bool waiting = false;
    for (int i = 0; i < n && !waiting; i++)
        waiting = list[i] != NULL && gai_error((struct gaicb *)list[i]) == EAI_INPROGRESS;
    if (!waiting) /* glibc's answer when none of them is in progress */
        return EAI_ALLDONE;
    struct gai_wait w = { .list = list, .n = n, .timeout = timeout,
                          .deadline = cap__ic_rel_deadline(timeout) };
    return wait_on_pool(&w);
}

/* GAI_WAIT: the requests submitted without waiting, then waited for one
 * by one through gai_suspend above (glibc's own wait, resubmitted after
 * a kick, would submit them twice). */
int getaddrinfo_a(int mode, struct gaicb *list[], int n, struct sigevent *sev)
{
    if (mode != GAI_WAIT || !cap__ic_enter())
        return CAP__REAL(getaddrinfo_a)(mode, list, n, sev);
    int rc = CAP__REAL(getaddrinfo_a)(GAI_NOWAIT, list, n, NULL);
    if (rc != 0)
        return rc;
    /* glibc's GAI_WAIT waits again after a handler (it never says
     * EAI_INTR): only a cancel ends it early. */
    for (int i = 0; i < n; i++) {
        while (list[i] != NULL && gai_error(list[i]) == EAI_INPROGRESS) {
            const struct gaicb *one[1] = { list[i] };
            gai_suspend(one, 1, NULL);
        }
    }
    return 0;
}
