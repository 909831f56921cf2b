/* SPDX-License-Identifier: MIT */
/* Description: a signal sent to one thread (pthread_kill) while that
 * thread waits in a call the runtime runs on its offload pool — a
 * record lock (fcntl F_OFD_SETLKW) another open file description holds,
 * open() of a FIFO without a writer — runs the handler in that thread
 * while the call still waits, when the handler has SA_RESTART, and the
 * call then goes on and completes once the other party arrives; a
 * handler without SA_RESTART makes it fail with EINTR. Before, the
 * SA_RESTART handler ran only once the call had ended (for a lock never
 * released: never). */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "io/io_util.h"

enum { POLL_LIMIT = 30000 }; /* 1 ms polls: far beyond any delivery */

static char dir[] = "/tmp/cap-offkill-XXXXXX";
static char fifo[64], lockfile[64];
static int holder_fd;
static atomic_int ready, returned, restart_runs, intr_runs;
static _Atomic cap_thread_t restart_in;

static void on_restart(int sig)
{
    (void)sig;
    restart_in = cap_thread_self();
    atomic_fetch_add(&restart_runs, 1);
}

static void on_intr(int sig)
{
    (void)sig;
    atomic_fetch_add(&intr_runs, 1);
}

enum kind { OFD_LOCK, FIFO_OPEN };

struct call {
    enum kind kind;
    long r;
    int err;
};

static long make_call(enum kind k)
{
    if (k == FIFO_OPEN)
        return open(fifo, O_RDONLY);
    int fd = open(lockfile, O_RDWR);
    CHECK_GE(fd, 0);
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    long r = fcntl(fd, F_OFD_SETLKW, &fl);
    int err = errno;
    CHECK_EQ(close(fd), 0);
    errno = err;
    return r;
}

static void *caller(void *arg)
{
    struct call *c = arg;
    atomic_store(&ready, 1);
    c->r = make_call(c->kind);
    c->err = errno;
    atomic_store(&returned, 1);
    return NULL;
}

static void hold_lock(void)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    CHECK_EQ(fcntl(holder_fd, F_OFD_SETLK, &fl), 0);
}

static void release_lock(void)
{
    struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    CHECK_EQ(fcntl(holder_fd, F_OFD_SETLK, &fl), 0);
}

/* Lets the waiting call complete; returns a descriptor to close, or -1. */
static int other_party(enum kind k)
{
    if (k == OFD_LOCK) {
        release_lock();
        return -1;
    }
    int w = open(fifo, O_WRONLY); /* the reader is there: does not wait */
    CHECK_GE(w, 0);
    return w;
}

static void start(struct call *c, cap_thread_t *t)
{
    atomic_store(&ready, 0);
    atomic_store(&returned, 0);
    atomic_store(&restart_runs, 0);
    atomic_store(&intr_runs, 0);
    if (c->kind == OFD_LOCK)
        hold_lock();
    *t = spawn(caller, c);
    while (!atomic_load(&ready))
        cap_usleep(1000);
    cap_usleep(10000); /* most often in the pool by now; either way it must hold */
}

/* SA_RESTART: the handler runs while the call waits; the call completes. */
static void goes_on(enum kind k)
{
    struct call c = { .kind = k };
    cap_thread_t t;
    start(&c, &t);
    CHECK_EQ(cap_thread_kill(t, SIGUSR2), 0);
    for (int i = 0; atomic_load(&restart_runs) == 0; i++) {
        if (i == POLL_LIMIT) {
            fprintf(stderr, "kind %d: the handler did not run while the call waited\n", k);
            exit(1);
        }
        cap_usleep(1000);
    }
    CHECK_EQ(restart_in, t);
    CHECK_EQ(atomic_load(&returned), 0); /* still waiting: nothing let it through */
    int w = other_party(k);
    join(t);
    CHECK_GE(c.r, 0);
    CHECK_EQ(atomic_load(&restart_runs), 1);
    if (k == FIFO_OPEN)
        CHECK_EQ(close((int)c.r), 0);
    else
        release_lock(); /* it was the caller's, closed with its descriptor */
    if (w >= 0)
        CHECK_EQ(close(w), 0);
}

/* Without SA_RESTART: EINTR after the handler, in the thread. */
static void interrupted(enum kind k)
{
    struct call c = { .kind = k };
    cap_thread_t t;
    start(&c, &t);
    /* Again until it returns: one that came before the call interrupted
     * nothing. */
    while (!atomic_load(&returned)) {
        CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
        cap_usleep(5000);
    }
    join(t);
    CHECK_EQ(c.r, -1);
    CHECK_EQ(c.err, EINTR);
    CHECK_GE(atomic_load(&intr_runs), 1);
    if (k == OFD_LOCK)
        release_lock();
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(lockfile, sizeof lockfile, "%s/lock", dir);
    CHECK_EQ(mkfifo(fifo, 0600), 0);
    holder_fd = open(lockfile, O_RDWR | O_CREAT, 0600);
    CHECK_GE(holder_fd, 0);
    install_handler(SIGUSR2, on_restart, SA_RESTART);
    install_handler(SIGUSR1, on_intr, 0);
    for (int round = 0; round < 3; round++) {
        goes_on(OFD_LOCK);
        goes_on(FIFO_OPEN);
        interrupted(OFD_LOCK);
        interrupted(FIFO_OPEN);
    }
    CHECK_EQ(close(holder_fd), 0);
    CHECK_EQ(unlink(lockfile), 0);
    CHECK_EQ(unlink(fifo), 0);
    CHECK_EQ(rmdir(dir), 0);
    return 0;
}
