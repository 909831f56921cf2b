/* SPDX-License-Identifier: MIT */
/* Description: a thread made with glibc's pthread_create waiting on a
 * process-shared cap_sem_t (cap_sem_wait, cap_sem_timedwait) is
 * cancelled by glibc's pthread_cancel, as POSIX makes sem_wait a
 * cancellation point: pthread_join gives PTHREAD_CANCELED, the cancelled
 * wait took no unit and no longer counts among the waiters, and the
 * semaphore works on (a post reaches a user thread's wait). Before, such
 * a thread slept in a plain futex system call on its own thread (the
 * pool's wait, called inline), which glibc's deferred cancel does not
 * interrupt: the join waited for good. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util.h"

static cap_sem_t *sem;
static atomic_int waiting, cleaned;

static void cleanup(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *waiter(void *arg)
{
    bool timed = arg != NULL;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&waiting, 1);
    for (;;) {
        if (timed) {
            struct timespec abs = ts_after(CLOCK_REALTIME, 60000);
            cap_sem_timedwait(sem, &abs);
        } else {
            cap_sem_wait(sem);
        }
    }
    pthread_cleanup_pop(0);
    return NULL;
}

/* The count of waiters in the semaphore's word (high half, without the
 * shared mark): include/capriccio/sync.h. */
static unsigned waiters(void)
{
    uint64_t state = __atomic_load_n(&sem->state, __ATOMIC_SEQ_CST);
    return (unsigned)(state >> 32) & 0x7fffffffu;
}

static void cancel_one(bool timed)
{
    atomic_store(&waiting, 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, waiter, timed ? (void *)1 : NULL), 0);
    while (!atomic_load(&waiting) || waiters() == 0)
        cap_sleep_ns(1000000);
    cap_sleep_ns(20000000); /* into its futex wait (no end to it but the cancel) */
    CHECK_EQ(pthread_cancel(t), 0);
    void *ret = NULL;
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK_EQ(waiters(), 0u);
}

static void *user_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_sem_wait(sem), 0);
    return NULL;
}

int main(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* as in shared_cond_cancel_foreign: the cancel unwinds from glibc's
     * signal handler through instrumented frames, which ASan trips on */
    SKIP("asynchronous cancellation under AddressSanitizer");
#endif
    sem = shared_map(sizeof *sem);
    CHECK_EQ(cap_sem_init(sem, 1, 0), 0);
    cancel_one(false);
    cancel_one(true);
    CHECK_EQ(atomic_load(&cleaned), 2);
    int value = -1;
    CHECK_EQ(cap_sem_getvalue(sem, &value), 0);
    CHECK_EQ(value, 0); /* the cancelled waits took nothing */
    cap_thread_t u = spawn(user_waiter, NULL);
    CHECK_EQ(cap_sem_post(sem), 0);
    join(u);
    CHECK_EQ(cap_sem_getvalue(sem, &value), 0);
    CHECK_EQ(value, 0);
    CHECK_EQ(waiters(), 0u);
    CHECK_EQ(cap_sem_destroy(sem), 0);
    return 0;
}
