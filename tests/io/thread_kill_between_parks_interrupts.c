/* SPDX-License-Identifier: MIT */
/* Description: a signal sent to a thread whose blocking call was woken
 * for nothing, and that has not parked again, interrupts the call as
 * Linux's would: the handler runs inside the call, and the call fails
 * with EINTR (or, under SA_RESTART, goes on waiting and then completes).
 * Each case runs in a fresh run of this program (posix_spawn of itself):
 *  - "first": the call parked before the program installed any handler
 *    (so outside the signal registry, io/sigintr.h); the first sigaction
 *    wakes it to register, and the signal is sent at once, so it comes
 *    while the call runs between its two parks. Calls: a read of a pipe
 *    and of a socket, a write to a full pipe, accept, a recv with
 *    SO_RCVTIMEO (EINTR whatever SA_RESTART says), sem_wait and
 *    sem_timedwait (likewise). The same window opens on two workers
 *    when an event wakes a transfer whose data another reader took, but
 *    not on demand: this is the window a test can open every time;
 *  - "foreign": the same calls on a kernel thread made with glibc's
 *    pthread_create, which the runtime does not run, on descriptors the
 *    runtime made non-blocking underneath: the call waits in poll(2),
 *    which no SA_RESTART restarts, and must still end with EINTR for a
 *    handler without it and go on under one with it.
 * A call that completes leaves errno as it was (0 here), not at the
 * EAGAIN or EINTR of the tries and waits inside it.
 * Before the fix every "first" call without SA_RESTART (and the
 * unrestartable ones with it) waited on for good after its handler ran,
 * and so did every "foreign" one. */
#include <pthread.h>
#include <time.h>

#include "io/io_util.h"

static volatile sig_atomic_t handled;
static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

enum op { OP_PIPE_READ, OP_SOCK_READ, OP_PIPE_WRITE, OP_ACCEPT, OP_RECV_TIMEO, OP_SEM, OP_SEM_TIMED, OPS };
static const char *const op_names[OPS] = { "pipe-read", "sock-read", "pipe-write", "accept",
                                           "recv-timeo", "sem", "sem-timed" };

static enum op op;
static int rd, wr, lsock, port;
static cap_sem_t sem;
static atomic_int in_call, done, stop;
static long result;
static int err;

/* Whether op ends with EINTR under a SA_RESTART handler (a timeout
 * makes socket calls and semaphore waits unrestartable, signal(7)). */
static bool unrestartable(enum op o)
{
    return o == OP_RECV_TIMEO || o == OP_SEM_TIMED;
}

static void *call(void *arg)
{
    (void)arg;
    char buf[4096] = { 0 };
    atomic_store(&in_call, 1);
    errno = 0; /* a success leaves it so */
    switch (op) {
    case OP_PIPE_READ:
    case OP_SOCK_READ:
        result = read(rd, buf, 1);
        err = errno;
        break;
    case OP_RECV_TIMEO:
        result = recv(rd, buf, 1, 0);
        err = errno;
        break;
    case OP_PIPE_WRITE:
        /* Until one write waits (4 KiB: whole or nothing) and ends. */
        do
            result = write(wr, buf, sizeof buf);
        while (result > 0 && !atomic_load(&stop));
        err = errno;
        break;
    case OP_ACCEPT:
        result = accept(lsock, NULL, NULL);
        err = errno;
        break;
    case OP_SEM:
    case OP_SEM_TIMED: {
        struct timespec far;
        clock_gettime(CLOCK_REALTIME, &far);
        far.tv_sec += 1000;
        err = op == OP_SEM ? cap_sem_wait(&sem) : cap_sem_timedwait(&sem, &far);
        result = err == 0 ? 0 : -1;
        break;
    }
    default:
        abort();
    }
    atomic_store(&done, 1);
    return NULL;
}

static void make_descriptors(void)
{
    int p[2], sv[2];
    if (op == OP_PIPE_READ || op == OP_PIPE_WRITE) {
        CHECK_EQ(pipe(p), 0);
        rd = p[0];
        wr = p[1];
    } else {
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        rd = sv[0];
        wr = sv[1];
    }
    if (op == OP_RECV_TIMEO) {
        struct timeval tv = { .tv_sec = 1000 };
        CHECK_EQ(setsockopt(rd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    }
    lsock = tcp_listener(SOCK_STREAM, 4, &port);
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
}

/* Lets the call complete after a SA_RESTART handler left it waiting. */
static void feed(void)
{
    char buf[65536];
    int c = -1;
    switch (op) {
    case OP_PIPE_READ:
    case OP_SOCK_READ:
        CHECK_EQ(write(wr, "x", 1), 1);
        break;
    case OP_PIPE_WRITE:
        atomic_store(&stop, 1);
        while (!atomic_load(&done)) { /* drain, never waiting for good */
            struct pollfd p = { .fd = rd, .events = POLLIN };
            if (poll(&p, 1, 1) == 1)
                CHECK_GT(read(rd, buf, sizeof buf), 0);
        }
        break;
    case OP_ACCEPT:
        c = tcp_connect(port);
        break;
    case OP_SEM:
        CHECK_EQ(cap_sem_post(&sem), 0);
        break;
    default:
        abort();
    }
    while (!atomic_load(&done))
        cap_sleep_ns(1000000);
    if (c >= 0)
        close(c);
}

static void check_ended(bool restart)
{
    fprintf(stderr, "%s%s: %ld, errno %d, handler ran %d time(s)\n", op_names[op],
            restart ? " (SA_RESTART)" : "", result, err, (int)handled);
    CHECK_EQ(handled, 1);
    if (restart && !unrestartable(op)) {
        CHECK_GE(result, 0);
        CHECK_EQ(err, 0);
    } else {
        CHECK_EQ(result, -1);
        CHECK_EQ(err, EINTR);
    }
}

/* "first": the call parks before any handler exists. */
static void run_first(bool restart)
{
    make_descriptors();
    cap_thread_t t = spawn(call, NULL);
    while (!atomic_load(&in_call))
        cap_yield();
    cap_sleep_ns(20000000); /* into its wait */
    install_handler(SIGUSR1, on_usr1, restart ? SA_RESTART : 0);
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    if (restart && !unrestartable(op)) {
        while (handled == 0)
            cap_sleep_ns(1000000);
        cap_sleep_ns(20000000);
        CHECK_EQ(atomic_load(&done), 0); /* the handler did not end it */
        feed();
    }
    join(t);
    check_ended(restart);
}

/* "foreign": the call on a kernel thread the runtime does not run. */
static void *foreign_call(void *arg)
{
    return call(arg);
}

static void run_foreign(bool restart)
{
    make_descriptors();
    install_handler(SIGUSR1, on_usr1, restart ? SA_RESTART : 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, foreign_call, NULL), 0);
    while (!atomic_load(&in_call))
        cap_sleep_ns(1000000);
    if (restart && !unrestartable(op)) {
        cap_sleep_ns(20000000); /* into its wait */
        CHECK_EQ(pthread_kill(t, SIGUSR1), 0);
        while (handled == 0)
            cap_sleep_ns(1000000);
        cap_sleep_ns(20000000);
        CHECK_EQ(atomic_load(&done), 0); /* the handler did not end it */
        feed();
    } else {
        /* A signal that came before the call waited interrupts nothing
         * (as Linux's): sent until one does. */
        while (!atomic_load(&done)) {
            CHECK_EQ(pthread_kill(t, SIGUSR1), 0);
            cap_sleep_ns(5000000);
        }
        CHECK_GE(handled, 1);
        handled = 1;
    }
    CHECK_EQ(pthread_join(t, NULL), 0);
    check_ended(restart);
}

static int run_child(const char *self, const char *window, int o, bool restart)
{
    char ops[8], rs[2] = { restart ? '1' : '0', 0 };
    snprintf(ops, sizeof ops, "%d", o);
    char *argv[] = { (char *)self, (char *)window, ops, rs, NULL };
    extern char **environ;
    pid_t pid;
    CHECK_EQ(posix_spawn(&pid, self, NULL, NULL, argv, environ), 0);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "%s %s%s: status %#x\n", window, op_names[o],
                restart ? " (SA_RESTART)" : "", status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    if (argc == 4) {
        alarm(30); /* a call that waits on for good kills the child */
        op = (enum op)atoi(argv[2]);
        bool restart = argv[3][0] == '1';
        if (strcmp(argv[1], "first") == 0)
            run_first(restart);
        else
            run_foreign(restart);
        return 0;
    }
    int failed = 0;
    for (int o = 0; o < OPS; o++)
        for (int r = 0; r < 2; r++)
            failed += !run_child(argv[0], "first", o, r);
    /* Semaphores are the runtime's on every thread: not a foreign call. */
    for (int o = 0; o < OP_SEM; o++)
        for (int r = 0; r < 2; r++)
            failed += !run_child(argv[0], "foreign", o, r);
    CHECK_EQ(failed, 0);
    return 0;
}
