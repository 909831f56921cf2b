/* SPDX-License-Identifier: MIT */
/* Description: the blocking calls POSIX names as cancellation points act
 * on a cancel while blocked, as on NPTL: a thread blocked in accept,
 * poll, select, epoll_wait, recv, nanosleep, sleep, pause, sem_wait,
 * sigwait, pthread_join, waitpid or msgrcv is cancelled, its cleanup
 * handler runs, and joining it gives PTHREAD_CANCELED; the resources it
 * waited on still work afterwards (the semaphore keeps its count, the
 * listening socket accepts). A cancel sent before the call is entered
 * acts on entry. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum call {
    ACCEPT, POLL, SELECT, EPOLL_WAIT, RECV, NANOSLEEP, SLEEP, PAUSE, SEM_WAIT, SIGWAIT,
    JOIN, WAITPID, MSGRCV, CALLS
};
static const char *const names[CALLS] = { "accept", "poll", "select", "epoll_wait", "recv",
                                          "nanosleep", "sleep", "pause", "sem_wait", "sigwait",
                                          "pthread_join", "waitpid", "msgrcv" };

static int listener, pipe_fds[2], sock_pair[2], epfd, msq;
static sem_t sem;
static pid_t child;
static pthread_t forever;

static atomic_int entering, cleaned;

static void cleanup(void *arg)
{
    (void)arg;
    atomic_store(&cleaned, 1);
}

static void *forever_run(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void *blocker(void *arg)
{
    enum call c = (enum call)(long)arg;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&entering, 1);
    char buf[8];
    struct pollfd pf = { .fd = pipe_fds[0], .events = POLLIN };
    fd_set rd;
    struct epoll_event ev;
    struct timespec long_time = { 3600, 0 };
    sigset_t set;
    int sig;
    struct {
        long type;
        char text[8];
    } msg;
    switch (c) {
    case ACCEPT: accept(listener, NULL, NULL); break;
    case POLL: poll(&pf, 1, -1); break;
    case SELECT:
        FD_ZERO(&rd);
        FD_SET(pipe_fds[0], &rd);
        select(pipe_fds[0] + 1, &rd, NULL, NULL, NULL);
        break;
    case EPOLL_WAIT: epoll_wait(epfd, &ev, 1, -1); break;
    case RECV: recv(sock_pair[0], buf, sizeof buf, 0); break;
    case NANOSLEEP: nanosleep(&long_time, NULL); break;
    case SLEEP: sleep(3600); break;
    case PAUSE: pause(); break;
    case SEM_WAIT: sem_wait(&sem); break;
    case SIGWAIT:
        sigemptyset(&set);
        sigaddset(&set, SIGUSR2);
        sigwait(&set, &sig);
        break;
    case JOIN: pthread_join(forever, NULL); break;
    case WAITPID: waitpid(child, NULL, 0); break;
    case MSGRCV: msgrcv(msq, &msg, sizeof msg.text, 0, 0); break;
    case CALLS: break;
    }
    pthread_cleanup_pop(0);
    return (void *)1; /* the call returned: wrong */
}

static void cancel_in(enum call c, int early)
{
    atomic_store(&entering, 0);
    atomic_store(&cleaned, 0);
    pthread_t t;
    if (early) {
        /* Cancelled before it starts: acts at the call. */
        pthread_attr_t a;
        EXPECT_EQ(pthread_attr_init(&a), 0);
        EXPECT_EQ(pthread_create(&t, &a, blocker, (void *)(long)c), 0);
        EXPECT_EQ(pthread_cancel(t), 0);
        EXPECT_EQ(pthread_attr_destroy(&a), 0);
    } else {
        EXPECT_EQ(pthread_create(&t, NULL, blocker, (void *)(long)c), 0);
        while (!atomic_load(&entering))
            sched_yield();
        struct timespec settle = { 0, 5000000 }; /* most often blocked by now */
        nanosleep(&settle, NULL);
        EXPECT_EQ(pthread_cancel(t), 0);
    }
    void *ret = NULL;
    EXPECT_EQ(pthread_join(t, &ret), 0);
    if (ret != PTHREAD_CANCELED)
        fprintf(stderr, "%s (%s): not cancelled\n", names[c], early ? "early" : "blocked");
    EXPECT(ret == PTHREAD_CANCELED);
    EXPECT_EQ(atomic_load(&cleaned), 1);
}

int main(void)
{
    /* Everything the calls wait on, none of it ever ready. */
    listener = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT(listener >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    EXPECT_EQ(bind(listener, (struct sockaddr *)&a, sizeof a), 0);
    EXPECT_EQ(listen(listener, 4), 0);
    EXPECT_EQ(pipe(pipe_fds), 0);
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sock_pair), 0);
    epfd = epoll_create1(0);
    EXPECT(epfd >= 0);
    struct epoll_event ev = { .events = EPOLLIN };
    EXPECT_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, pipe_fds[0], &ev), 0);
    EXPECT_EQ(sem_init(&sem, 0, 0), 0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &usr2, NULL), 0); /* inherited: sigwait's */
    msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    EXPECT(msq >= 0);
    child = fork();
    EXPECT(child >= 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* not left behind if main fails */
        for (;;)
            pause();
    }
    EXPECT_EQ(pthread_create(&forever, NULL, forever_run, NULL), 0);

    for (int early = 0; early < 2; early++)
        for (int c = 0; c < CALLS; c++)
            cancel_in((enum call)c, early);

    /* What they waited on still works. */
    EXPECT_EQ(sem_post(&sem), 0);
    EXPECT_EQ(sem_trywait(&sem), 0);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t len = sizeof a;
    EXPECT_EQ(getsockname(listener, (struct sockaddr *)&a, &len), 0);
    EXPECT_EQ(connect(c, (struct sockaddr *)&a, sizeof a), 0);
    int s = accept(listener, NULL, NULL);
    EXPECT(s >= 0);
    EXPECT_EQ(close(s), 0);
    EXPECT_EQ(close(c), 0);

    EXPECT_EQ(kill(child, SIGKILL), 0);
    EXPECT_EQ(waitpid(child, NULL, 0), child);
    EXPECT_EQ(msgctl(msq, IPC_RMID, NULL), 0);
    EXPECT_EQ(pthread_cancel(forever), 0);
    EXPECT_EQ(pthread_join(forever, NULL), 0);
    return 0;
}
