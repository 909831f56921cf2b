/* SPDX-License-Identifier: MIT */
/* Description: sched_yield, pthread_yield and thrd_yield from code built
 * without <capriccio/pthread.h> (plain libc names, as in a library's
 * spin-then-yield loop) yield the user thread: a thread that yields until
 * another user thread has run sees it run. With one worker the kernel's
 * yield handed the CPU back to the same worker and so to the same user
 * thread, and such a loop never ended (here: LIMIT yields, then a
 * failure). The same for the pthread_yield symbol itself, which
 * binaries built against glibc before 2.34 call (glibc's own calls
 * sched_yield inside libc, where no interposition sees it). On a kernel
 * thread that is not a user thread (glibc's pthread_create) they are the
 * kernel's, and sched_yield returns 0. */
#include <capriccio.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <threads.h>

#include "check.h"

enum { LIMIT = 100000, ROUNDS = 50 };

enum how { SCHED, PTHREAD, OLD_PTHREAD, THRD, HOWS };

/* The symbol pthread_yield, as an old binary calls it (glibc's header now
 * turns the name into a call of sched_yield). */
int old_pthread_yield(void) __asm__("pthread_yield");

static atomic_int flag;

static void yield_by(enum how how)
{
    switch (how) {
    case SCHED:
        CHECK_EQ(sched_yield(), 0);
        break;
    case PTHREAD:
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        CHECK_EQ(pthread_yield(), 0);
#pragma GCC diagnostic pop
        break;
    case OLD_PTHREAD:
        CHECK_EQ(old_pthread_yield(), 0);
        break;
    default:
        thrd_yield();
        break;
    }
}

static void *waiter(void *arg)
{
    enum how how = (enum how)(long)arg;
    long yields = 0;
    while (!atomic_load(&flag) && yields < LIMIT) {
        yield_by(how);
        yields++;
    }
    CHECK(atomic_load(&flag)); /* the setter ran while this one yielded */
    return NULL;
}

static void *setter(void *arg)
{
    (void)arg;
    atomic_store(&flag, 1);
    return NULL;
}

static void *kernel_thread(void *arg)
{
    (void)arg;
    for (enum how how = SCHED; how < HOWS; how++)
        yield_by(how);
    return NULL;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        for (enum how how = SCHED; how < HOWS; how++) {
            atomic_store(&flag, 0);
            cap_thread_t w, s;
            CHECK_EQ(cap_thread_create(&w, NULL, waiter, (void *)(long)how), 0);
            CHECK_EQ(cap_thread_create(&s, NULL, setter, NULL), 0);
            CHECK_EQ(cap_thread_join(w, NULL), 0);
            CHECK_EQ(cap_thread_join(s, NULL), 0);
        }
    }
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, kernel_thread, NULL), 0);
    CHECK_EQ(pthread_join(k, NULL), 0);
    yield_by(SCHED); /* main is a user thread too */
    return 0;
}
