/* SPDX-License-Identifier: MIT */
/* Description: a signal handler wakes threads the two async-signal-safe
 * ways POSIX offers, sem_post and write to a pipe, while those threads
 * wait, park and run. A 1 ms interval timer's SIGALRM handler posts a
 * semaphore that three threads take 300 units from, then writes bytes to
 * a pipe that the main thread reads 300 of. Then one SIGUSR1 handler call
 * writes a byte to each of 300 pipes, each read by a thread of its own
 * (more wake-ups than the runtime queues per handler). Built with
 * <capriccio/pthread.h> the first wait used to end the program with a
 * false "deadlock" report (nothing the runtime could see would wake it),
 * and a handler's wake-up took locks that the code it interrupted could
 * hold. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"

enum { UNITS = 300, TAKERS = 3 };

static sem_t sem;
static int pipe_fd[2];
static volatile sig_atomic_t use_pipe;
static atomic_int taken;

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    if (use_pipe) {
        ssize_t r = write(pipe_fd[1], "s", 1);
        (void)r;
    } else {
        sem_post(&sem);
    }
    errno = saved;
}

enum { FANOUT = 300 };
static int fan[FANOUT][2];

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    for (int i = 0; i < FANOUT; i++) {
        ssize_t r = write(fan[i][1], "f", 1);
        (void)r;
    }
    errno = saved;
}

static void *fan_reader(void *arg)
{
    int *fds = arg;
    char c;
    ssize_t r;
    while ((r = read(fds[0], &c, 1)) == -1 && errno == EINTR)
        ;
    EXPECT_EQ(r, 1);
    EXPECT_EQ(c, 'f');
    return NULL;
}

static void *taker(void *arg)
{
    (void)arg;
    for (;;) {
        int r;
        while ((r = sem_wait(&sem)) == -1 && errno == EINTR)
            ;
        EXPECT_EQ(r, 0);
        int n = atomic_fetch_add(&taken, 1) + 1;
        if (n == UNITS) /* the last unit: let the other takers out */
            for (int i = 1; i < TAKERS; i++)
                EXPECT_EQ(sem_post(&sem), 0);
        if (n >= UNITS)
            return NULL;
    }
}

static void timer_every(long usec)
{
    struct itimerval it = { { 0, usec }, { 0, usec } };
    EXPECT_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

int main(void)
{
    EXPECT_EQ(sem_init(&sem, 0, 0), 0);
    EXPECT_EQ(pipe(pipe_fd), 0);
    install_handler(SIGALRM, on_alarm, SA_RESTART);

    timer_every(1000);
    pthread_t t[TAKERS];
    for (int i = 0; i < TAKERS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, taker, NULL), 0);
    /* Main waits in join, the takers in sem_wait: nothing but the
     * handler can move them on. */
    for (int i = 0; i < TAKERS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    EXPECT(atomic_load(&taken) >= UNITS);

    use_pipe = 1;
    int got = 0;
    char buf[64];
    while (got < UNITS) {
        ssize_t r = read(pipe_fd[0], buf, sizeof buf);
        if (r == -1 && errno == EINTR)
            continue;
        EXPECT(r > 0);
        got += (int)r;
    }
    timer_every(0);
    EXPECT_EQ(sem_destroy(&sem), 0);

    install_handler(SIGUSR1, on_usr1, SA_RESTART);
    static pthread_t readers[FANOUT];
    for (int i = 0; i < FANOUT; i++) {
        EXPECT_EQ(pipe(fan[i]), 0);
        EXPECT_EQ(pthread_create(&readers[i], NULL, fan_reader, fan[i]), 0);
    }
    usleep(20000); /* most readers are parked by now; the rest find the byte */
    EXPECT_EQ(kill(getpid(), SIGUSR1), 0);
    for (int i = 0; i < FANOUT; i++) {
        EXPECT_EQ(pthread_join(readers[i], NULL), 0);
        EXPECT_EQ(close(fan[i][0]), 0);
        EXPECT_EQ(close(fan[i][1]), 0);
    }
    return 0;
}
