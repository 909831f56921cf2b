/* SPDX-License-Identifier: MIT */
/* Description: GNU's process-wide default thread attributes
 * (pthread_setattr_default_np, pthread_getattr_default_np), as glibc has
 * them.
 *  - At start: a stack size of at least PTHREAD_STACK_MIN, a guard of
 *    one page, joinable, SCHED_OTHER inherited, no signal mask.
 *  - What is set is what a thread created with no attribute gets: a
 *    4 MiB stack (the thread uses 2 MiB of it: far past the usual
 *    default here), detached, and the attribute's signal mask; and what
 *    get reports back, guard size and inherit flag included.
 *  - A stack address is refused (EINVAL) and changes nothing; a fresh
 *    attribute (no stack size of its own) keeps the stack size set
 *    before and puts the rest back. */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

enum { BIG_STACK = 4 << 20, USED = 2 << 20, FRAME = 64 << 10 };

/* Touches FRAME bytes per level, USED / FRAME levels deep. */
static int deep(int level)
{
    volatile char frame[FRAME];
    memset((char *)frame, level, sizeof frame);
    if (level == 0)
        return frame[FRAME - 1];
    return deep(level - 1) + frame[0];
}

static sem_t done;
static size_t seen_stack;
static int seen_detach = -1;
static sigset_t seen_mask;
static int depth_result = -1;

static void *report(void *arg)
{
    (void)arg;
    pthread_attr_t a;
    EXPECT_EQ(pthread_getattr_np(pthread_self(), &a), 0);
    EXPECT_EQ(pthread_attr_getstacksize(&a, &seen_stack), 0);
    EXPECT_EQ(pthread_attr_getdetachstate(&a, &seen_detach), 0);
    EXPECT_EQ(pthread_attr_destroy(&a), 0);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, NULL, &seen_mask), 0);
    depth_result = deep(USED / FRAME);
    EXPECT_EQ(sem_post(&done), 0);
    return NULL;
}

static void *nothing(void *arg)
{
    return arg;
}

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    EXPECT_EQ(sem_init(&done, 0, 0), 0);

    pthread_attr_t d;
    size_t size, guard;
    int state, inherit, policy;
    sigset_t mask;
    EXPECT_EQ(pthread_getattr_default_np(&d), 0);
    EXPECT_EQ(pthread_attr_getstacksize(&d, &size), 0);
    EXPECT(size >= (size_t)PTHREAD_STACK_MIN);
    size_t start_size = size;
    EXPECT_EQ(pthread_attr_getguardsize(&d, &guard), 0);
    EXPECT_EQ(guard, page);
    EXPECT_EQ(pthread_attr_getdetachstate(&d, &state), 0);
    EXPECT_EQ(state, PTHREAD_CREATE_JOINABLE);
    EXPECT_EQ(pthread_attr_getinheritsched(&d, &inherit), 0);
    EXPECT_EQ(inherit, PTHREAD_INHERIT_SCHED);
    EXPECT_EQ(pthread_attr_getschedpolicy(&d, &policy), 0);
    EXPECT_EQ(policy, SCHED_OTHER);
    EXPECT_EQ(pthread_attr_getsigmask_np(&d, &mask), PTHREAD_ATTR_NO_SIGMASK_NP);
    EXPECT_EQ(pthread_attr_destroy(&d), 0);

    /* A stack address: refused, nothing changed. */
    pthread_attr_t with_addr;
    EXPECT_EQ(pthread_attr_init(&with_addr), 0);
    void *mem = malloc(BIG_STACK);
    EXPECT(mem != NULL);
    EXPECT_EQ(pthread_attr_setstack(&with_addr, mem, BIG_STACK), 0);
    EXPECT_EQ(pthread_setattr_default_np(&with_addr), EINVAL);
    EXPECT_EQ(pthread_attr_destroy(&with_addr), 0);
    free(mem);
    EXPECT_EQ(pthread_getattr_default_np(&d), 0);
    EXPECT_EQ(pthread_attr_getstacksize(&d, &size), 0);
    EXPECT_EQ(size, start_size);
    EXPECT_EQ(pthread_attr_destroy(&d), 0);

    /* Set, read back, and create with no attribute. */
    pthread_attr_t set;
    EXPECT_EQ(pthread_attr_init(&set), 0);
    EXPECT_EQ(pthread_attr_setstacksize(&set, BIG_STACK), 0);
    EXPECT_EQ(pthread_attr_setguardsize(&set, 2 * (size_t)page), 0);
    EXPECT_EQ(pthread_attr_setdetachstate(&set, PTHREAD_CREATE_DETACHED), 0);
    EXPECT_EQ(pthread_attr_setinheritsched(&set, PTHREAD_EXPLICIT_SCHED), 0);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    EXPECT_EQ(pthread_attr_setsigmask_np(&set, &usr1), 0);
    EXPECT_EQ(pthread_setattr_default_np(&set), 0);
    EXPECT_EQ(pthread_attr_destroy(&set), 0);

    EXPECT_EQ(pthread_getattr_default_np(&d), 0);
    EXPECT_EQ(pthread_attr_getstacksize(&d, &size), 0);
    EXPECT_EQ(size, BIG_STACK);
    EXPECT_EQ(pthread_attr_getguardsize(&d, &guard), 0);
    EXPECT_EQ(guard, 2 * page);
    EXPECT_EQ(pthread_attr_getdetachstate(&d, &state), 0);
    EXPECT_EQ(state, PTHREAD_CREATE_DETACHED);
    EXPECT_EQ(pthread_attr_getinheritsched(&d, &inherit), 0);
    EXPECT_EQ(inherit, PTHREAD_EXPLICIT_SCHED);
    EXPECT_EQ(pthread_attr_getsigmask_np(&d, &mask), 0);
    EXPECT(sigismember(&mask, SIGUSR1));
    EXPECT(!sigismember(&mask, SIGUSR2));
    EXPECT_EQ(pthread_attr_destroy(&d), 0);

    sigset_t main_mask;
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, NULL, &main_mask), 0);
    EXPECT(!sigismember(&main_mask, SIGUSR1));
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, report, NULL), 0);
    EXPECT_EQ(sem_wait(&done), 0);
    EXPECT(seen_stack >= BIG_STACK);
    EXPECT_EQ(seen_detach, PTHREAD_CREATE_DETACHED);
    EXPECT(sigismember(&seen_mask, SIGUSR1));
    EXPECT(!sigismember(&seen_mask, SIGUSR2));
    EXPECT_EQ(depth_result, (USED / FRAME) * (USED / FRAME + 1) / 2); /* each level adds its own */

    /* A fresh attribute: the stack size stays, the rest is its own. */
    pthread_attr_t fresh;
    EXPECT_EQ(pthread_attr_init(&fresh), 0);
    EXPECT_EQ(pthread_setattr_default_np(&fresh), 0);
    EXPECT_EQ(pthread_attr_destroy(&fresh), 0);
    EXPECT_EQ(pthread_getattr_default_np(&d), 0);
    EXPECT_EQ(pthread_attr_getstacksize(&d, &size), 0);
    EXPECT_EQ(size, BIG_STACK);
    EXPECT_EQ(pthread_attr_getguardsize(&d, &guard), 0);
    EXPECT_EQ(guard, page);
    EXPECT_EQ(pthread_attr_getdetachstate(&d, &state), 0);
    EXPECT_EQ(state, PTHREAD_CREATE_JOINABLE);
    EXPECT_EQ(pthread_attr_getsigmask_np(&d, &mask), PTHREAD_ATTR_NO_SIGMASK_NP);
    EXPECT_EQ(pthread_attr_destroy(&d), 0);

    /* Joinable again: join gets the value. */
    void *out = NULL;
    EXPECT_EQ(pthread_create(&t, NULL, nothing, &done), 0);
    EXPECT_EQ(pthread_join(t, &out), 0);
    EXPECT(out == &done);
    return 0;
}
