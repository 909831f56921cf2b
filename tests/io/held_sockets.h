/* SPDX-License-Identifier: MIT */
/* For the tests of sockets that must close with their process (exit,
 * a default-terminate signal): a child that holds sockets its threads
 * wait on, and the parent's checks, made right after the reaping, that
 * the process let go of them.
 *
 * The child has two listeners and a Unix stream socket connected to the
 * parent. Each is waited on: near's and the Unix socket's waits armed by
 * the calling thread's worker, far's by a thread that main spun for, so
 * that it started on the other worker when there is one, and that still
 * waits (timed accepts, for ever). Under CAP_NETIO=uring every such wait
 * is a poll that holds its file. The parent then binds both ports (no
 * SO_REUSEPORT) and reads end-of-file from its end of the Unix socket:
 * a listener leaves its port inside its last close, and a Unix socket's
 * close marks its peer's end on the spot, so nothing the parent does in
 * between could give the kernel time. */
#ifndef CAP_TESTS_IO_HELD_SOCKETS_H
#define CAP_TESTS_IO_HELD_SOCKETS_H

#include <sys/un.h>

#include "io/io_util.h"

enum { HELD_WAIT_US = 20000 };

static int held_far_listener;
static atomic_bool held_far_running, held_far_armed;

static inline void held_timed(int fd)
{
    struct timeval tv = { 0, HELD_WAIT_US };
    CHECK_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
}

/* Waits on its listener for ever: the first EAGAIN says its wait was
 * armed (under uring a poll that stays for the socket's life). EINTR: a
 * handler of the program's ran on its worker (a timed socket call is
 * never restarted). */
static inline void *held_far_acceptor(void *arg)
{
    (void)arg;
    atomic_store(&held_far_running, true);
    for (;;) {
        CHECK_EQ(accept(held_far_listener, NULL, NULL), -1);
        CHECK(errno == EAGAIN || errno == EINTR);
        if (errno == EAGAIN)
            atomic_store(&held_far_armed, true);
    }
    return NULL;
}

/* The parent's abstract Unix address (nothing to unlink). */
static inline socklen_t held_unix_address(struct sockaddr_un *a, pid_t parent)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "cap-held-sockets-%d", (int)parent);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The parent's listener for its children's Unix sockets. */
static inline int held_parent_listen(void)
{
    int ul = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK_GE(ul, 0);
    struct sockaddr_un a;
    socklen_t alen = held_unix_address(&a, getpid());
    CHECK_EQ(bind(ul, (struct sockaddr *)&a, alen), 0);
    CHECK_EQ(listen(ul, 1), 0);
    return ul;
}

/* In the child: the sockets and their waits (above), then their ports,
 * "near far\n", on fd 1. */
static inline void held_child_setup(pid_t parent)
{
    int near_port, far_port;
    int near_listener = tcp_listener(SOCK_STREAM, 4, &near_port);
    held_far_listener = tcp_listener(SOCK_STREAM, 4, &far_port);
    held_timed(near_listener);
    held_timed(held_far_listener);
    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK_GE(u, 0);
    struct sockaddr_un a;
    socklen_t alen = held_unix_address(&a, parent);
    CHECK_EQ(connect(u, (struct sockaddr *)&a, alen), 0);
    held_timed(u);

    CHECK_EQ(accept(near_listener, NULL, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    char c;
    CHECK_EQ(recv(u, &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);

    spawn(held_far_acceptor, NULL);
    while (!atomic_load(&held_far_running))
        if (cap_worker_count() == 1) /* else no yield: the other worker starts it */
            cap_yield();
    while (!atomic_load(&held_far_armed))
        cap_yield();

    char ports[64];
    int n = snprintf(ports, sizeof ports, "%d %d\n", near_port, far_port);
    CHECK_EQ(write(1, ports, (size_t)n), n);
}

/* In the parent: runs argv[0] with args[1..] (args[0] is filled in) with
 * its fd 1 on a pipe, whose read end is returned in *out; accepts the
 * child's Unix socket into *peer. */
static inline pid_t held_spawn(char *argv0, char **args, int ul, int *out, int *peer)
{
    int p[2];
    CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
    CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, p[1], 1), 0);
    args[0] = argv0;
    extern char **environ;
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    CHECK_EQ(close(p[1]), 0);
    *out = p[0];
    *peer = accept4(ul, NULL, NULL, SOCK_CLOEXEC);
    CHECK_GE(*peer, 0);
    return pid;
}

/* Reads one line (with its '\n', if it fits) from out into line. */
static inline void held_read_line(int out, char *line, size_t cap)
{
    size_t got = 0;
    while (got < cap - 1) {
        CHECK_EQ(read(out, line + got, 1), 1);
        if (line[got++] == '\n')
            break;
    }
    line[got] = '\0';
}

/* Reads the child's "near far\n" line from out. */
static inline void held_read_ports(int out, int *near_port, int *far_port)
{
    char line[64];
    held_read_line(out, line, sizeof line);
    CHECK_EQ(sscanf(line, "%d %d", near_port, far_port), 2);
}

/* Waits for the child pid, which must have exited with status 0. */
static inline void held_reap_clean(pid_t pid)
{
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
}

/* held_spawn of argv0 "child" <this pid> [extra], then its ports. */
static inline pid_t held_start_child(char *argv0, char *extra, int ul, int *out, int *peer,
                                     int *near_port, int *far_port)
{
    char me[16];
    snprintf(me, sizeof me, "%d", (int)getpid());
    char *args[] = { NULL, "child", me, extra, NULL };
    pid_t pid = held_spawn(argv0, args, ul, out, peer);
    held_read_ports(*out, near_port, far_port);
    return pid;
}

static inline void held_port_is_free(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(s, 0);
    int one = 1;
    CHECK_EQ(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int rc = bind(s, (struct sockaddr *)&a, sizeof a);
    if (rc != 0)
        fprintf(stderr, "bind to the reaped child's port %d: %s\n", port, strerror(errno));
    CHECK_EQ(rc, 0);
    CHECK_EQ(listen(s, 1), 0);
    CHECK_EQ(close(s), 0);
}

/* Right after the child was reaped: its sockets are closed. Closes peer. */
static inline void held_check_released(int near_port, int far_port, int peer)
{
    char c;
    ssize_t eof = recv(peer, &c, 1, MSG_DONTWAIT);
    int e = errno;
    held_port_is_free(near_port);
    held_port_is_free(far_port);
    if (eof != 0)
        fprintf(stderr, "recv from the reaped child's socket: %zd (%s)\n", eof,
                eof < 0 ? strerror(e) : "data");
    CHECK_EQ(eof, 0);
    CHECK_EQ(close(peer), 0);
}

#endif
