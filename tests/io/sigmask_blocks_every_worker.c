/* SPDX-License-Identifier: MIT */
/* Description: a signal blocked by every user thread is blocked on every
 * worker's kernel thread by the time sigprocmask returns (io/sigmask.h):
 * sent to the process, it stays pending while the other workers sleep or
 * run, and no handler runs; unblocking it delivers it before the call
 * returns. Before, masks were per kernel thread, so with two workers the
 * other worker took it at once. Then with many threads that inherit the
 * block, one thread's own unblock lets it in for that thread only: the
 * handler runs in its call, and none of the others' parked reads (the
 * handler has no SA_RESTART) is interrupted, since they block it. */
#include <signal.h>
#include <stdbool.h>

#include "io/io_util.h"

enum { ROUNDS = 100, READERS = 8 };

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static sigset_t usr1_set(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    return s;
}

static bool usr1_pending(void)
{
    sigset_t p;
    CHECK_EQ(sigpending(&p), 0);
    return sigismember(&p, SIGUSR1) == 1;
}

/* Runs on whichever worker it is placed on, and ends. */
static void *bounce(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++)
        cap_yield();
    return NULL;
}

/* Reads one byte: only the byte, never EINTR (it blocks SIGUSR1). */
static void *reader(void *arg)
{
    int fd = *(int *)arg;
    char c;
    CHECK_EQ(read(fd, &c, 1), 1);
    CHECK_EQ(c, 'x');
    return NULL;
}

struct unblocker {
    atomic_int go;
    int seen;
};

static void *unblock_when_told(void *arg)
{
    struct unblocker *u = arg;
    while (!atomic_load(&u->go))
        cap_sleep_ns(1000000);
    sigset_t s = usr1_set();
    int before = handled;
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    u->seen = handled - before; /* delivered before the call returned */
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    sigset_t s = usr1_set();

    /* Main alone: its mask is every worker's. */
    for (int i = 0; i < ROUNDS; i++) {
        int before = handled;
        CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
        CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        join(spawn(bounce, NULL));
        if (i % 10 == 0)
            cap_sleep_ns(1000000); /* every worker asleep a while */
        CHECK_EQ(handled, before);
        CHECK(usr1_pending());
        CHECK_EQ(sigprocmask(SIG_UNBLOCK, &s, NULL), 0);
        CHECK_EQ(handled, before + 1);
        CHECK(!usr1_pending());
    }

    /* Threads made while it is blocked inherit the block. */
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    int p[READERS][2];
    cap_thread_t r[READERS];
    for (int i = 0; i < READERS; i++) {
        CHECK_EQ(pipe(p[i]), 0);
        r[i] = spawn(reader, &p[i][0]);
    }
    struct unblocker u = { .seen = -1 };
    cap_thread_t ub = spawn(unblock_when_told, &u);
    cap_sleep_ns(5000000); /* the readers park */
    int before = handled;
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    cap_sleep_ns(5000000);
    CHECK_EQ(handled, before);
    atomic_store(&u.go, 1);
    join(ub);
    CHECK_EQ(u.seen, 1);
    CHECK_EQ(handled, before + 1);
    for (int i = 0; i < READERS; i++) {
        CHECK_EQ(write(p[i][1], "x", 1), 1);
        join(r[i]);
        close(p[i][0]);
        close(p[i][1]);
    }
    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &s, NULL), 0);
    CHECK_EQ(handled, before + 1);
    puts("ok");
    return 0;
}
