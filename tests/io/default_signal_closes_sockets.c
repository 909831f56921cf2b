/* SPDX-License-Identifier: MIT */
/* Description: a program ended by a signal's default action (kill -TERM,
 * Ctrl-C's SIGINT, a hang-up, SIGPIPE, SIGUSR1, a real-time signal, a
 * raise of its own) has closed its sockets by the time it is reaped, as
 * on NPTL, also the ones its threads were waiting on: the ports of its
 * listeners can be bound again at once and the peer of its Unix stream
 * socket reads end-of-file. The parent's wait sees the signal that ended
 * it. Under CAP_NETIO=uring the waits' polls held the files until the
 * kernel ended the dead ring's requests in a worker of its own, some
 * milliseconds after the reaping (bind: EADDRINUSE).
 *
 * The hidden handler that makes this so is not the program's business:
 * sigaction reports SIG_DFL (after a handler was set and taken back too,
 * and after a one-shot handler ran); SIG_IGN set by the program or
 * inherited through exec (nohup) still ignores. */
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

/* Waits on its own listener for ever, in timed accepts: the first EAGAIN
 * says its wait was armed (under uring a poll that stays armed). */
static void *far_acceptor(void *arg)
{
    (void)arg;
    atomic_store(&far_running, true);
    for (;;) {
        CHECK_EQ(accept(far_listener, NULL, NULL), -1);
        /* EINTR: the one-shot handler's delivery, which may interrupt
         * this thread's call (a timed socket call is never restarted). */
        CHECK(errno == EAGAIN || errno == EINTR);
        if (errno == EAGAIN)
            atomic_store(&far_armed, true);
    }
    return NULL;
}

static socklen_t unix_address(struct sockaddr_un *a, pid_t parent)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "cap-sig-closes-%d", (int)parent);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static void reports_default(int sig)
{
    struct sigaction old;
    CHECK_EQ(sigaction(sig, NULL, &old), 0);
    CHECK(old.sa_handler == SIG_DFL);
    CHECK_EQ(old.sa_flags & SA_SIGINFO, 0);
}

static void on_signal(int sig)
{
    (void)sig;
    char h = 'h';
    CHECK_EQ(write(1, &h, 1), 1);
}

/* What the child does with its dispositions before it says it is ready
 * (the parent's part is in rounds[] below). */
static void prepare(const char *how)
{
    if (strcmp(how, "plain") == 0) {
        reports_default(SIGTERM);
        reports_default(SIGRTMIN + 2);
    } else if (strcmp(how, "taken-back") == 0) {
        CHECK(signal(SIGTERM, on_signal) != SIG_ERR);
        CHECK(signal(SIGTERM, SIG_DFL) == on_signal);
        reports_default(SIGTERM);
    } else if (strcmp(how, "one-shot") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESETHAND;
        CHECK_EQ(sigaction(SIGTERM, &sa, NULL), 0);
    } else if (strcmp(how, "ignored") == 0) {
        CHECK(signal(SIGUSR2, SIG_IGN) == SIG_DFL);
    } else if (strcmp(how, "inherited-ignore") == 0) {
        struct sigaction old;
        CHECK_EQ(sigaction(SIGHUP, NULL, &old), 0);
        CHECK(old.sa_handler == SIG_IGN);
    } else if (strcmp(how, "raise") != 0) {
        CHECK(!"unknown mode");
    }
}

/* The child: two listeners and a Unix stream socket, each waited on (by
 * main's worker, and by the other one's for far), then its ports on fd 1
 * and a wait for the signal that ends it. */
static int child(pid_t parent, const char *how)
{
    prepare(how);
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

    CHECK_EQ(accept(near_listener, NULL, NULL), -1);
    CHECK_EQ(errno, EAGAIN);
    char c;
    CHECK_EQ(recv(u, &c, 1, 0), -1);
    CHECK_EQ(errno, EAGAIN);

    spawn(far_acceptor, NULL);
    while (!atomic_load(&far_running))
        if (cap_worker_count() == 1) /* else no yield: the other worker starts it */
            cap_yield();
    while (!atomic_load(&far_armed))
        cap_yield();

    char ports[64];
    int n = snprintf(ports, sizeof ports, "%d %d\n", near_port, far_port);
    CHECK_EQ(write(1, ports, (size_t)n), n);
    if (strcmp(how, "raise") == 0)
        raise(SIGUSR1);
    for (;;)
        pause();
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
        fprintf(stderr, "bind to the killed child's port %d: %s\n", port, strerror(errno));
    CHECK_EQ(rc, 0);
    CHECK_EQ(listen(s, 1), 0);
    CHECK_EQ(close(s), 0);
}

/* Reads one byte or one line (to '\n') from the child. */
static size_t read_until(int fd, char *buf, size_t size, bool line)
{
    size_t got = 0;
    while (got < size - 1) {
        ssize_t r = read(fd, buf + got, 1);
        CHECK_EQ(r, 1);
        got++;
        if (!line || buf[got - 1] == '\n')
            break;
    }
    buf[got] = '\0';
    return got;
}

struct round {
    const char *how;
    int sends[2];  /* signals the parent sends, in order (0: none) */
    int ends_by;   /* the signal the parent's wait must see */
};

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "child") == 0)
        return child((pid_t)atoi(argv[2]), argv[3]);

    const struct round rounds[] = {
        { "plain", { SIGTERM, 0 }, SIGTERM },
        { "plain", { SIGINT, 0 }, SIGINT },
        { "plain", { SIGHUP, 0 }, SIGHUP },
        { "plain", { SIGPIPE, 0 }, SIGPIPE },
        { "plain", { SIGRTMIN + 2, 0 }, SIGRTMIN + 2 },
        { "raise", { 0, 0 }, SIGUSR1 },
        { "taken-back", { SIGTERM, 0 }, SIGTERM },
        /* The handler runs (the parent reads its byte), the second one
         * ends the process. */
        { "one-shot", { SIGTERM, SIGTERM }, SIGTERM },
        /* The lower number is delivered first: had it not been ignored,
         * the process would have ended by it. */
        { "ignored", { SIGUSR2, SIGTERM }, SIGTERM },
        { "inherited-ignore", { SIGHUP, SIGTERM }, SIGTERM },
    };

    int ul = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK_GE(ul, 0);
    struct sockaddr_un a;
    socklen_t alen = unix_address(&a, getpid());
    CHECK_EQ(bind(ul, (struct sockaddr *)&a, alen), 0);
    CHECK_EQ(listen(ul, 1), 0);

    for (size_t i = 0; i < sizeof rounds / sizeof rounds[0]; i++) {
        const struct round *r = &rounds[i];
        int out[2];
        CHECK_EQ(pipe2(out, O_CLOEXEC), 0);
        posix_spawn_file_actions_t fa;
        CHECK_EQ(posix_spawn_file_actions_init(&fa), 0);
        CHECK_EQ(posix_spawn_file_actions_adddup2(&fa, out[1], 1), 0);
        char me[16];
        snprintf(me, sizeof me, "%d", (int)getpid());
        char *args[] = { argv[0], "child", me, (char *)r->how, NULL };
        extern char **environ;
        bool nohup = strcmp(r->how, "inherited-ignore") == 0;
        if (nohup) /* exec keeps SIG_IGN */
            CHECK(signal(SIGHUP, SIG_IGN) == SIG_DFL);
        pid_t pid;
        CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ), 0);
        if (nohup)
            CHECK(signal(SIGHUP, SIG_DFL) == SIG_IGN);
        posix_spawn_file_actions_destroy(&fa);
        CHECK_EQ(close(out[1]), 0);

        int peer = accept4(ul, NULL, NULL, SOCK_CLOEXEC);
        CHECK_GE(peer, 0);
        char ports[64];
        read_until(out[0], ports, sizeof ports, true);
        for (int k = 0; k < 2 && r->sends[k] != 0; k++) {
            CHECK_EQ(kill(pid, r->sends[k]), 0);
            if (strcmp(r->how, "one-shot") == 0 && k == 0) {
                char h[2];
                read_until(out[0], h, sizeof h, false);
                CHECK_EQ(h[0], 'h');
            }
        }
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != r->ends_by)
            fprintf(stderr, "round %zu (%s): status %#x, expected the end by signal %d\n", i,
                    r->how, status, r->ends_by);
        CHECK(WIFSIGNALED(status));
        CHECK_EQ(WTERMSIG(status), r->ends_by);

        /* At once: nothing in between could give the kernel time. */
        char c;
        ssize_t eof = recv(peer, &c, 1, MSG_DONTWAIT);
        int near_port = 0, far_port = 0;
        CHECK_EQ(sscanf(ports, "%d %d", &near_port, &far_port), 2);
        port_is_free(near_port);
        port_is_free(far_port);
        if (eof != 0)
            fprintf(stderr, "round %zu (%s): recv from the killed child's socket: %zd (%s)\n", i,
                    r->how, eof, eof < 0 ? strerror(errno) : "data");
        CHECK_EQ(eof, 0);
        CHECK_EQ(close(peer), 0);
        CHECK_EQ(close(out[0]), 0);
    }
    CHECK_EQ(close(ul), 0);
    return 0;
}
