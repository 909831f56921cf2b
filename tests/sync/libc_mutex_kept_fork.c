/* SPDX-License-Identifier: MIT */
/* Description: fork while a user thread of another worker keeps taking
 * and letting go a process-shared glibc mutex (so the library's table of
 * such holders is locked now and then); each child takes another such
 * mutex, free, that the table files in the same place. The table's locks
 * start free in the child: before, a child forked while one was held
 * spun for ever (about 2 children in 5 hung). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

enum { MUTEXES = 256, CHILDREN = 100 };

static pthread_mutex_t ms[MUTEXES];
static pthread_mutex_t *churned, *taken_in_child;
static atomic_int stop, churning;

/* The table's bucket of a mutex (src/intercept/libc_mutex.c). */
static unsigned bucket_of(const void *p)
{
    return (unsigned)(((uintptr_t)p >> 4) * 0x9e3779b1u >> 26) % 64;
}

static void *churn(void *arg)
{
    (void)arg;
    if (cap_worker_id() == 0)
        return NULL; /* another worker's thread is wanted */
    atomic_store(&churning, 1);
    for (long i = 0; !atomic_load(&stop); i++) {
        CHECK_EQ(pthread_mutex_lock(churned), 0);
        CHECK_EQ(pthread_mutex_unlock(churned), 0);
        if (i % 4096 == 0)
            cap_yield();
    }
    return NULL;
}

int main(void)
{
    if (cap_worker_count() < 2)
        return 77; /* needs a second worker */
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
    for (int i = 0; i < MUTEXES; i++)
        CHECK_EQ(pthread_mutex_init(&ms[i], &a), 0);
    churned = &ms[0];
    for (int i = 1; i < MUTEXES && taken_in_child == NULL; i++)
        if (bucket_of(&ms[i]) == bucket_of(churned))
            taken_in_child = &ms[i];
    CHECK(taken_in_child != NULL);
    cap_thread_t t[64];
    int n = 0;
    while (!atomic_load(&churning)) {
        CHECK_LT(n, 64);
        t[n++] = spawn(churn, NULL);
        cap_sleep_ns(2000000);
    }
    for (int i = 0; i < CHILDREN; i++) {
        pid_t pid = fork();
        CHECK_GE(pid, 0);
        if (pid == 0) {
            int rc = pthread_mutex_trylock(taken_in_child);
            _exit(rc == 0 && pthread_mutex_unlock(taken_in_child) == 0 ? 0 : 1);
        }
        int st = 0, waited = 0;
        pid_t r;
        while ((r = waitpid(pid, &st, WNOHANG)) == 0 && waited++ < 10000)
            cap_sleep_ns(1000000);
        if (r == 0) { /* hung: 10 s */
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            CHECK(!"a child hung");
        }
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < n; i++)
        join(t[i]);
    return 0;
}
