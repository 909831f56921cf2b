/* SPDX-License-Identifier: MIT */
/* Description: an exec closes the close-on-exec pipes of the process at
 * once, as on NPTL, also one a thread of another worker was reading: the
 * parent, holding the pipe's write end, gets EPIPE from a write as soon
 * as the new program runs. Under CAP_NETIO=uring a pipe the runtime made
 * is watched by a one-shot poll while a thread waits on it, armed by that
 * thread's worker; Linux cancels only the exec'ing thread's requests
 * itself, so such a poll held the read end open for milliseconds into
 * the new program, and the write succeeded. An exec that fails first (no
 * such file) must leave the wait working: the reader, whose poll was
 * cancelled for it, takes a byte the parent writes afterwards (from
 * another process: only the poll sees that write). */
#include "io/held_sockets.h"

static int pipe_read_end;
static atomic_int reading, bytes_read;

/* Reads the pipe for good: each byte that comes is counted. */
static void *reader(void *arg)
{
    (void)arg;
    for (;;) {
        atomic_fetch_add(&reading, 1);
        char c;
        CHECK_EQ(read(pipe_read_end, &c, 1), 1);
        atomic_fetch_add(&bytes_read, 1);
    }
    return NULL;
}

/* Until the reader has begun read number n, then a little longer, so
 * that it is parked in it (if it is not yet, the round checks less, and
 * still passes). Yields: a poll main's worker armed completes in its
 * kernel thread's task work (COOP_TASKRUN), and is harvested only when
 * it enters the kernel. */
static void reader_waits(int n)
{
    while (atomic_load(&reading) < n)
        cap_yield();
    CHECK_EQ(cap_sleep_ns(20 * 1000 * 1000), 0);
}

static int child(pid_t parent, char *self)
{
    int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK_GE(u, 0);
    struct sockaddr_un a;
    socklen_t alen = held_unix_address(&a, parent);
    CHECK_EQ(connect(u, (struct sockaddr *)&a, alen), 0);
    int p[2];
    CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
    pipe_read_end = p[0];
    send_fd(u, p[1]); /* the parent writes; this process holds no write end */
    CHECK_EQ(close(p[1]), 0);

    spawn(reader, NULL);
    while (atomic_load(&reading) == 0)
        if (cap_worker_count() == 1) /* else no yield: the other worker takes it */
            cap_yield();
    reader_waits(1);

    /* A failed exec gives the wait back: the parent's byte arrives. */
    char *none[] = { "/nonexistent/capriccio-exec-test", NULL };
    CHECK_EQ(execv(none[0], none), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(write(u, "w", 1), 1);
    while (atomic_load(&bytes_read) == 0)
        cap_yield();
    reader_waits(2);

    char *args[] = { self, "after-exec", NULL };
    execv("/proc/self/exe", args);
    CHECK(!"exec failed");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child((pid_t)atoi(argv[2]), argv[0]);
    if (argc == 2 && strcmp(argv[1], "after-exec") == 0) {
        CHECK_EQ(write(1, "ran\n", 4), 4);
        return 0;
    }

    CHECK(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
    int ul = held_parent_listen();
    for (int round = 0; round < 5; round++) {
        char me[16];
        snprintf(me, sizeof me, "%d", (int)getpid());
        char *args[] = { NULL, "child", me, NULL };
        int out, peer;
        pid_t pid = held_spawn(argv[0], args, ul, &out, &peer);
        int w = recv_fd(peer);
        char c;
        CHECK_EQ(read(peer, &c, 1), 1); /* the failed exec is over */
        CHECK_EQ(write(w, "x", 1), 1);
        char line[16];
        held_read_line(out, line, sizeof line);
        CHECK_EQ(strcmp(line, "ran\n"), 0);
        /* The exec is over: the read end is closed. */
        CHECK_EQ(write(w, "y", 1), -1);
        CHECK_EQ(errno, EPIPE);
        held_reap_clean(pid);
        CHECK_EQ(close(w), 0);
        CHECK_EQ(close(peer), 0);
        CHECK_EQ(close(out), 0);
    }
    CHECK_EQ(close(ul), 0);
    return 0;
}
