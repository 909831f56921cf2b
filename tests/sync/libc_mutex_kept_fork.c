/* SPDX-License-Identifier: MIT */
/* Description: fork while a user thread of another worker keeps taking
 * and letting go process-shared glibc mutexes, one in each of the
 * library's table buckets (so the table of such holders is locked now and
 * then, anywhere); each child takes another such mutex, free, that the
 * table files in the same place as a churned one. The table's locks start
 * free in the child: before, a child forked while one was held spun for
 * ever (about 2 children in 5 hung). And free before anything of the
 * child's runtime uses the table: the I/O layer's reset initialises its
 * pool's mutex (through the library's pthread_mutex_init, which looks in
 * the table), and ran first (a child in 60-70 hung while the mutex
 * churned was in that mutex's bucket, in 1.5% of runs; every bucket is
 * churned now). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

enum { MUTEXES = 1024, BUCKETS = 64, CHILDREN = 100 };

static pthread_mutex_t ms[MUTEXES];
static pthread_mutex_t *churned[BUCKETS], *taken_in_child;
static int nchurned;
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
        pthread_mutex_t *m = churned[i % nchurned];
        CHECK_EQ(pthread_mutex_lock(m), 0);
        CHECK_EQ(pthread_mutex_unlock(m), 0);
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
    bool seen[BUCKETS] = { false };
    for (int i = 0; i < MUTEXES; i++) {
        unsigned b = bucket_of(&ms[i]);
        if (!seen[b]) {
            seen[b] = true;
            churned[nchurned++] = &ms[i];
        } else if (taken_in_child == NULL && b == bucket_of(churned[0])) {
            taken_in_child = &ms[i];
        }
    }
    CHECK(taken_in_child != NULL);
    CHECK_GE(nchurned, BUCKETS / 2);
    /* New threads start wherever a worker is free to take them; on a
     * loaded machine the second worker's kernel thread may wait long for
     * a CPU, and all of the first 64 tries once started on worker 0. */
    enum { TRIES = 5000 };
    static cap_thread_t t[TRIES];
    int n = 0;
    while (!atomic_load(&churning)) {
        CHECK_LT(n, TRIES);
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
