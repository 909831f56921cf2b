/* SPDX-License-Identifier: MIT */
/* Description: a thread made with glibc's pthread_create waiting on a
 * process-shared cap_cond_t (plain or timed) is cancelled by glibc's
 * pthread_cancel, as it is on a private one: the wait is a cancellation
 * point, its cleanup handler runs with the mutex held, pthread_join gives
 * PTHREAD_CANCELED, it no longer counts among the condition's sleepers,
 * and the objects work on afterwards. Before, such a
 * thread slept in a plain futex system call on its own thread (the
 * pool's wait, called inline), which glibc's deferred cancel does not
 * interrupt: the join waited for good. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util.h"

struct shared {
    cap_mutex_t m;
    cap_cond_t c;
    int flag;
};

static struct shared *sh;
static atomic_int waiting, cleaned, held_in_cleanup;

static void cleanup(void *arg)
{
    (void)arg;
    atomic_store(&held_in_cleanup, cap_mutex_trylock(&sh->m) == EBUSY);
    atomic_fetch_add(&cleaned, 1);
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
}

static void *waiter(void *arg)
{
    bool timed = arg != NULL;
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&waiting, 1);
    for (;;) {
        if (timed) {
            struct timespec abs = ts_after(CLOCK_REALTIME, 60000);
            cap_cond_timedwait(&sh->c, &sh->m, &abs);
        } else {
            cap_cond_wait(&sh->c, &sh->m);
        }
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void cancel_one(bool timed)
{
    atomic_store(&waiting, 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, waiter, timed ? (void *)1 : NULL), 0);
    while (!atomic_load(&waiting))
        cap_sleep_ns(1000000);
    CHECK_EQ(cap_mutex_lock(&sh->m), 0); /* the waiter has let it go */
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    CHECK_EQ(pthread_cancel(t), 0);
    void *ret = NULL;
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
}

static void *user_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    while (!sh->flag)
        CHECK_EQ(cap_cond_wait(&sh->c, &sh->m), 0);
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    return NULL;
}

int main(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* as in libc_cond_cancel_foreign: the cancel unwinds from glibc's
     * signal handler through instrumented frames, which ASan trips on */
    SKIP("asynchronous cancellation under AddressSanitizer");
#endif
    sh = shared_map(sizeof *sh);
    shared_mutex_init(&sh->m, CAP_MUTEX_ERRORCHECK);
    shared_cond_init(&sh->c);
    cancel_one(false);
    cancel_one(true);
    CHECK_EQ(atomic_load(&cleaned), 2);
    CHECK_EQ(atomic_load(&held_in_cleanup), 1);
    /* a shared condition's waiters count themselves out, cancelled too */
    CHECK_EQ(__atomic_load_n(&sh->c.sleepers, __ATOMIC_SEQ_CST), 0u);
    cap_thread_t u = spawn(user_waiter, NULL);
    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    sh->flag = 1;
    CHECK_EQ(cap_cond_signal(&sh->c), 0);
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    join(u);
    CHECK_EQ(cap_cond_destroy(&sh->c), 0);
    CHECK_EQ(cap_mutex_destroy(&sh->m), 0);
    return 0;
}
