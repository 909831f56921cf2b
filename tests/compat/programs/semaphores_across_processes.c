/* SPDX-License-Identifier: MIT */
/* Description: semaphores shared between processes pass a token back and
 * forth: an unnamed one (sem_init with pshared) in a shared mapping
 * between a parent and its forked child, and two named ones (sem_open)
 * between the parent and the program its child runs by exec: this one,
 * or the one COMPAT_PEER names (the same source built on the other
 * thread package). While one thread of the parent waits, its others run.
 * Then sem_timedwait's timeout and the errors of sem_open and
 * sem_unlink. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { ROUNDS = 2000 };

struct shared {
    sem_t ping, pong;
    int last; /* who moved last: 1 the parent, 2 the child */
};

static void wait_child(pid_t pid)
{
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

/* The exec'd child: answers every ping of the named pair. */
static int named_child(const char *ping_name, const char *pong_name)
{
    sem_t *ping = sem_open(ping_name, 0);
    sem_t *pong = sem_open(pong_name, 0);
    EXPECT(ping != SEM_FAILED);
    EXPECT(pong != SEM_FAILED);
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_EQ(sem_wait(ping), 0);
        EXPECT_EQ(sem_post(pong), 0);
    }
    EXPECT_EQ(sem_close(ping), 0);
    EXPECT_EQ(sem_close(pong), 0);
    return 0;
}

static void *wait_pong(void *arg)
{
    struct shared *sh = arg;
    EXPECT_EQ(sem_wait(&sh->pong), 0);
    return NULL;
}

static void unnamed(void)
{
    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    EXPECT(sh != MAP_FAILED);
    EXPECT_EQ(sem_init(&sh->ping, 1, 0), 0);
    EXPECT_EQ(sem_init(&sh->pong, 1, 0), 0);
    int go[2];
    EXPECT_EQ(pipe(go), 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        for (int i = 0; i < ROUNDS; i++) {
            EXPECT_EQ(sem_wait(&sh->ping), 0);
            EXPECT_EQ(sh->last, 1);
            sh->last = 2;
            EXPECT_EQ(sem_post(&sh->pong), 0);
        }
        /* The last pong only once the parent says so, through a pipe
         * that a thread of the parent writes while another one waits. */
        char c;
        EXPECT_EQ(read(go[0], &c, 1), 1);
        EXPECT_EQ(sem_post(&sh->pong), 0);
        _exit(0);
    }
    for (int i = 0; i < ROUNDS; i++) {
        sh->last = 1;
        EXPECT_EQ(sem_post(&sh->ping), 0);
        EXPECT_EQ(sem_wait(&sh->pong), 0);
        EXPECT_EQ(sh->last, 2);
    }
    pthread_t waiter;
    EXPECT_EQ(pthread_create(&waiter, NULL, wait_pong, sh), 0);
    usleep(20000); /* the waiter is (most likely) waiting by now */
    EXPECT_EQ(write(go[1], "g", 1), 1);
    EXPECT_EQ(pthread_join(waiter, NULL), 0);
    wait_child(pid);

    int v = -1;
    EXPECT_EQ(sem_getvalue(&sh->pong, &v), 0);
    EXPECT_EQ(v, 0);
    struct timespec deadline = after_ms(CLOCK_REALTIME, 30);
    errno = 0;
    EXPECT_EQ(sem_timedwait(&sh->pong, &deadline), -1);
    EXPECT_EQ(errno, ETIMEDOUT);
    EXPECT(reached(CLOCK_REALTIME, deadline));
    EXPECT_EQ(sem_destroy(&sh->ping), 0);
    EXPECT_EQ(sem_destroy(&sh->pong), 0);
    EXPECT_EQ(munmap(sh, sizeof *sh), 0);
    close(go[0]);
    close(go[1]);
}

static void named(void)
{
    char ping_name[64], pong_name[64], missing[64];
    snprintf(ping_name, sizeof ping_name, "/capriccio-compat-%d-ping", (int)getpid());
    snprintf(pong_name, sizeof pong_name, "/capriccio-compat-%d-pong", (int)getpid());
    snprintf(missing, sizeof missing, "/capriccio-compat-%d-missing", (int)getpid());
    sem_t *ping = sem_open(ping_name, O_CREAT | O_EXCL, 0600, 0);
    sem_t *pong = sem_open(pong_name, O_CREAT | O_EXCL, 0600, 0);
    EXPECT(ping != SEM_FAILED);
    EXPECT(pong != SEM_FAILED);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        const char *peer = getenv("COMPAT_PEER");
        if (peer == NULL)
            peer = "/proc/self/exe";
        execl(peer, peer, "child", ping_name, pong_name, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < ROUNDS; i++) {
        EXPECT_EQ(sem_post(ping), 0);
        EXPECT_EQ(sem_wait(pong), 0);
    }
    wait_child(pid);
    int v = -1;
    EXPECT_EQ(sem_getvalue(ping, &v), 0);
    EXPECT_EQ(v, 0);

    errno = 0;
    EXPECT(sem_open(ping_name, O_CREAT | O_EXCL, 0600, 0) == SEM_FAILED);
    EXPECT_EQ(errno, EEXIST);
    errno = 0;
    EXPECT(sem_open(missing, 0) == SEM_FAILED);
    EXPECT_EQ(errno, ENOENT);
    errno = 0;
    EXPECT(sem_open(missing, O_CREAT, 0600, (unsigned)SEM_VALUE_MAX + 1) == SEM_FAILED);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(sem_close(ping), 0);
    EXPECT_EQ(sem_close(pong), 0);
    EXPECT_EQ(sem_unlink(ping_name), 0);
    EXPECT_EQ(sem_unlink(pong_name), 0);
    errno = 0;
    EXPECT_EQ(sem_unlink(ping_name), -1);
    EXPECT_EQ(errno, ENOENT);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "child") == 0)
        return named_child(argv[2], argv[3]);
    unnamed();
    named();
    return 0;
}
