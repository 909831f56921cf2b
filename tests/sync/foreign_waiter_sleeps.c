/* SPDX-License-Identifier: MIT */
/* Description: a kernel thread the library does not run (made with
 * glibc's pthread_create) that waits on one of the library's objects
 * (cap_cond_wait, cap_mutex_lock, cap_sem_wait) sleeps in the kernel
 * until it is woken: /proc shows its state as S (sleeping). Before, it
 * called sched_yield in a loop and stayed runnable (R) for the whole
 * wait, burning a CPU. Each wait then ends when a user thread wakes it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc_util.h"
#include "util.h"

static cap_mutex_t m = CAP_MUTEX_INITIALIZER;
static cap_cond_t c = CAP_COND_INITIALIZER;
static cap_sem_t sem;
static int go;             /* [m] */
static atomic_int tid;     /* the foreign thread's kernel id */
static atomic_int stage;   /* which wait it is in */

static void *foreign(void *arg)
{
    (void)arg;
    atomic_store(&tid, (int)syscall(SYS_gettid));
    CHECK_EQ(cap_mutex_lock(&m), 0);
    atomic_store(&stage, 1);
    while (!go)
        CHECK_EQ(cap_cond_wait(&c, &m), 0);
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    atomic_store(&stage, 2);
    CHECK_EQ(cap_mutex_lock(&m), 0); /* main holds it */
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    atomic_store(&stage, 3);
    CHECK_EQ(cap_sem_wait(&sem), 0);
    atomic_store(&stage, 4);
    return NULL;
}

/* Waits until the foreign thread shows state S in /proc. */
static void wait_asleep(void)
{
    for (int tries = 0;; tries++) {
        CHECK_LT(tries, 20000); /* 20 s: it never slept */
        if (task_state(atomic_load(&tid)) == 'S')
            return;
        cap_sleep_ns(1000000);
    }
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&sem, 0, 0), 0);
    pthread_t f;
    CHECK_EQ(pthread_create(&f, NULL, foreign, NULL), 0);
    while (atomic_load(&stage) < 1)
        cap_yield();
    wait_asleep(); /* in cap_cond_wait */
    CHECK_EQ(cap_mutex_lock(&m), 0);
    go = 1;
    CHECK_EQ(cap_cond_signal(&c), 0);
    while (atomic_load(&stage) < 2) { /* it takes m back and lets go */
        CHECK_EQ(cap_mutex_unlock(&m), 0);
        cap_yield();
        CHECK_EQ(cap_mutex_lock(&m), 0);
    }
    wait_asleep(); /* in cap_mutex_lock, main holding m */
    CHECK_EQ(cap_mutex_unlock(&m), 0);
    while (atomic_load(&stage) < 3)
        cap_yield();
    wait_asleep(); /* in cap_sem_wait */
    CHECK_EQ(cap_sem_post(&sem), 0);
    CHECK_EQ(pthread_join(f, NULL), 0);
    CHECK_EQ(atomic_load(&stage), 4);
    return 0;
}
