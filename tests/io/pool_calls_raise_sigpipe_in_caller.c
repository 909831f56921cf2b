/* SPDX-License-Identifier: MIT */
/* Description: a call made on the offload pool that writes to a pipe
 * whose reader is gone raises SIGPIPE in the calling thread, as the call
 * made by that thread under glibc does: pclose() of a popen(..., "w")
 * stream with output buffered for a command that has closed its input,
 * and psiginfo() with stderr such a pipe. The program's handler runs once
 * for each, in the caller. Before, the kernel raised the signal on the
 * pool thread, where every signal is blocked: it stayed pending there
 * and the handler never ran (nor, without one, did the process end). */
#include <poll.h>

#include "io/io_util.h"

static atomic_int hits;
static atomic_int in_caller;
static cap_thread_t caller;

static void on_pipe(int sig)
{
    (void)sig;
    atomic_fetch_add(&hits, 1);
    if (cap_thread_equal(cap_thread_self(), caller))
        atomic_fetch_add(&in_caller, 1);
}

/* Waits until the pipe end fd has no reader left. */
static void wait_reader_gone(int fd)
{
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        CHECK_EQ(poll(&p, 1, -1), 1);
        if (p.revents & POLLERR)
            return;
        cap_sleep_ns(1000000);
    }
}

static void *body(void *arg)
{
    (void)arg;
    caller = cap_thread_self();

    FILE *p = popen("exec 0<&-", "w"); /* a command that reads nothing */
    CHECK(p != NULL);
    wait_reader_gone(fileno(p));
    CHECK(fputs("buffered", p) >= 0); /* kept in the stream's buffer */
    CHECK_EQ(atomic_load(&hits), 0);
    pclose(p); /* its flush fails with EPIPE */
    CHECK_EQ(atomic_load(&hits), 1);
    CHECK_EQ(atomic_load(&in_caller), 1);

    int sp[2];
    CHECK_EQ(pipe(sp), 0);
    CHECK_EQ(close(sp[0]), 0);
    int saved = dup(2);
    CHECK_GE(saved, 0);
    CHECK_EQ(dup2(sp[1], 2), 2);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGUSR1;
    si.si_code = SI_USER;
    psiginfo(&si, "to a pipe without reader");
    CHECK_EQ(dup2(saved, 2), 2);
    CHECK_EQ(close(saved), 0);
    CHECK_EQ(close(sp[1]), 0);
    CHECK_EQ(atomic_load(&hits), 2);
    CHECK_EQ(atomic_load(&in_caller), 2);
    return NULL;
}

int main(void)
{
    install_handler(SIGPIPE, on_pipe, 0);
    join(spawn(body, NULL));
    return 0;
}
