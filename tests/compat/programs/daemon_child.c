/* SPDX-License-Identifier: MIT */
/* Description: daemon() called by a process with another thread running:
 * the daemon has only the calling thread (the other never runs there),
 * and the calling process's parent side exits with status 0. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static volatile long ticks;

static void *ticker(void *arg)
{
    (void)arg;
    for (;;) {
        ticks++;
        usleep(1000);
    }
    return NULL;
}

/* Runs in a child of the test: starts the ticker and becomes a daemon,
 * which reports on the pipe whether the ticker ran in it. */
static void become_daemon(int report)
{
    pthread_t t;
    if (pthread_create(&t, NULL, ticker, NULL) != 0)
        _exit(3);
    usleep(20000);
    if (daemon(1, 1) != 0)
        _exit(4);
    alarm(10);
    long t0 = ticks;
    usleep(50000);
    char verdict = ticks == t0 ? 'k' : 'x';
    if (write(report, &verdict, 1) != 1)
        _exit(5);
    _exit(0);
}

int main(void)
{
    alarm(20);
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        become_daemon(p[1]);
    }
    close(p[1]);
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    char verdict = 0;
    EXPECT_EQ(read(p[0], &verdict, 1), 1); /* from the daemon */
    EXPECT_EQ(verdict, 'k');
    return 0;
}
