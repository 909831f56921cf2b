/* SPDX-License-Identifier: MIT */
/* Description: what a handler leaves for the signal dispatch (a waiter's
 * wake-up after sem_post, a pipe reader's after a write, the descriptor
 * table's bookkeeping after a close; util/sigctx.h) runs also when the
 * signal was aimed at the thread it interrupted: raise() and
 * pthread_kill() of itself, whose deliveries the runtime does not number
 * (they interrupt no other thread's call). Before, only a numbered
 * delivery brought the dispatch: a thread parked in sem_wait, in a pipe
 * read or in a read of the socket the handler closed stayed parked (a
 * hang: the test's timeout), until some other signal came. */
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include "io/io_util.h"

static cap_sem_t sem;
static int p[2], sv[2];
static volatile sig_atomic_t what;

enum { POST, WRITE, CLOSE };

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    if (what == POST && cap_sem_post(&sem) != 0)
        _exit(3);
    if (what == WRITE && write(p[1], "w", 1) != 1)
        _exit(4);
    if (what == CLOSE && close(sv[0]) != 0)
        _exit(5);
    errno = saved;
}

static void *sem_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_sem_wait(&sem), 0);
    return NULL;
}

static void *pipe_reader(void *arg)
{
    (void)arg;
    char c;
    CHECK_EQ(read(p[0], &c, 1), 1);
    CHECK_EQ(c, 'w');
    return NULL;
}

static void *closed_reader(void *arg)
{
    (void)arg;
    char c;
    CHECK_EQ(read(sv[0], &c, 1), -1); /* the runtime's EBADF for a close (README) */
    CHECK_EQ(errno, EBADF);
    return NULL;
}

/* Parks a thread running fn, then has the handler do `action` by a
 * signal this thread sends itself (by_kill: pthread_kill, else raise). */
static void handler_wakes(void *(*fn)(void *), int action, int by_kill)
{
    cap_thread_t t = spawn(fn, NULL);
    cap_sleep_ns(20000000); /* parked by now (the test is weaker if not) */
    what = action;
    if (by_kill)
        CHECK_EQ(pthread_kill(pthread_self(), SIGUSR1), 0);
    else
        CHECK_EQ(raise(SIGUSR1), 0);
    join(t);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    CHECK_EQ(pipe(p), 0);
    for (int by_kill = 0; by_kill < 2; by_kill++) {
        handler_wakes(sem_waiter, POST, by_kill);
        handler_wakes(pipe_reader, WRITE, by_kill);
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        handler_wakes(closed_reader, CLOSE, by_kill);
        CHECK_EQ(close(sv[1]), 0);
    }
    CHECK_EQ(cap_sem_destroy(&sem), 0);
    puts("ok");
    return 0;
}
