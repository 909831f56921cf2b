/* SPDX-License-Identifier: MIT */
/* Description: fork() while other threads pass tokens through a ring of
 * the program's pipes (blocking, as pipe() makes them), 300 times, each
 * time with new pipes. Every read and write of those threads either
 * moves its byte or waits for it: none says EAGAIN, and none waits for
 * good. The library makes its pipes non-blocking underneath and gives
 * them back their blocking mode at a fork (the child holds them too);
 * a thread of another worker reading meanwhile got EAGAIN (8 runs in 10
 * on two workers) while the give-back had cleared the library's mark
 * but not yet the mode. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { RING = 6, TOKENS = 2, ROUNDS = 300, CHILD_STATUS = 42 };

static int pipes[RING][2];
static atomic_int stop;

/* Reads one byte from ring member i's pipe, writes it to the next one's;
 * a 'q' goes round once more and ends each member. */
static void *member(void *arg)
{
    long i = (long)arg;
    for (;;) {
        char c;
        ssize_t n = read(pipes[i][0], &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 1)
            fprintf(stderr, "member %ld: read said %zd (errno %d)\n", i, n, errno);
        EXPECT_EQ(n, 1);
        bool last = c == 'q';
        if (atomic_load(&stop))
            c = 'q';
        for (;;) {
            n = write(pipes[(i + 1) % RING][1], &c, 1);
            if (n >= 0 || errno != EINTR)
                break;
        }
        if (n != 1)
            fprintf(stderr, "member %ld: write said %zd (errno %d)\n", i, n, errno);
        EXPECT_EQ(n, 1);
        if (last)
            return NULL;
    }
}

static void one_round(void)
{
    atomic_store(&stop, 0);
    for (int i = 0; i < RING; i++)
        EXPECT_EQ(pipe(pipes[i]), 0);
    pthread_t t[RING];
    for (long i = 0; i < RING; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, member, (void *)i), 0);
    for (int k = 0; k < TOKENS; k++)
        EXPECT_EQ(write(pipes[k * (RING / TOKENS)][1], "x", 1), 1);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0)
        _exit(CHILD_STATUS);
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), CHILD_STATUS);
    atomic_store(&stop, 1);
    for (int i = 0; i < RING; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < RING; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
}

int main(void)
{
    alarm(50);
    for (int round = 0; round < ROUNDS; round++)
        one_round();
    return 0;
}
