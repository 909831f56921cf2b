/* SPDX-License-Identifier: MIT */
/* Description: aio_suspend and gai_suspend given a timeout end early, as
 * glibc's do, when a handler installed with SA_RESTART runs in the
 * waiting thread: aio_suspend fails with EINTR, gai_suspend gives
 * EAI_INTR (glibc's futex wait with a timeout is one the kernel does not
 * restart after a handler). Before, they ran on the offload pool as if
 * without a timeout: the handler ran and the wait went on to its timeout
 * (EAGAIN, EAI_AGAIN). The waits are an aio_read of an empty pipe and a
 * lookup of a dotless name held up while glibc's resolver opens
 * HOSTALIASES, a FIFO here, until this test opens its other end. */
#include <aio.h>
#include <netdb.h>

#include "io/io_util.h"

static atomic_int hits, done;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&hits, 1);
}

/* Sends SIGUSR1 to t every millisecond until `done`. */
static void signal_thread_until_done(cap_thread_t t)
{
    while (!atomic_load(&done)) {
        CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
        cap_sleep_ns(1000000);
    }
}

static void *aio_waiter(void *arg)
{
    const int *p = arg;
    int fd = p[0];
    char c;
    struct aiocb cb;
    memset(&cb, 0, sizeof cb);
    cb.aio_fildes = fd;
    cb.aio_buf = &c;
    cb.aio_nbytes = 1;
    cb.aio_sigevent.sigev_notify = SIGEV_NONE;
    CHECK_EQ(aio_read(&cb), 0);
    const struct aiocb *list[1] = { &cb };
    struct timespec timeout = { 20, 0 };
    int r = aio_suspend(list, 1, &timeout);
    int err = errno;
    atomic_store(&done, 1);
    CHECK_EQ(r, -1);
    CHECK_EQ(err, EINTR);
    CHECK(atomic_load(&hits) > 0);
    CHECK_EQ(aio_error(&cb), EINPROGRESS);
    CHECK_EQ(write(p[1], "x", 1), 1); /* the transfer ends */
    CHECK_EQ(aio_suspend(list, 1, NULL), 0);
    CHECK_EQ(aio_return(&cb), 1);
    return NULL;
}

static struct gaicb cb = { .ar_name = "capriccionodotsname" };

static void *gai_waiter(void *arg)
{
    (void)arg;
    struct gaicb *list[1] = { &cb };
    CHECK_EQ(getaddrinfo_a(GAI_NOWAIT, list, 1, NULL), 0);
    const struct gaicb *wait_list[1] = { &cb };
    struct timespec timeout = { 20, 0 };
    int r = gai_suspend(wait_list, 1, &timeout);
    atomic_store(&done, 1);
    CHECK_EQ(r, EAI_INTR);
    CHECK_EQ(gai_error(&cb), EAI_INPROGRESS); /* still held up by the FIFO */
    return NULL;
}

int main(void)
{
    install_handler(SIGUSR1, on_usr1, SA_RESTART);

    int p[2];
    CHECK_EQ(pipe(p), 0);
    cap_thread_t t = spawn(aio_waiter, p);
    signal_thread_until_done(t);
    join(t);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);

    char fifo[32];
    temp_fifo(fifo);
    CHECK_EQ(setenv("HOSTALIASES", fifo, 1), 0);
    atomic_store(&hits, 0);
    atomic_store(&done, 0);
    t = spawn(gai_waiter, NULL);
    signal_thread_until_done(t);
    join(t);
    /* Let the resolver read the (empty) alias file; the lookup then ends. */
    while (gai_error(&cb) == EAI_INPROGRESS) {
        int w = open(fifo, O_WRONLY | O_NONBLOCK);
        if (w >= 0)
            CHECK_EQ(close(w), 0);
        cap_sleep_ns(1000000);
    }
    if (cb.ar_result != NULL)
        freeaddrinfo(cb.ar_result);
    CHECK_EQ(unlink(fifo), 0);
    return 0;
}
