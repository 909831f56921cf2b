/* SPDX-License-Identifier: MIT */
/* Description: a thread made with glibc's pthread_create and waiting in
 * pthread_cond_wait or pthread_cond_timedwait (the library's condition
 * variable, for every thread) is cancelled by glibc's pthread_cancel, as
 * in glibc, where the wait is a cancellation point: its cleanup handler
 * runs with the mutex held, pthread_join gives PTHREAD_CANCELED, and the
 * condition variable and mutex work on afterwards (a signal the
 * cancelled thread may have used up is passed on; the destroy does not
 * wait for it). Before, the sleep was a plain futex wait and the cancel
 * never acted: the join waited for good. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "util.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static atomic_int waiting, cleaned, held_in_cleanup;
static int flag; /* [m] */

static void cleanup(void *arg)
{
    (void)arg;
    atomic_store(&held_in_cleanup, pthread_mutex_trylock(&m) == EBUSY);
    atomic_fetch_add(&cleaned, 1);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
}

static void *waiter(void *arg)
{
    bool timed = arg != NULL;
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&waiting, 1);
    for (;;) {
        if (timed) {
            struct timespec abs = ts_after(CLOCK_REALTIME, 60000);
            pthread_cond_timedwait(&c, &m, &abs);
        } else {
            pthread_cond_wait(&c, &m);
        }
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void *user_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    while (!flag)
        CHECK_EQ(pthread_cond_wait(&c, &m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    return NULL;
}

static void cancel_one(bool timed)
{
    atomic_store(&waiting, 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, waiter, timed ? (void *)1 : NULL), 0);
    while (!atomic_load(&waiting))
        cap_sleep_ns(1000000);
    cap_sleep_ns(20000000); /* asleep in the wait by now */
    CHECK_EQ(pthread_cancel(t), 0);
    void *ret = NULL;
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
}

int main(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* The cancel unwinds the thread from glibc's signal handler, through
     * instrumented frames: AddressSanitizer's no-return hook then trips
     * over the signal frame (a CHECK failure inside ASan). */
    SKIP("asynchronous cancellation under AddressSanitizer");
#endif
    cancel_one(false);
    cancel_one(true);
    CHECK_EQ(atomic_load(&cleaned), 2);
    CHECK_EQ(atomic_load(&held_in_cleanup), 1);
    /* the condition variable and mutex still work */
    cap_thread_t u = spawn(user_waiter, NULL);
    cap_sleep_ns(10000000);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    flag = 1;
    CHECK_EQ(pthread_cond_signal(&c), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    join(u);
    CHECK_EQ(pthread_cond_destroy(&c), 0);
    return 0;
}
