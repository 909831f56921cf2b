/* SPDX-License-Identifier: MIT */
/* Description: an exec closes the close-on-exec sockets of the process at
 * once, as on NPTL, also those a thread of another worker was waiting on:
 * the new program binds their ports first thing (no SO_REUSEPORT), and
 * the peer of a close-on-exec Unix socket reads end-of-file by the time
 * the new program runs. Under CAP_NETIO=uring such a wait is a poll armed
 * by that worker's kernel thread, which Linux ends only after the exec:
 * the bind failed with EADDRINUSE. The library cancels those polls before
 * the exec; an exec that fails (no such file) must give them back: a
 * thread parked in accept on the far listener, whose poll was cancelled
 * and armed again, takes a connection made after it. */
#include "io/held_sockets.h"

static int far;
static atomic_bool far_running, far_armed;
static atomic_int accepted;

/* One timed accept, whose EAGAIN says the wait was armed (a poll that
 * stays for the socket's life under uring), then untimed ones: a
 * connection wakes this thread only through that poll. */
static void *far_acceptor(void *arg)
{
    (void)arg;
    atomic_store(&far_running, true);
    CHECK_EQ(accept(far, NULL, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    struct timeval none = { 0, 0 };
    CHECK_EQ(setsockopt(far, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none), 0);
    atomic_store(&far_armed, true);
    for (;;) {
        int c = accept(far, NULL, NULL);
        CHECK_GE(c, 0);
        atomic_fetch_add(&accepted, 1);
        CHECK_EQ(close(c), 0);
    }
    return NULL;
}

static void cloexec(int fd)
{
    CHECK_EQ(fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
}

static int child(pid_t parent, char *self)
{
    int near_port, far_port;
    int near = tcp_listener(SOCK_STREAM, 4, &near_port);
    far = tcp_listener(SOCK_STREAM, 4, &far_port);
    cloexec(near);
    cloexec(far);
    held_timed(near);
    held_timed(far);
    int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK_GE(u, 0);
    struct sockaddr_un a;
    socklen_t alen = held_unix_address(&a, parent);
    CHECK_EQ(connect(u, (struct sockaddr *)&a, alen), 0);
    held_timed(u);

    /* Waits armed by main's worker... */
    CHECK_EQ(accept(near, NULL, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    char c;
    CHECK_EQ(recv(u, &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);
    /* ...and by the other one's. */
    spawn(far_acceptor, NULL);
    while (!atomic_load(&far_running))
        if (cap_worker_count() == 1) /* else no yield: the other worker starts it */
            cap_yield();
    while (!atomic_load(&far_armed))
        cap_yield();

    /* A failed exec gives the waits back. */
    char *none[] = { "/nonexistent/capriccio-exec-test", NULL };
    CHECK_EQ(execv(none[0], none), -1);
    CHECK_EQ(errno, ENOENT);
    int s = tcp_connect(far_port);
    while (atomic_load(&accepted) == 0)
        cap_yield();
    CHECK_EQ(close(s), 0);

    char ports[64];
    int n = snprintf(ports, sizeof ports, "%d %d\n", near_port, far_port);
    CHECK_EQ(write(1, ports, (size_t)n), n);
    char np[16], fp[16];
    snprintf(np, sizeof np, "%d", near_port);
    snprintf(fp, sizeof fp, "%d", far_port);
    char *args[] = { self, "after-exec", np, fp, NULL };
    execv("/proc/self/exe", args);
    CHECK(!"exec failed");
    return 1;
}

/* The new program: binds both ports at once, then says so. */
static int after_exec(int near_port, int far_port)
{
    held_port_is_free(near_port);
    held_port_is_free(far_port);
    CHECK_EQ(write(1, "bound\n", 6), 6);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child((pid_t)atoi(argv[2]), argv[0]);
    if (argc == 4 && strcmp(argv[1], "after-exec") == 0)
        return after_exec(atoi(argv[2]), atoi(argv[3]));

    int ul = held_parent_listen();
    for (int round = 0; round < 5; round++) {
        int out, peer, near_port, far_port;
        pid_t pid = held_start_child(argv[0], NULL, ul, &out, &peer, &near_port, &far_port);
        char line[16];
        held_read_line(out, line, sizeof line);
        CHECK_EQ(strcmp(line, "bound\n"), 0);
        /* The exec is over: the close-on-exec Unix socket is closed. */
        char c;
        CHECK_EQ(recv(peer, &c, 1, MSG_DONTWAIT), 0);
        held_reap_clean(pid);
        CHECK_EQ(close(peer), 0);
        CHECK_EQ(close(out), 0);
    }
    CHECK_EQ(close(ul), 0);
    return 0;
}
