/* SPDX-License-Identifier: MIT */
/* Description: 10,000 concurrent loopback TCP connections, one thread per
 * connection on each side: the server threads are in this process, the
 * client threads in a child process started from the same program (so
 * each process needs only ~10,000 descriptors). Every connection is open
 * at the same time (each client waits for its server's greeting, and
 * the server answers only once all 10,000 are accepted), then every
 * client gets its own echo back. */
#include <poll.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "io/io_util.h"

enum { CONNS = 10000 };

extern char **environ;
static atomic_int accepted;
static int gate[2]; /* readable once all connections are in */

static void *serve(void *arg)
{
    int c = (int)(intptr_t)arg;
    struct pollfd p = { .fd = gate[0], .events = POLLIN };
    CHECK_EQ(poll(&p, 1, -1), 1); /* all connections are open now */
    uint32_t v;
    CHECK_EQ(read(c, &v, sizeof v), (ssize_t)sizeof v);
    v = ~v;
    CHECK_EQ(write(c, &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(read(c, &v, sizeof v), 0); /* the client closes */
    close(c);
    return NULL;
}

static int port;

static void *client(void *arg)
{
    uint32_t id = (uint32_t)(intptr_t)arg;
    int s = -1;
    for (int tries = 0; s < 0 && tries < 100; tries++)
        if ((s = tcp_connect(port)) < 0)
            cap_sleep_ns(10000000); /* backlog full: try again */
    CHECK_GE(s, 0);
    CHECK_EQ(write(s, &id, sizeof id), (ssize_t)sizeof id);
    uint32_t v;
    CHECK_EQ(read(s, &v, sizeof v), (ssize_t)sizeof v);
    CHECK_EQ(v, ~id);
    close(s);
    return NULL;
}

static int run_clients(void)
{
    cap_thread_t *t = malloc(CONNS * sizeof *t);
    for (intptr_t i = 0; i < CONNS; i++)
        t[i] = spawn(client, (void *)i);
    for (int i = 0; i < CONNS; i++)
        join(t[i]);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (raise_nofile(CONNS + 200) < CONNS + 100)
        SKIP("RLIMIT_NOFILE hard limit below 10,100");
    if (argc == 3 && strcmp(argv[1], "client") == 0) {
        port = atoi(argv[2]);
        return run_clients();
    }
    int l = tcp_listener(SOCK_STREAM, 4096, &port);
    CHECK_EQ(pipe(gate), 0);
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    char *args[] = { argv[0], "client", ps, NULL };
    pid_t child;
    CHECK_EQ(posix_spawn(&child, "/proc/self/exe", NULL, NULL, args, environ), 0);
    cap_thread_t *t = malloc(CONNS * sizeof *t);
    for (int i = 0; i < CONNS; i++) {
        int c = accept(l, NULL, NULL);
        CHECK_GE(c, 0);
        atomic_fetch_add(&accepted, 1);
        t[i] = spawn(serve, (void *)(intptr_t)c);
    }
    CHECK_EQ(write(gate[1], "go", 1), 1);
    for (int i = 0; i < CONNS; i++)
        join(t[i]);
    free(t);
    int status;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    return 0;
}
