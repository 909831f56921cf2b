/* SPDX-License-Identifier: MIT */
/* Description: under linked stacks, where a waiter of a process-shared
 * object parks in slices in its process instead of waiting in the kernel
 * on the pool (whose frames would not fit the runtime calls' bound,
 * sync/shared_wait.c), the objects still work across processes: a mutex
 * a forked child holds is taken once the child lets go; a condition
 * signal and a semaphore post from the child end the parent's waits; a
 * timed wait times out; and between two threads of one process a shared
 * mutex and condition pass a token back and forth (woken at once, not
 * after a slice: the round trips finish well within the test's time). */
#include <capriccio.h>
#include <errno.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sync/util.h"

enum { ROUNDS = 2000 };

struct shared {
    cap_mutex_t m;
    cap_cond_t c;
    cap_sem_t sem;
    int ready, turn;
};

static struct shared *sh;

static void init_shared(void)
{
    sh = shared_map(sizeof *sh);
    shared_mutex_init(&sh->m, CAP_MUTEX_NORMAL);
    shared_cond_init(&sh->c);
    CHECK_EQ(cap_sem_init(&sh->sem, 1, 0), 0);
}

static void child(void)
{
    if (cap_mutex_lock(&sh->m) != 0)
        _exit(2);
    __atomic_store_n(&sh->ready, 1, __ATOMIC_SEQ_CST);
    cap_sleep_ns(20000000);
    sh->turn = 1;
    if (cap_cond_signal(&sh->c) != 0 || cap_mutex_unlock(&sh->m) != 0)
        _exit(3);
    cap_sleep_ns(20000000);
    if (cap_sem_post(&sh->sem) != 0)
        _exit(4);
    _exit(0);
}

static void across_fork(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        child();
    while (!__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST))
        cap_sleep_ns(1000000);
    CHECK_EQ(cap_mutex_lock(&sh->m), 0); /* the child holds it for 20 ms */
    while (sh->turn != 1)
        CHECK_EQ(cap_cond_wait(&sh->c, &sh->m), 0);
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    CHECK_EQ(cap_sem_wait(&sh->sem), 0); /* posted 20 ms later */
    int status = 0;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    struct timespec soon;
    CHECK_EQ(clock_gettime(CLOCK_REALTIME, &soon), 0);
    soon.tv_nsec += 10000000;
    if (soon.tv_nsec >= 1000000000) {
        soon.tv_sec++;
        soon.tv_nsec -= 1000000000;
    }
    CHECK_EQ(cap_sem_timedwait(&sh->sem, &soon), ETIMEDOUT);
}

/* Threads 0 and 1 take turns. */
static void *player(void *arg)
{
    int me = (int)(long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(cap_mutex_lock(&sh->m), 0);
        while (sh->turn != me)
            CHECK_EQ(cap_cond_wait(&sh->c, &sh->m), 0);
        sh->turn = !me;
        CHECK_EQ(cap_cond_signal(&sh->c), 0);
        CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    }
    return NULL;
}

int main(void)
{
    init_shared();
    across_fork();
    sh->turn = 0;
    cap_thread_t a, b;
    CHECK_EQ(cap_thread_create(&a, NULL, player, (void *)0L), 0);
    CHECK_EQ(cap_thread_create(&b, NULL, player, (void *)1L), 0);
    CHECK_EQ(cap_thread_join(a, NULL), 0);
    CHECK_EQ(cap_thread_join(b, NULL), 0);
    CHECK_EQ(cap_cond_destroy(&sh->c), 0);
    CHECK_EQ(cap_mutex_destroy(&sh->m), 0);
    CHECK_EQ(cap_sem_destroy(&sh->sem), 0);
    return 0;
}
