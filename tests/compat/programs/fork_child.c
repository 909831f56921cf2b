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

#include "bystanders.h"
#include "check.h"

static int listener;

static void *acceptor(void *arg)
{
    (void)arg;
    int c = accept(listener, NULL, NULL);
    EXPECT(c >= 0);
    close(c);
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
    long t0 = bystanders_ticks();
    usleep(100000);
    if (bystanders_ticks() != t0)
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
    if (bystanders_ticks() != t0)
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

    pthread_t ta;
    EXPECT_EQ(pthread_create(&ta, NULL, acceptor, NULL), 0);
    bystanders_start();
    usleep(30000); /* all three blocked or sleeping */

    fflush(stdout);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0)
        _exit(child());

    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 7);

    int s = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    EXPECT_EQ(pthread_join(ta, NULL), 0);
    bystanders_finish(); /* the parent's reader and ticker go on */
    close(s);
    return 0;
}
