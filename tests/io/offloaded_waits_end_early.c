/* SPDX-License-Identifier: MIT */
/* Description: the calls that wait on a pool thread because they cannot be
 * made non-blocking — open() of a FIFO without a writer, fcntl(F_SETLKW)
 * and fcntl(F_OFD_SETLKW) on a record another open file description
 * holds, connect() on an inherited blocking socket whose listener's
 * accept queue is full — end early as they would in the kernel:
 *  - cap_thread_cancel: the thread ends with CAP_CANCELED and its cleanup
 *    handler runs (without it the join never returns);
 *  - a caught signal whose handler lacks SA_RESTART: the call fails with
 *    EINTR; with SA_RESTART it goes on waiting and completes once the
 *    other party arrives.
 * Afterwards the pool runs the same calls to completion, no descriptor is
 * left open by an interrupted open(), and the program's own SIGURG
 * handler (the signal the runtime kicks pool threads with) never sees a
 * kick: it runs exactly once, for the one SIGURG the program sends, and
 * sigaction reports it back with the flags the program gave. */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum kind { OPEN_FIFO, SETLKW, OFD_SETLKW, CONNECT, NKINDS };
static const char *const names[] = { "open-fifo", "F_SETLKW", "F_OFD_SETLKW", "connect" };

static char dir[] = "/tmp/cap-offl-XXXXXX";
static char fifo[64], lockfile[64];
static int lock_fd, holder_fd, full_port, connect_sock;
static cap_sem_t going;
static atomic_int cleanups, urgs, usr1s;

static long call(enum kind k)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)full_port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    switch (k) {
    case OPEN_FIFO: return open(fifo, O_RDONLY);
    case SETLKW: return fcntl(lock_fd, F_SETLKW, &fl);
    case OFD_SETLKW: return fcntl(lock_fd, F_OFD_SETLKW, &fl);
    case CONNECT: return connect(connect_sock, (struct sockaddr *)&a, sizeof a);
    default: return -1;
    }
}

static void cleanup(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cleanups, 1);
}

static void *cancelled_caller(void *arg)
{
    enum kind k = (enum kind)(long)arg;
    cap_cleanup_push(cleanup, NULL);
    CHECK_EQ(cap_sem_post(&going), 0);
    long r = call(k);
    fprintf(stderr, "%s returned %ld (errno %d) instead of acting on the cancel\n", names[k], r,
            errno);
    exit(1);
    cap_cleanup_pop(0);
    return NULL;
}

struct outcome {
    long r;
    int err;
};

static void *signalled_caller(void *arg)
{
    enum kind k = (enum kind)(long)arg;
    static struct outcome o;
    CHECK_EQ(cap_sem_post(&going), 0);
    o.r = call(k);
    o.err = errno;
    return &o;
}

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&usr1s, 1);
}

static void on_urg(int sig)
{
    (void)sig;
    atomic_fetch_add(&urgs, 1);
}

static void handle_usr1(int flags)
{
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = flags };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
}

static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            n++;
    return n;
}

/* Lets the waiter reach its wait in the pool (a cancel or signal that
 * comes first ends the call just the same). */
static void settle(void)
{
    cap_sleep_ns(20000000);
}

/* Whatever the caller of kind k waits for arrives; returns a descriptor
 * to close afterwards, or -1. */
static int satisfy(enum kind k)
{
    struct flock un = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    switch (k) {
    case OPEN_FIFO: {
        int w = open(fifo, O_WRONLY | O_NONBLOCK); /* ENXIO until the reader is in */
        for (int i = 0; w < 0 && i < 5000; i++) {
            CHECK_EQ(errno, ENXIO);
            cap_sleep_ns(1000000);
            w = open(fifo, O_WRONLY | O_NONBLOCK);
        }
        CHECK_GE(w, 0);
        return w;
    }
    case SETLKW:
    case OFD_SETLKW:
        CHECK_EQ(fcntl(holder_fd, F_OFD_SETLK, &un), 0);
        return -1;
    case CONNECT:
        return -1; /* see main: the accept queue is drained there */
    default:
        return -1;
    }
}

/* Puts back what the waiter of kind k waits for. */
static void rearm(enum kind k)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    if (k == SETLKW || k == OFD_SETLKW) {
        /* Drop what the completed call took, then hold the record again. */
        struct flock un = fl;
        un.l_type = F_UNLCK;
        CHECK_EQ(fcntl(lock_fd, k == SETLKW ? F_SETLK : F_OFD_SETLK, &un), 0);
        CHECK_EQ(fcntl(holder_fd, F_OFD_SETLK, &fl), 0);
    }
}

static int full_listener, queued;

/* A TCP listener with backlog 0 holding one connection: the kernel drops
 * the next SYN, so a blocking connect waits. */
static void fill_listener(void)
{
    full_listener = tcp_listener(SOCK_STREAM, 0, &full_port);
    queued = tcp_connect(full_port);
    CHECK_GE(queued, 0);
}

static void new_connect_sock(void)
{
    /* Made with the raw system call: a descriptor the runtime did not
     * create and so may not make non-blocking (an inherited socket). */
    connect_sock = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
    CHECK_GE(connect_sock, 0);
}

/* Starts a caller of kind k and, once it waits, sends the process a
 * SIGUSR1 caught by a handler installed with usr1_flags. */
static cap_thread_t signal_while_waiting(long k, int usr1_flags)
{
    if (k == CONNECT)
        new_connect_sock();
    handle_usr1(usr1_flags);
    atomic_store(&usr1s, 0);
    cap_thread_t t = spawn(signalled_caller, (void *)k);
    CHECK_EQ(cap_sem_wait(&going), 0);
    settle();
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    return t;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&going, 0, 0), 0);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(lockfile, sizeof lockfile, "%s/lock", dir);
    CHECK_EQ(mkfifo(fifo, 0600), 0);
    lock_fd = open(lockfile, O_RDWR | O_CREAT, 0600);
    holder_fd = open(lockfile, O_RDWR);
    CHECK_GE(lock_fd, 0);
    CHECK_GE(holder_fd, 0);
    /* An OFD lock conflicts with every other description's lock, OFD or
     * traditional, even within one process. */
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    CHECK_EQ(fcntl(holder_fd, F_OFD_SETLK, &fl), 0);
    fill_listener();

    struct sigaction urg = { .sa_handler = on_urg, .sa_flags = SA_RESTART };
    sigemptyset(&urg.sa_mask);
    CHECK_EQ(sigaction(SIGURG, &urg, NULL), 0);

    int fds_before = open_fds();
    for (long k = 0; k < NKINDS; k++) {
        /* 1. Cancelled while waiting. */
        if (k == CONNECT)
            new_connect_sock();
        atomic_store(&cleanups, 0);
        cap_thread_t t = spawn(cancelled_caller, (void *)k);
        CHECK_EQ(cap_sem_wait(&going), 0);
        settle();
        CHECK_EQ(cap_thread_cancel(t), 0);
        CHECK(join(t) == CAP_CANCELED);
        CHECK_EQ(atomic_load(&cleanups), 1);
        if (k == CONNECT)
            close(connect_sock);
        fprintf(stderr, "%s: cancelled\n", names[k]);

        /* 2. Interrupted by a signal whose handler lacks SA_RESTART. */
        t = signal_while_waiting(k, 0);
        struct outcome *o = join(t);
        CHECK_EQ(o->r, -1);
        CHECK_EQ(o->err, EINTR);
        CHECK_EQ(atomic_load(&usr1s), 1);
        if (k == CONNECT)
            close(connect_sock);
        fprintf(stderr, "%s: interrupted\n", names[k]);

        /* 3. With SA_RESTART the signal does not end the call, which
         * completes when the other party comes. */
        t = signal_while_waiting(k, SA_RESTART);
        /* The handler runs on whichever kernel thread the kernel chose,
         * which a loaded machine may not run for a while: wait for it
         * (a fixed 20 ms once fell short, under CAP_MIGRATE=1). */
        for (int i = 0; atomic_load(&usr1s) == 0 && i < 30000; i++)
            cap_sleep_ns(1000000);
        settle();
        CHECK_EQ(atomic_load(&usr1s), 1);
        int other = satisfy((enum kind)k);
        int accepted = -1;
        if (k == CONNECT) { /* room in the queue: the waiting SYN is retried */
            accepted = accept(full_listener, NULL, NULL);
            CHECK_GE(accepted, 0);
        }
        o = join(t);
        CHECK_EQ(o->r < 0 ? o->err : 0, 0);
        if (k == OPEN_FIFO)
            CHECK_EQ(close((int)o->r), 0);
        if (other >= 0)
            CHECK_EQ(close(other), 0);
        if (k == CONNECT) {
            close(connect_sock);
            close(accepted);
            close(queued);
            close(full_listener);
            fill_listener();
        }
        rearm((enum kind)k);
        fprintf(stderr, "%s: restarted and completed\n", names[k]);
    }
    CHECK_EQ(open_fds(), fds_before);

    /* The kicks never reached the program's SIGURG handler. */
    CHECK_EQ(atomic_load(&urgs), 0);
    CHECK_EQ(kill(getpid(), SIGURG), 0);
    for (int i = 0; i < 5000 && atomic_load(&urgs) == 0; i++)
        cap_sleep_ns(1000000);
    CHECK_EQ(atomic_load(&urgs), 1);
    struct sigaction back;
    CHECK_EQ(sigaction(SIGURG, NULL, &back), 0);
    CHECK(back.sa_handler == on_urg);
    CHECK((back.sa_flags & SA_RESTART) != 0);

    close(queued);
    close(full_listener);
    close(lock_fd);
    close(holder_fd);
    unlink(fifo);
    unlink(lockfile);
    rmdir(dir);
    return 0;
}
