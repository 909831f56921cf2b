/* SPDX-License-Identifier: MIT */
/* Description: a user thread that ends holding glibc robust mutexes makes
 * them "owner died", as the kernel does for a kernel thread: the next
 * locker (a user thread already parked on it, a later one, or a thread
 * made with glibc's pthread_create asleep in glibc's lock) gets
 * EOWNERDEAD, makes it consistent and goes on; the worker's robust list
 * stays whole (later robust locks and unlocks on that worker, and the
 * process's exit, walk it). Each type, private and process-shared. A
 * process-shared mutex that is not robust stays held for good, as in
 * glibc, until pthread_mutex_init makes a new one there. Before, the
 * next user thread of the worker slept in glibc's lock for good (the
 * holder's kernel thread lived on, glibc took the asker for the holder). */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

static pthread_mutex_t *m1, *m2, *m3;
static atomic_int holding, waiter_in, kernel_rc = -1, kernel_in;

static void make(pthread_mutex_t *m, int type, int robust, int pshared)
{
    pthread_mutexattr_t a;
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_settype(&a, type), 0);
    if (robust)
        CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
    if (pshared)
        CHECK_EQ(pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
    CHECK_EQ(pthread_mutex_init(m, &a), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);
}

/* Takes m1 and m2 and ends holding them. */
static void *dies_holding(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(m1), 0);
    CHECK_EQ(pthread_mutex_lock(m2), 0);
    atomic_store(&holding, 1);
    while (!atomic_load(&waiter_in) || !atomic_load(&kernel_in))
        cap_yield();
    cap_sleep_ns(2000000); /* they wait meanwhile */
    return NULL;
}

static void *waits_for_m1(void *arg)
{
    (void)arg;
    while (!atomic_load(&holding))
        cap_yield();
    atomic_store(&waiter_in, 1);
    CHECK_EQ(pthread_mutex_lock(m1), EOWNERDEAD);
    CHECK_EQ(pthread_mutex_consistent(m1), 0);
    CHECK_EQ(pthread_mutex_unlock(m1), 0);
    return NULL;
}

/* A thread of glibc's, asleep in glibc's lock of m2. */
static void *kernel_waits_for_m2(void *arg)
{
    (void)arg;
    while (!atomic_load(&holding))
        usleep(100);
    atomic_store(&kernel_in, 1);
    int rc = pthread_mutex_lock(m2);
    if (rc == EOWNERDEAD) {
        CHECK_EQ(pthread_mutex_consistent(m2), 0);
        CHECK_EQ(pthread_mutex_unlock(m2), 0);
    }
    atomic_store(&kernel_rc, rc);
    return NULL;
}

static void robust_round(int type, int pshared)
{
    make(m1, type, 1, pshared);
    make(m2, type, 1, pshared);
    make(m3, type, 1, pshared);
    atomic_store(&holding, 0);
    atomic_store(&waiter_in, 0);
    atomic_store(&kernel_in, 0);
    atomic_store(&kernel_rc, -1);
    /* m3 taken and let go on the holder's worker before and after: the
     * robust list of that kernel thread is walked by both */
    CHECK_EQ(pthread_mutex_lock(m3), 0);
    cap_thread_t d = spawn(dies_holding, NULL);
    cap_thread_t w = spawn(waits_for_m1, NULL);
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, kernel_waits_for_m2, NULL), 0);
    join(d);
    join(w);
    while (atomic_load(&kernel_rc) == -1)
        cap_sleep_ns(100000);
    CHECK_EQ(pthread_join(k, NULL), 0);
    CHECK_EQ(atomic_load(&kernel_rc), EOWNERDEAD);
    CHECK_EQ(pthread_mutex_unlock(m3), 0);
    for (int i = 0; i < 3; i++) { /* ordinary again, and the list whole */
        pthread_mutex_t *m = i == 0 ? m1 : i == 1 ? m2 : m3;
        CHECK_EQ(pthread_mutex_lock(m), 0);
        CHECK_EQ(pthread_mutex_unlock(m), 0);
        CHECK_EQ(pthread_mutex_destroy(m), 0);
    }
}

static void *dies_holding_m1(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(m1), 0);
    return NULL;
}

int main(void)
{
    pthread_mutex_t *ms = mmap(NULL, 3 * sizeof *ms, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(ms != MAP_FAILED);
    m1 = &ms[0];
    m2 = &ms[1];
    m3 = &ms[2];
    int types[] = { PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK };
    for (int round = 0; round < 5; round++)
        for (int i = 0; i < 3; i++) {
            robust_round(types[i], 0);
            robust_round(types[i], 1);
        }

    /* not robust: held for good, until made anew */
    make(m1, PTHREAD_MUTEX_ERRORCHECK, 0, 1);
    join(spawn(dies_holding_m1, NULL));
    CHECK_EQ(pthread_mutex_trylock(m1), EBUSY);
    CHECK_EQ(pthread_mutex_unlock(m1), EPERM);
    make(m1, PTHREAD_MUTEX_ERRORCHECK, 0, 1);
    CHECK_EQ(pthread_mutex_lock(m1), 0);
    CHECK_EQ(pthread_mutex_unlock(m1), 0);
    CHECK_EQ(pthread_mutex_destroy(m1), 0);
    munmap(ms, 3 * sizeof *ms);
    return 0;
}
