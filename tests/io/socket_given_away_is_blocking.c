/* SPDX-License-Identifier: MIT */
/* Description: a socket the runtime made (non-blocking underneath) that
 * leaves the wrappers' sight is blocking again, as the application
 * believes, on every number of its file (O_NONBLOCK belongs to the file).
 * Given to stdio with fdopen: an fgets on it waits for the line a kernel
 * thread writes later (it failed with EAGAIN before; stdio's read blocks
 * the worker, the documented stdio hazard, so the writer is a thread the
 * runtime does not run). A dup of a listening socket given to fdopen, or
 * sent with SCM_RIGHTS: an accept on the original parks its thread and
 * others run meanwhile (its record still said non-blocking, so accept
 * blocked the worker). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "io/io_util.h"

static int sv[2], port;

static void *late_line(void *arg)
{
    (void)arg;
    usleep(30000);
    CHECK_EQ(write(sv[1], "hello\n", 6), 6);
    return NULL;
}

static void *late_connect(void *arg)
{
    (void)arg;
    usleep(30000);
    int c = tcp_connect(port);
    CHECK(c >= 0);
    CHECK_EQ(write(c, "x", 1), 1);
    CHECK_EQ(close(c), 0);
    return NULL;
}

/* A listening socket whose dup is handed over (fdopen, or sent to
 * ourselves with SCM_RIGHTS): accept on it parks. */
static void accept_parks(bool by_rights)
{
    int l = tcp_listener(SOCK_STREAM, 16, &port);
    int d = dup(l);
    CHECK(d >= 0);
    FILE *ld = NULL;
    int us[2] = { -1, -1 };
    if (by_rights) {
        CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, us), 0);
        send_fd(us[0], d);
    } else {
        ld = fdopen(d, "r");
        CHECK(ld != NULL);
    }
    struct ticker tick = { 0 };
    cap_thread_t t = spawn(ticker_run, &tick);
    while (atomic_load(&tick.ticks) == 0)
        cap_yield();
    long before = atomic_load(&tick.ticks);
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, late_connect, NULL), 0);
    int a = accept(l, NULL, NULL);
    CHECK(a >= 0);
    CHECK(atomic_load(&tick.ticks) > before + 1);
    char c;
    CHECK_EQ(read(a, &c, 1), 1);
    CHECK_EQ(c, 'x');
    CHECK_EQ(pthread_join(kt, NULL), 0);
    atomic_store(&tick.stop, 1);
    join(t);
    CHECK_EQ(close(a), 0);
    if (ld != NULL)
        CHECK_EQ(fclose(ld), 0);
    else
        CHECK_EQ(close(d), 0);
    if (us[0] >= 0) {
        CHECK_EQ(close(us[0]), 0); /* the copy in flight goes with it */
        CHECK_EQ(close(us[1]), 0);
    }
    CHECK_EQ(close(l), 0);
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    FILE *in = fdopen(sv[0], "r");
    CHECK(in != NULL);
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, late_line, NULL), 0);
    char line[16];
    CHECK(fgets(line, sizeof line, in) != NULL);
    CHECK(strcmp(line, "hello\n") == 0);
    CHECK_EQ(pthread_join(kt, NULL), 0);
    CHECK_EQ(fclose(in), 0);
    CHECK_EQ(close(sv[1]), 0);

    accept_parks(false);
    accept_parks(true);
    return 0;
}
