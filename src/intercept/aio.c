/* SPDX-License-Identifier: MIT */
/*
 * POSIX AIO. glibc's threads make the transfers through its internal
 * calls, which no wrapper sees: a pipe or socket the runtime made (non-
 * blocking underneath) would give them EAGAIN, so aio_read, aio_write and
 * lio_listio hand their descriptors over first (cap__ic_hand_over: the
 * blocking mode the application believes in, back).
 *
 * The waits: aio_suspend and lio_listio(LIO_WAIT). glibc runs the
 * transfers on kernel threads of its own and wakes a waiter through a
 * futex, so on a user thread either call blocked the worker, and every
 * thread queued there, until the transfers ended (a transfer waiting for
 * such a thread to write its pipe never did). On a user thread,
 * aio_suspend first looks whether a request has already ended (then it
 * returns at once, as glibc's would); otherwise glibc's call runs on the
 * offload pool while only the caller parks. Both are cancellation points
 * (lio_listio: on entry and while it waits for its requests), and a
 * signal ends their wait with EINTR (a SA_RESTART handler restarts it,
 * but not aio_suspend's wait with a timeout: glibc's futex wait then has
 * one, which the kernel never restarts after a handler), as glibc's
 * futex wait would end. Elsewhere, glibc's.
 */
#include <aio.h>
#include <errno.h>

#include "intercept/intercept.h"
#include "io/io.h"

struct aio_wait {
    const struct aiocb *const *list;
    int nent;
    const struct timespec *timeout;
    uint64_t deadline;          /* aio_suspend's timeout ends here */
    int mode;                   /* lio_listio */
    struct aiocb *const *reqs;  /* lio_listio */
    struct sigevent *sev;       /* lio_listio */
    long result;
};

static void run_suspend(void *arg)
{
    struct aio_wait *w = arg;
    struct timespec left = cap__ic_time_left(w->deadline); /* it may start late */
    const struct timespec *t = w->deadline == CAP__FOREVER ? w->timeout : &left;
    w->result = CAP__REAL(aio_suspend)(w->list, w->nent, t) == 0 ? 0 : -errno;
}

static void run_listio(void *arg)
{
    struct aio_wait *w = arg;
    w->result = CAP__REAL(lio_listio)(w->mode, w->reqs, w->nent, w->sev) == 0 ? 0 : -errno;
}

/* Whether one of the nent requests in list (NULL entries skipped) has
 * ended. */
static bool one_ended(const struct aiocb *const list[], int nent)
{
    for (int i = 0; i < nent; i++)
        if (list[i] != NULL && aio_error(list[i]) != EINPROGRESS)
            return true;
    return false;
}

int aio_suspend(const struct aiocb *const list[], int nent, const struct timespec *timeout)
{
    cap__sigsafe sigsafe CAP__SIGSAFE = cap__sigsafe_enter();
    if (!cap__ic_enter())
        return CAP__REAL(aio_suspend)(list, nent, timeout);
    if (nent > 0 && one_ended(list, nent))
        return 0;
    struct aio_wait w = { .list = list, .nent = nent, .timeout = timeout,
                          .deadline = cap__ic_rel_deadline(timeout) };
    /* With a timeout glibc's futex wait ends with EINTR after any handler
     * (the kernel's restart block is not taken), SA_RESTART or not. */
    cap__intr in = timeout != NULL ? cap__intr_always : cap__intr_restart;
    in.cancel = true;
    /* Still queued for a pool thread at the timeout: glibc's call with no
     * time left, which looks once (EAGAIN if none has ended). */
    return (int)cap__ic_ret_cancel(
        cap__offload_call_until(run_suspend, &w, &w.result, &in, w.deadline, run_suspend));
}

/* (struct aiocb64 is struct aiocb on 64-bit Linux.) */
int aio_suspend64(const struct aiocb64 *const list[], int nent, const struct timespec *timeout)
{
    return aio_suspend((const struct aiocb *const *)list, nent, timeout);
}

int aio_read(struct aiocb *cb)
{
    cap__ic_hand_over(cb->aio_fildes);
    return CAP__REAL(aio_read)(cb);
}

int aio_read64(struct aiocb64 *cb)
{
    return aio_read((struct aiocb *)cb);
}

int aio_write(struct aiocb *cb)
{
    cap__ic_hand_over(cb->aio_fildes);
    return CAP__REAL(aio_write)(cb);
}

int aio_write64(struct aiocb64 *cb)
{
    return aio_write((struct aiocb *)cb);
}

int lio_listio(int mode, struct aiocb *const list[], int nent, struct sigevent *sev)
{
    for (int i = 0; i < nent; i++)
        if (list[i] != NULL && list[i]->aio_lio_opcode != LIO_NOP)
            cap__ic_hand_over(list[i]->aio_fildes);
    if (mode != LIO_WAIT || !cap__ic_enter())
        return CAP__REAL(lio_listio)(mode, list, nent, sev);
    struct aio_wait w = { .mode = mode, .reqs = list, .nent = nent, .sev = sev };
    cap__intr in = cap__ic_intr_cancel(CAP__FOREVER);
    return (int)cap__ic_ret_cancel(cap__offload_call(run_listio, &w, &w.result, &in));
}

int lio_listio64(int mode, struct aiocb64 *const list[], int nent, struct sigevent *sev)
{
    return lio_listio(mode, (struct aiocb *const *)list, nent, sev);
}
