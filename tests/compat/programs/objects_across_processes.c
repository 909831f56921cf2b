/* SPDX-License-Identifier: MIT */
/* Description: process-shared mutexes, condition variables, read-write
 * locks, barriers and spin locks, in a shared mapping, used by threads of
 * a parent and its forked children at once: counters under a mutex and
 * under a spin lock come out exact; a bounded buffer under a mutex and
 * two condition variables passes every item once, producers in the
 * parent and consumers in the children; barrier rounds count every
 * thread of every process, with one serial thread each; readers never
 * see a half-made write. Then the owner rules across processes: an
 * error-checking or recursive mutex the parent holds is busy for the
 * child, whose unlock fails with EPERM (its main thread is the parent's
 * main thread's twin), whose timed lock times out and whose lock waits
 * until the parent lets go; and a timed condition wait times out with
 * the mutex held again. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { CHILDREN = 2, THREADS = 3, INCREMENTS = 2000 };
enum { ITEMS = 3000, SLOTS = 4, ROUNDS = 50, RW_ROUNDS = 300 };
enum { PARTIES = (CHILDREN + 1) * THREADS };

struct shared {
    pthread_mutex_t m;
    pthread_spinlock_t spin;
    long by_mutex, by_spin;

    pthread_mutex_t qm;
    pthread_cond_t not_empty, not_full;
    long slot[SLOTS];
    int head, count, produced;
    long consumed_sum, consumed_items;

    pthread_barrier_t b;
    int arrivals[ROUNDS];
    int serials[ROUNDS];
    int short_rounds; /* rounds a thread found not all arrived */

    pthread_rwlock_t rw;
    long a, z; /* written together under the write lock */
    long torn;

    pthread_mutex_t em, rm; /* error-checking, recursive */
    pthread_cond_t c;
};

static struct shared *sh;

static void shared_init(void)
{
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    EXPECT(sh != MAP_FAILED);
    pthread_mutexattr_t ma;
    EXPECT_EQ(pthread_mutexattr_init(&ma), 0);
    EXPECT_EQ(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED), 0);
    EXPECT_EQ(pthread_mutex_init(&sh->m, &ma), 0);
    EXPECT_EQ(pthread_mutex_init(&sh->qm, &ma), 0);
    EXPECT_EQ(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK), 0);
    EXPECT_EQ(pthread_mutex_init(&sh->em, &ma), 0);
    EXPECT_EQ(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE), 0);
    EXPECT_EQ(pthread_mutex_init(&sh->rm, &ma), 0);
    EXPECT_EQ(pthread_mutexattr_destroy(&ma), 0);
    EXPECT_EQ(pthread_spin_init(&sh->spin, PTHREAD_PROCESS_SHARED), 0);

    pthread_condattr_t ca;
    EXPECT_EQ(pthread_condattr_init(&ca), 0);
    EXPECT_EQ(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED), 0);
    EXPECT_EQ(pthread_cond_init(&sh->not_empty, &ca), 0);
    EXPECT_EQ(pthread_cond_init(&sh->not_full, &ca), 0);
    EXPECT_EQ(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
    EXPECT_EQ(pthread_cond_init(&sh->c, &ca), 0);
    EXPECT_EQ(pthread_condattr_destroy(&ca), 0);

    pthread_barrierattr_t ba;
    EXPECT_EQ(pthread_barrierattr_init(&ba), 0);
    EXPECT_EQ(pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED), 0);
    EXPECT_EQ(pthread_barrier_init(&sh->b, &ba, PARTIES), 0);
    EXPECT_EQ(pthread_barrierattr_destroy(&ba), 0);

    pthread_rwlockattr_t ra;
    EXPECT_EQ(pthread_rwlockattr_init(&ra), 0);
    EXPECT_EQ(pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED), 0);
    int pshared = -1;
    EXPECT_EQ(pthread_rwlockattr_getpshared(&ra, &pshared), 0);
    EXPECT_EQ(pshared, PTHREAD_PROCESS_SHARED);
    EXPECT_EQ(pthread_rwlock_init(&sh->rw, &ra), 0);
    EXPECT_EQ(pthread_rwlockattr_destroy(&ra), 0);
}

static void wait_child(pid_t pid)
{
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

/* ---- the work every process's threads do at once ---------------------- */

static void count(void)
{
    for (int i = 0; i < INCREMENTS; i++) {
        EXPECT_EQ(pthread_mutex_lock(&sh->m), 0);
        sh->by_mutex++;
        EXPECT_EQ(pthread_mutex_unlock(&sh->m), 0);
        EXPECT_EQ(pthread_spin_lock(&sh->spin), 0);
        sh->by_spin++;
        EXPECT_EQ(pthread_spin_unlock(&sh->spin), 0);
    }
}

static void produce(void)
{
    for (;;) {
        EXPECT_EQ(pthread_mutex_lock(&sh->qm), 0);
        while (sh->count == SLOTS && sh->produced < ITEMS)
            EXPECT_EQ(pthread_cond_wait(&sh->not_full, &sh->qm), 0);
        if (sh->produced == ITEMS) {
            EXPECT_EQ(pthread_mutex_unlock(&sh->qm), 0);
            return;
        }
        sh->slot[(sh->head + sh->count) % SLOTS] = ++sh->produced;
        sh->count++;
        if (sh->produced == ITEMS)
            EXPECT_EQ(pthread_cond_broadcast(&sh->not_full), 0); /* the others stop */
        EXPECT_EQ(pthread_cond_signal(&sh->not_empty), 0);
        EXPECT_EQ(pthread_mutex_unlock(&sh->qm), 0);
    }
}

static void consume(void)
{
    for (;;) {
        EXPECT_EQ(pthread_mutex_lock(&sh->qm), 0);
        while (sh->count == 0 && sh->consumed_items < ITEMS)
            EXPECT_EQ(pthread_cond_wait(&sh->not_empty, &sh->qm), 0);
        if (sh->count == 0) { /* all consumed */
            EXPECT_EQ(pthread_mutex_unlock(&sh->qm), 0);
            return;
        }
        sh->consumed_sum += sh->slot[sh->head];
        sh->head = (sh->head + 1) % SLOTS;
        sh->count--;
        if (++sh->consumed_items == ITEMS)
            EXPECT_EQ(pthread_cond_broadcast(&sh->not_empty), 0); /* the others stop */
        EXPECT_EQ(pthread_cond_signal(&sh->not_full), 0);
        EXPECT_EQ(pthread_mutex_unlock(&sh->qm), 0);
    }
}

static void rounds(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        __atomic_fetch_add(&sh->arrivals[r], 1, __ATOMIC_SEQ_CST);
        int rc = pthread_barrier_wait(&sh->b);
        EXPECT(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
            __atomic_fetch_add(&sh->serials[r], 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&sh->arrivals[r], __ATOMIC_SEQ_CST) != PARTIES)
            __atomic_fetch_add(&sh->short_rounds, 1, __ATOMIC_SEQ_CST);
    }
}

/* Writers (the parent) move a and z together; readers (the children)
 * must never see them apart. */
static void write_pairs(void)
{
    for (int i = 0; i < RW_ROUNDS; i++) {
        EXPECT_EQ(pthread_rwlock_wrlock(&sh->rw), 0);
        sh->a++;
        sched_yield();
        sh->z++;
        EXPECT_EQ(pthread_rwlock_unlock(&sh->rw), 0);
    }
}

static void read_pairs(void)
{
    for (int i = 0; i < RW_ROUNDS; i++) {
        EXPECT_EQ(pthread_rwlock_rdlock(&sh->rw), 0);
        if (sh->a != sh->z)
            __atomic_fetch_add(&sh->torn, 1, __ATOMIC_SEQ_CST);
        EXPECT_EQ(pthread_rwlock_unlock(&sh->rw), 0);
    }
}

static void *worker(void *arg)
{
    int parent = (int)(intptr_t)arg;
    count();
    if (parent)
        produce();
    else
        consume();
    rounds();
    if (parent)
        write_pairs();
    else
        read_pairs();
    return NULL;
}

/* THREADS threads of this process do it all. */
static void work(int parent)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)parent), 0);
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
}

static void together(void)
{
    pid_t kids[CHILDREN];
    for (int k = 0; k < CHILDREN; k++) {
        kids[k] = fork();
        EXPECT(kids[k] >= 0);
        if (kids[k] == 0) {
            work(0);
            _exit(0);
        }
    }
    work(1);
    for (int k = 0; k < CHILDREN; k++)
        wait_child(kids[k]);
    EXPECT_EQ(sh->by_mutex, (long)PARTIES * INCREMENTS);
    EXPECT_EQ(sh->by_spin, (long)PARTIES * INCREMENTS);
    EXPECT_EQ(sh->consumed_items, ITEMS);
    EXPECT_EQ(sh->consumed_sum, (long)ITEMS * (ITEMS + 1) / 2);
    for (int r = 0; r < ROUNDS; r++) {
        EXPECT_EQ(sh->arrivals[r], PARTIES);
        EXPECT_EQ(sh->serials[r], 1);
    }
    EXPECT_EQ(sh->short_rounds, 0);
    EXPECT_EQ(sh->a, (long)THREADS * RW_ROUNDS);
    EXPECT_EQ(sh->z, sh->a);
    EXPECT_EQ(sh->torn, 0);
}

/* ---- owners across processes ------------------------------------------ */

static void owners(void)
{
    int go[2], done[2];
    EXPECT_EQ(pipe(go), 0);
    EXPECT_EQ(pipe(done), 0);
    EXPECT_EQ(pthread_mutex_lock(&sh->em), 0);
    EXPECT_EQ(pthread_mutex_lock(&sh->rm), 0);
    EXPECT_EQ(pthread_mutex_lock(&sh->rm), 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        EXPECT_EQ(pthread_mutex_trylock(&sh->em), EBUSY);
        EXPECT_EQ(pthread_mutex_unlock(&sh->em), EPERM);
        EXPECT_EQ(pthread_mutex_trylock(&sh->rm), EBUSY);
        EXPECT_EQ(pthread_mutex_unlock(&sh->rm), EPERM);
        struct timespec soon = after_ms(CLOCK_REALTIME, 30);
        EXPECT_EQ(pthread_mutex_timedlock(&sh->em, &soon), ETIMEDOUT);
        EXPECT(reached(CLOCK_REALTIME, soon));
        EXPECT_EQ(write(go[1], "g", 1), 1); /* now let go */
        EXPECT_EQ(pthread_mutex_lock(&sh->em), 0); /* waits for the parent */
        EXPECT_EQ(pthread_mutex_lock(&sh->em), EDEADLK);
        EXPECT_EQ(pthread_mutex_lock(&sh->rm), 0);
        EXPECT_EQ(pthread_mutex_lock(&sh->rm), 0);
        EXPECT_EQ(pthread_mutex_unlock(&sh->rm), 0);
        EXPECT_EQ(pthread_mutex_unlock(&sh->rm), 0);
        EXPECT_EQ(pthread_mutex_unlock(&sh->em), 0);
        EXPECT_EQ(write(done[1], "d", 1), 1);
        _exit(0);
    }
    char c;
    EXPECT_EQ(read(go[0], &c, 1), 1);
    EXPECT_EQ(pthread_mutex_unlock(&sh->rm), 0);
    EXPECT_EQ(pthread_mutex_unlock(&sh->rm), 0);
    EXPECT_EQ(pthread_mutex_unlock(&sh->em), 0);
    EXPECT_EQ(read(done[0], &c, 1), 1);
    wait_child(pid);
    EXPECT_EQ(pthread_mutex_unlock(&sh->em), EPERM); /* the child let go */
    EXPECT_EQ(pthread_mutex_trylock(&sh->em), 0);
    EXPECT_EQ(pthread_mutex_unlock(&sh->em), 0);
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(close(go[i]), 0);
        EXPECT_EQ(close(done[i]), 0);
    }
}

/* A timed wait on a shared condition nobody signals times out, on its
 * clock, with the mutex held again (the child can take it only after). */
static void cond_times_out(void)
{
    EXPECT_EQ(pthread_mutex_lock(&sh->qm), 0);
    struct timespec soon = after_ms(CLOCK_MONOTONIC, 30);
    EXPECT_EQ(pthread_cond_timedwait(&sh->c, &sh->qm, &soon), ETIMEDOUT);
    EXPECT(reached(CLOCK_MONOTONIC, soon));
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        EXPECT_EQ(pthread_mutex_trylock(&sh->qm), EBUSY);
        _exit(0);
    }
    wait_child(pid);
    EXPECT_EQ(pthread_mutex_unlock(&sh->qm), 0);
}

int main(void)
{
    shared_init();
    together();
    owners();
    cond_times_out();
    EXPECT_EQ(pthread_cond_destroy(&sh->c), 0);
    EXPECT_EQ(pthread_cond_destroy(&sh->not_empty), 0);
    EXPECT_EQ(pthread_cond_destroy(&sh->not_full), 0);
    EXPECT_EQ(pthread_barrier_destroy(&sh->b), 0);
    EXPECT_EQ(pthread_rwlock_destroy(&sh->rw), 0);
    EXPECT_EQ(pthread_spin_destroy(&sh->spin), 0);
    EXPECT_EQ(pthread_mutex_destroy(&sh->m), 0);
    EXPECT_EQ(pthread_mutex_destroy(&sh->em), 0);
    EXPECT_EQ(pthread_mutex_destroy(&sh->rm), 0);
    EXPECT_EQ(pthread_mutex_destroy(&sh->qm), 0);
    return 0;
}
