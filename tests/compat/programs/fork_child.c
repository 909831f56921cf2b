/* SPDX-License-Identifier: MIT */
/* Description: fork() from one thread while others are blocked (in
 * accept, read, sleeps): the child has only the forking thread (the
 * others never run there), can create threads, use pipes and sockets and
 * sleep, and exits with its status; nothing the child does disturbs the
 * parent: its threads go on, and the accept it was blocked in still gets
 * the connection although the child closed the listening socket. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static int listener, wake[2];
static volatile long ticks;
static volatile int stop;

static void *acceptor(void *arg)
{
    (void)arg;
    int c = accept(listener, NULL, NULL);
    EXPECT(c >= 0);
    close(c);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    char ch;
    EXPECT_EQ(read(wake[0], &ch, 1), 1);
    return NULL;
}

static void *ticker(void *arg)
{
    (void)arg;
    while (!stop) {
        ticks++;
        usleep(1000);
    }
    return NULL;
}

static void *child_writer(void *arg)
{
    int fd = *(int *)arg;
    usleep(20000);
    EXPECT_EQ(write(fd, "y", 1), 1);
    return NULL;
}

/* The child's checks; its exit status says which failed (0: none). */
static int child(void)
{
    long t0 = ticks;
    usleep(100000);
    if (ticks != t0)
        return 10; /* the parent's ticker ran here */
    if (close(listener) != 0)
        return 11;
    int p[2];
    if (pipe(p) != 0)
        return 12;
    pthread_t t;
    if (pthread_create(&t, NULL, child_writer, &p[1]) != 0)
        return 13;
    char ch = 0;
    if (read(p[0], &ch, 1) != 1 || ch != 'y') /* waits for the child's own thread */
        return 14;
    if (pthread_join(t, NULL) != 0)
        return 15;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 16;
    if (pthread_create(&t, NULL, child_writer, &sv[1]) != 0)
        return 17;
    if (recv(sv[0], &ch, 1, 0) != 1 || ch != 'y')
        return 18;
    if (pthread_join(t, NULL) != 0)
        return 19;
    if (ticks != t0)
        return 20;
    return 7;
}

int main(void)
{
    alarm(20);
    listener = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT(listener >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    EXPECT_EQ(bind(listener, (struct sockaddr *)&a, sizeof a), 0);
    EXPECT_EQ(listen(listener, 8), 0);
    socklen_t len = sizeof a;
    EXPECT_EQ(getsockname(listener, (struct sockaddr *)&a, &len), 0);
    EXPECT_EQ(pipe(wake), 0);

    pthread_t ta, tr, tt;
    EXPECT_EQ(pthread_create(&ta, NULL, acceptor, NULL), 0);
    EXPECT_EQ(pthread_create(&tr, NULL, reader, NULL), 0);
    EXPECT_EQ(pthread_create(&tt, NULL, ticker, NULL), 0);
    usleep(50000); /* all three blocked or sleeping */

    fflush(stdout);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0)
        _exit(child());

    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 7);

    long t0 = ticks;
    usleep(20000);
    EXPECT(ticks != t0); /* the parent's ticker goes on */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    EXPECT_EQ(pthread_join(ta, NULL), 0);
    EXPECT_EQ(write(wake[1], "x", 1), 1);
    EXPECT_EQ(pthread_join(tr, NULL), 0);
    stop = 1;
    EXPECT_EQ(pthread_join(tt, NULL), 0);
    close(s);
    return 0;
}
