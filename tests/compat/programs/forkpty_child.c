/* SPDX-License-Identifier: MIT */
/* Description: forkpty() from a thread while others are blocked: the
 * child is a session leader whose standard streams are the new
 * terminal; it waits in read() for a pipe the parent writes later, then
 * writes what it got to the terminal, which the parent reads from the
 * master. And login_tty() in a fork's child whose descriptor 0 was a
 * pipe: the child's read(0) then waits for a line typed at the master
 * while the child's other thread runs.
 * Before the library wrapped them, forkpty's child (glibc's internal
 * fork) shared the parent's I/O instances and its read() never returned. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <utmp.h>

#include "bystanders.h"
#include "check.h"
#include "terminal_util.h"

/* The child of forkpty; its exit status says which check failed (7: none). */
static int pty_child(int in)
{
    if (!isatty(0) || !isatty(1) || !isatty(2))
        return 10;
    if (getsid(0) != getpid())
        return 11;
    char buf[8];
    if (read(in, buf, sizeof buf) != 5 || memcmp(buf, "hello", 5) != 0)
        return 12; /* waits for the parent's write */
    if (write(1, "got:hello\n", 10) != 10)
        return 13;
    return 7;
}

static void *pty_forker(void *arg)
{
    (void)arg;
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    int master = -1;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    EXPECT(pid >= 0);
    if (pid == 0)
        _exit(pty_child(p[0]));
    EXPECT(master >= 0);
    sleep_ms(50); /* the child is waiting in read by now, mostly */
    EXPECT_EQ(write(p[1], "hello", 5), 5);
    EXPECT(master_shows_within(master, "got:hello", 10000));
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 7);
    close(master);
    close(p[0]);
    close(p[1]);
    return NULL;
}

/* login_tty in a fork's child whose 0 was a pipe the library made: read(0)
 * then reads the terminal, a line typed at the master only after the
 * child's other thread has run (glibc's login_tty, whose dup2 the
 * library did not see, left 0 described as that non-blocking pipe: the
 * read waited in the kernel, holding the worker, and the thread never
 * ran until the line came). */
static void login_tty_over_pipe(void)
{
    int master, terminal;
    EXPECT_EQ(openpty(&master, &terminal, NULL, NULL, NULL), 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        close(master);
        close(0);
        int p[2];
        if (pipe(p) != 0 || p[0] != 0)
            _exit(20);
        if (login_tty(terminal) != 0)
            _exit(21);
        pthread_t t;
        if (pthread_create(&t, NULL, terminal_ticker, NULL) != 0)
            _exit(22);
        char line[16];
        ssize_t n = read(0, line, sizeof line);
        if (n != 6 || memcmp(line, "typed\n", 6) != 0)
            _exit(23);
        if (!atomic_load(&terminal_ticked))
            _exit(24); /* the line came first: the thread did not run */
        pthread_join(t, NULL);
        _exit(7);
    }
    close(terminal);
    /* Waits for the child's thread (5 s at most), then types the line. */
    int saw_tick = master_shows_within(master, "tick", 5000);
    EXPECT_EQ(write(master, "typed\n", 6), 6);
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 7);
    EXPECT(saw_tick);
    close(master);
}

int main(void)
{
    alarm(30);
    bystanders_start();
    pthread_t tf;

    for (int round = 0; round < 3; round++) {
        EXPECT_EQ(pthread_create(&tf, NULL, pty_forker, NULL), 0);
        EXPECT_EQ(pthread_join(tf, NULL), 0);
    }
    login_tty_over_pipe();

    bystanders_finish();
    return 0;
}
