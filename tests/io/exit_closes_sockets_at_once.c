/* SPDX-License-Identifier: MIT */
/* Description: a program that ends with exit() has closed its sockets by
 * the time it is reaped, as on NPTL, also the ones its threads were
 * waiting on: the ports of its listening sockets can be bound again at
 * once (no SO_REUSEPORT), and the peer of its Unix stream socket reads
 * end-of-file. Waits armed by the exiting thread's worker and by the
 * other one's (a thread that main spun for, so it started elsewhere).
 * Under CAP_NETIO=uring the waits' polls held the files after the exit,
 * until the kernel ended the dead ring's requests in a worker of its
 * own, ~20 ms later: the bind failed with EADDRINUSE every time.
 *
 * Both checks are made before anything else the parent does could give
 * the kernel time: a listener leaves its port inside its last close, and
 * a Unix socket's close marks its peer's end on the spot. */
#include <sys/un.h>

#include "io/io_util.h"

enum { WAIT_US = 20000 };

static int far_listener;
static atomic_bool far_running, far_armed;

static void timed(int fd)
{
    struct timeval tv = { 0, WAIT_US };
    CHECK_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
}

/* Waits on its own listener for ever, in timed accepts, so that the
 * first EAGAIN says its wait was armed (a poll of the ring under uring,
 * which stays for the socket's life). */
static void *far_acceptor(void *arg)
{
    (void)arg;
    atomic_store(&far_running, true);
    for (;;) {
        CHECK_EQ(accept(far_listener, NULL, NULL), -1);
        CHECK_EQ(errno, EAGAIN);
        atomic_store(&far_armed, true);
    }
    return NULL;
}

static socklen_t unix_address(struct sockaddr_un *a, pid_t parent)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    /* Abstract: nothing to unlink. */
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "cap-exit-closes-%d", (int)parent);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The child: two listeners and a Unix stream socket, each waited on,
 * then exit(0) while a thread still waits. Reports its ports on fd 1. */
static int child(pid_t parent)
{
    int near_port, far_port;
    int near_listener = tcp_listener(SOCK_STREAM, 4, &near_port);
    far_listener = tcp_listener(SOCK_STREAM, 4, &far_port);
    timed(near_listener);
    timed(far_listener);
    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK_GE(u, 0);
    struct sockaddr_un a;
    socklen_t alen = unix_address(&a, parent);
    CHECK_EQ(connect(u, (struct sockaddr *)&a, alen), 0);
    timed(u);

    /* Waits armed by main's worker. */
    CHECK_EQ(accept(near_listener, NULL, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    char c;
    CHECK_EQ(recv(u, &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);

    /* And one by the other worker, still waiting at the exit. */
    spawn(far_acceptor, NULL);
    while (!atomic_load(&far_running))
        if (cap_worker_count() == 1) /* else no yield: the other worker starts it */
            cap_yield();
    while (!atomic_load(&far_armed))
        cap_yield();

    char ports[64];
    int n = snprintf(ports, sizeof ports, "%d %d\n", near_port, far_port);
    CHECK_EQ(write(1, ports, (size_t)n), n);
    exit(0);
}

static void port_is_free(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(s, 0);
    int one = 1;
    CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int rc = bind(s, (struct sockaddr *)&a, sizeof a);
    if (rc != 0)
        fprintf(stderr, "bind to the exited child's port %d: %s\n", port, strerror(errno));
    CHECK_EQ(rc, 0);
    CHECK_EQ(listen(s, 1), 0);
    CHECK_EQ(close(s), 0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child((pid_t)atoi(argv[2]));

    int ul = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK_GE(ul, 0);
    struct sockaddr_un a;
    socklen_t alen = unix_address(&a, getpid());
    CHECK_EQ(bind(ul, (struct sockaddr *)&a, alen), 0);
    CHECK_EQ(listen(ul, 1), 0);

    for (int round = 0; round < 5; round++) {
        int out[2];
        CHECK_EQ(pipe2(out, O_CLOEXEC), 0);
        posix_spawn_file_actions_t fa;
        CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
        CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, out[1], 1), 0);
        char me[16];
        snprintf(me, sizeof me, "%d", (int)getpid());
        char *args[] = { argv[0], "child", me, NULL };
        extern char **environ;
        pid_t pid;
        CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        CHECK_EQ(close(out[1]), 0);

        int peer = accept4(ul, NULL, NULL, SOCK_CLOEXEC);
        CHECK_GE(peer, 0);
        char ports[64];
        size_t got = 0;
        ssize_t r;
        while (got < sizeof ports - 1 && (r = read(out[0], ports + got, sizeof ports - 1 - got)) > 0)
            got += (size_t)r; /* to the child's end: its exit closes the pipe */
        ports[got] = '\0';
        CHECK_EQ(close(out[0]), 0);
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 0);

        /* At once: nothing in between could give the kernel time. */
        char c;
        ssize_t eof = recv(peer, &c, 1, MSG_DONTWAIT);
        int near_port = 0, far_port = 0;
        CHECK_EQ(sscanf(ports, "%d %d", &near_port, &far_port), 2);
        port_is_free(near_port);
        port_is_free(far_port);
        if (eof != 0)
            fprintf(stderr, "recv from the exited child's socket: %zd (%s)\n", eof,
                    eof < 0 ? strerror(errno) : "data");
        CHECK_EQ(eof, 0);
        CHECK_EQ(close(peer), 0);
    }
    CHECK_EQ(close(ul), 0);
    return 0;
}
