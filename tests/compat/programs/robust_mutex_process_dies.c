/* SPDX-License-Identifier: MIT */
/* Description: a process-shared robust mutex whose holder's process ends
 * holding it (exit, abort, SIGKILL) is left to the next locker of any
 * process, told EOWNERDEAD: a user thread already waiting for it (woken
 * within the library's check interval), a later lock, a trylock, and
 * while the dead holder is a zombie not yet reaped. The mutex is made the
 * way APR 1.7 makes its process mutex on Linux (process-shared, robust,
 * priority inheritance: each of those calls returns 0). Before, setrobust
 * and setprotocol(PTHREAD_PRIO_INHERIT) failed with ENOTSUP, so APR could
 * not make the mutex, and httpd with two Listen lines did not start. */
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

struct shared {
    pthread_mutex_t m;
    atomic_int holding; /* the child has it */
    atomic_int release; /* the child may end */
};

static struct shared *sh;

static void make(void)
{
    pthread_mutexattr_t a;
    EXPECT_EQ(pthread_mutexattr_init(&a), 0);
    EXPECT_EQ(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
    EXPECT_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    EXPECT_EQ(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
    int v = -1;
    EXPECT_EQ(pthread_mutexattr_getprotocol(&a, &v), 0);
    EXPECT_EQ(v, PTHREAD_PRIO_INHERIT);
    EXPECT_EQ(pthread_mutex_init(&sh->m, &a), 0);
    EXPECT_EQ(pthread_mutexattr_destroy(&a), 0);
    atomic_store(&sh->holding, 0);
    atomic_store(&sh->release, 0);
}

enum how { EXIT, CRASH, KILLED };

/* A child that takes the mutex and ends holding it as `how` says, once
 * told to. */
static pid_t holder_child(enum how how)
{
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        if (pthread_mutex_lock(&sh->m) != 0)
            _exit(3);
        atomic_store(&sh->holding, 1);
        while (!atomic_load(&sh->release))
            usleep(1000);
        if (how == CRASH) {
            /* abort, not a fault: AddressSanitizer catches those and
             * exits; no core file */
            struct rlimit none = { 0, 0 };
            setrlimit(RLIMIT_CORE, &none);
            abort();
        }
        if (how == KILLED)
            for (;;)
                pause();
        _exit(0);
    }
    while (!atomic_load(&sh->holding))
        usleep(1000);
    return pid;
}

static atomic_int waiter_rc = -1, waiter_in;

static void *waiter(void *arg)
{
    (void)arg;
    atomic_store(&waiter_in, 1);
    int rc = pthread_mutex_lock(&sh->m);
    if (rc == EOWNERDEAD)
        EXPECT_EQ(pthread_mutex_consistent(&sh->m), 0);
    if (rc == 0 || rc == EOWNERDEAD)
        EXPECT_EQ(pthread_mutex_unlock(&sh->m), 0);
    atomic_store(&waiter_rc, rc);
    return NULL;
}

static void reap(pid_t pid, int sig)
{
    int status;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    if (sig == 0) {
        EXPECT(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0);
    } else {
        EXPECT(WIFSIGNALED(status));
        EXPECT_EQ(WTERMSIG(status), sig);
    }
}

int main(void)
{
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    EXPECT(sh != MAP_FAILED);

    /* 1. A thread of ours waits while the child holds it; the child exits. */
    make();
    pid_t pid = holder_child(EXIT);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, waiter, NULL), 0);
    while (!atomic_load(&waiter_in))
        usleep(1000);
    usleep(30000); /* it waits */
    EXPECT_EQ(pthread_mutex_trylock(&sh->m), EBUSY); /* the holder lives */
    atomic_store(&sh->release, 1);
    EXPECT_EQ(pthread_join(t, NULL), 0); /* told while the child is a zombie */
    EXPECT_EQ(atomic_load(&waiter_rc), EOWNERDEAD);
    reap(pid, 0);
    EXPECT_EQ(pthread_mutex_lock(&sh->m), 0); /* made consistent by the waiter */
    EXPECT_EQ(pthread_mutex_unlock(&sh->m), 0);

    /* 2. The child aborts holding it; we lock after it is reaped. */
    make();
    pid = holder_child(CRASH);
    atomic_store(&sh->release, 1);
    reap(pid, SIGABRT);
    EXPECT_EQ(pthread_mutex_lock(&sh->m), EOWNERDEAD);
    EXPECT_EQ(pthread_mutex_consistent(&sh->m), 0);
    EXPECT_EQ(pthread_mutex_unlock(&sh->m), 0);

    /* 3. SIGKILL; a trylock before it is reaped, then left unrecoverable. */
    make();
    pid = holder_child(KILLED);
    EXPECT_EQ(kill(pid, SIGKILL), 0);
    int rc;
    while ((rc = pthread_mutex_trylock(&sh->m)) == EBUSY)
        usleep(1000); /* until the kernel has ended it */
    EXPECT_EQ(rc, EOWNERDEAD);
    EXPECT_EQ(pthread_mutex_unlock(&sh->m), 0);
    EXPECT_EQ(pthread_mutex_lock(&sh->m), ENOTRECOVERABLE);
    reap(pid, SIGKILL);

    /* 4. A child told ENOTRECOVERABLE too: the state is in shared memory. */
    pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0)
        _exit(pthread_mutex_lock(&sh->m) == ENOTRECOVERABLE ? 0 : 4);
    reap(pid, 0);
    return 0;
}
