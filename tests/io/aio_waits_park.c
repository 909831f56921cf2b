/* SPDX-License-Identifier: MIT */
/* Description: POSIX AIO's waits park only the calling thread: the thread
 * whose write ends the transfer runs meanwhile on the same worker
 * (CAP_WORKERS=1), so before (glibc's futex wait blocked the worker) each
 * of these hung:
 *  - aio_suspend on an aio_read of an empty pipe returns once a thread
 *    writes it, with the transfer's bytes and result; on a request that
 *    has ended it returns at once;
 *  - lio_listio(LIO_WAIT) with reads of two pipes returns when both are
 *    written;
 * and: a timeout gives EAGAIN; a signal (handler without SA_RESTART)
 * ends aio_suspend with EINTR; a thread cancelled in it ends. */
#include <aio.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "io/io_util.h"

struct delayed_write {
    int fd;
    const char *text;
};

static void *write_later(void *arg)
{
    struct delayed_write *w = arg;
    cap_usleep(20000); /* the reader waits first */
    size_t n = strlen(w->text);
    CHECK_EQ(write(w->fd, w->text, n), (ssize_t)n);
    return NULL;
}

static void read_request(struct aiocb *cb, int fd, char *buf, size_t n)
{
    memset(cb, 0, sizeof *cb);
    cb->aio_fildes = fd;
    cb->aio_buf = buf;
    cb->aio_nbytes = n;
    cb->aio_sigevent.sigev_notify = SIGEV_NONE;
}

static void suspend_until_written(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    char buf[16] = { 0 };
    struct aiocb cb;
    read_request(&cb, p[0], buf, 5);
    CHECK_EQ(aio_read(&cb), 0);
    struct delayed_write w = { p[1], "hello" };
    cap_thread_t t = spawn(write_later, &w);
    const struct aiocb *list[] = { NULL, &cb };
    CHECK_EQ(aio_suspend(list, 2, NULL), 0);
    CHECK_EQ(aio_error(&cb), 0);
    CHECK_EQ(aio_return(&cb), 5);
    CHECK_EQ(memcmp(buf, "hello", 5), 0);
    join(t);
    CHECK_EQ(aio_suspend(list, 2, NULL), 0); /* ended: at once */
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
}

static void listio_waits_for_all(void)
{
    int a[2], b[2];
    CHECK_EQ(pipe(a), 0);
    CHECK_EQ(pipe(b), 0);
    char ba[8] = { 0 }, bb[8] = { 0 };
    struct aiocb ca, cb;
    read_request(&ca, a[0], ba, 3);
    read_request(&cb, b[0], bb, 4);
    ca.aio_lio_opcode = LIO_READ;
    cb.aio_lio_opcode = LIO_READ;
    struct delayed_write wa = { a[1], "one" }, wb = { b[1], "four" };
    cap_thread_t ta = spawn(write_later, &wa), tb = spawn(write_later, &wb);
    struct aiocb *list[] = { &ca, &cb };
    CHECK_EQ(lio_listio(LIO_WAIT, list, 2, NULL), 0);
    CHECK_EQ(aio_return(&ca), 3);
    CHECK_EQ(aio_return(&cb), 4);
    CHECK_EQ(memcmp(ba, "one", 3), 0);
    CHECK_EQ(memcmp(bb, "four", 4), 0);
    join(ta);
    join(tb);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(close(a[i]), 0);
        CHECK_EQ(close(b[i]), 0);
    }
}

/* ---- a timeout, a signal, a cancel ------------------------------------------- */

static int idle_pipe[2];
static struct aiocb idle_cb;
static char idle_buf[4];
static atomic_int usr1_runs, waiting;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&usr1_runs, 1);
}

static void *interrupted(void *arg)
{
    (void)arg;
    const struct aiocb *list[] = { &idle_cb };
    atomic_store(&waiting, 1);
    errno = 0;
    CHECK_EQ(aio_suspend(list, 1, NULL), -1);
    CHECK_EQ(errno, EINTR);
    return NULL;
}

static void *cancelled(void *arg)
{
    (void)arg;
    const struct aiocb *list[] = { &idle_cb };
    atomic_store(&waiting, 1);
    aio_suspend(list, 1, NULL); /* cancelled while it waits */
    CHECK(0);
    return NULL;
}

static void wait_waiting(void)
{
    while (!atomic_load(&waiting))
        cap_usleep(1000);
    cap_usleep(5000); /* in its wait by now */
}

static void ends_early(void)
{
    CHECK_EQ(pipe(idle_pipe), 0);
    read_request(&idle_cb, idle_pipe[0], idle_buf, 1);
    CHECK_EQ(aio_read(&idle_cb), 0);
    const struct aiocb *list[] = { &idle_cb };
    struct timespec ten_ms = { 0, 10000000 };
    errno = 0;
    CHECK_EQ(aio_suspend(list, 1, &ten_ms), -1);
    CHECK_EQ(errno, EAGAIN);

    install_handler(SIGUSR1, on_usr1, 0);
    atomic_store(&waiting, 0);
    cap_thread_t t = spawn(interrupted, NULL);
    wait_waiting();
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    join(t);
    CHECK_EQ(atomic_load(&usr1_runs), 1);

    atomic_store(&waiting, 0);
    t = spawn(cancelled, NULL);
    wait_waiting();
    CHECK_EQ(cap_thread_cancel(t), 0);
    void *ret = NULL;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK(ret == CAP_CANCELED);

    CHECK_EQ(aio_error(&idle_cb), EINPROGRESS); /* untouched by the ended waits */
    CHECK_EQ(write(idle_pipe[1], "x", 1), 1);
    CHECK_EQ(aio_suspend(list, 1, NULL), 0);
    CHECK_EQ(aio_return(&idle_cb), 1);
    CHECK_EQ(idle_buf[0], 'x');
    CHECK_EQ(close(idle_pipe[0]), 0);
    CHECK_EQ(close(idle_pipe[1]), 0);
}

int main(void)
{
    suspend_until_written();
    listio_waits_for_all();
    ends_early();
    return 0;
}
