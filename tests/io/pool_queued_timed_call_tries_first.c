/* SPDX-License-Identifier: MIT */
/* Description: a call with a timeout of its own that is still queued for
 * an offload-pool thread when its timeout passes is tried once before it
 * reports the timeout, as the kernel tries a timed call before it looks
 * at the timeout: a semtimedop of more than 32 operations (made on the
 * pool untried) that can complete at once, with a zero timeout, succeeds;
 * a semtimedop whose semaphore is posted, and an mq_timedreceive whose
 * queue gets a message, while the call is queued, take them. Run with
 * CAP_POOL_THREADS=1 (tests.cmake): one thread blocked in semop holds the
 * pool's only thread, so the timed calls queue. Before, each returned
 * EAGAIN or ETIMEDOUT without having been made. */
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>

#include "io/io_util.h"

enum { MANY_OPS = 33 };  /* past the library's untried bound of 32 */
enum { TIMEOUT_MS = 200 };
enum { ROUNDS = 20 };    /* tries for a send made before the deadline */

static int sem; /* 0: the blocker's, 1: the timed calls', 2: stays 0 */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *block_in_semop(void *arg)
{
    struct sembuf take = { 0, -1, 0 };
    CHECK_EQ(semop(sem, &take, 1), 0);
    return arg;
}

/* Many operations, complete at once: one of semaphore 1 (op), then
 * waits for zero on semaphore 2, which is 0. */
static long many_ops(short op, const struct timespec *timeout)
{
    struct sembuf ops[MANY_OPS];
    memset(ops, 0, sizeof ops);
    ops[0].sem_num = 1;
    ops[0].sem_op = op;
    for (int i = 1; i < MANY_OPS; i++)
        ops[i].sem_num = 2;
    return semtimedop(sem, ops, MANY_OPS, timeout);
}

static void zero_timeout_completes(void)
{
    struct timespec zero = { 0, 0 };
    CHECK_EQ(many_ops(1, &zero), 0);
    CHECK_EQ(semctl(sem, 1, GETVAL), 1);
    CHECK_EQ(many_ops(-1, &zero), 0);
    CHECK_EQ(semctl(sem, 1, GETVAL), 0);
}

/* One timed call on a thread of its own while main makes its object
 * ready: started is when the caller began (its deadline is at least
 * TIMEOUT_MS later), result what the call said. */
struct timed {
    atomic_int started;
    uint64_t t0;
    long result;
    int err;
    mqd_t q;
};

static void *timed_semop(void *arg)
{
    struct timed *t = arg;
    struct sembuf take = { 1, -1, 0 };
    struct timespec timeout = { 0, TIMEOUT_MS * 1000000L };
    t->t0 = now_ns();
    atomic_store(&t->started, 1);
    t->result = semtimedop(sem, &take, 1, &timeout);
    t->err = errno;
    return NULL;
}

static void *timed_receive(void *arg)
{
    struct timed *t = arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += TIMEOUT_MS * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    char msg[8];
    t->t0 = now_ns();
    atomic_store(&t->started, 1);
    t->result = mq_timedreceive(t->q, msg, sizeof msg, NULL, &deadline);
    t->err = errno;
    return NULL;
}

/* Runs fn on a thread and makes its object ready once it has started
 * (with one worker: once its call is queued and parked) with ready(q).
 * Rounds in which the object was made ready only after the caller's
 * timeout (a loaded machine) prove nothing and are made again. */
static void ready_while_queued(void *(*fn)(void *), mqd_t q, long want)
{
    for (int round = 0; round < ROUNDS; round++) {
        struct timed t = { .q = q };
        cap_thread_t th = spawn(fn, &t);
        while (!atomic_load(&t.started))
            cap_usleep(1000);
        uint64_t made = now_ns();
        if (q == (mqd_t)-1)
            CHECK_EQ(semctl(sem, 1, SETVAL, 1), 0);
        else
            CHECK_EQ(mq_send(q, "ready", 6, 0), 0);
        join(th);
        if (made >= t.t0 + TIMEOUT_MS * 1000000ull) { /* late: undo, again */
            char msg[8];
            if (q == (mqd_t)-1)
                CHECK_EQ(semctl(sem, 1, SETVAL, 0), 0);
            else if (t.result < 0)
                CHECK_EQ(mq_receive(q, msg, sizeof msg, NULL), 6);
            continue;
        }
        if (t.result < 0)
            fprintf(stderr, "timed call: %s\n", strerror(t.err));
        CHECK_EQ(t.result, want);
        if (q == (mqd_t)-1)
            CHECK_EQ(semctl(sem, 1, GETVAL), 0);
        return;
    }
    fprintf(stderr, "every round late: nothing shown\n");
}

int main(void)
{
    alarm(40);
    sem = semget(IPC_PRIVATE, 3, 0600);
    CHECK_GE(sem, 0);
    cap_thread_t blocker = spawn(block_in_semop, NULL);
    /* The blocker waits in the kernel: it holds the pool's one thread. */
    while (semctl(sem, 0, GETNCNT) < 1)
        cap_usleep(1000);

    zero_timeout_completes();
    ready_while_queued(timed_semop, (mqd_t)-1, 0);

    char name[64];
    snprintf(name, sizeof name, "/capriccio-pool-try-%d", (int)getpid());
    struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 8 };
    mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
    if (q == (mqd_t)-1) {
        fprintf(stderr, "no POSIX message queues here (%d): mq part skipped\n", errno);
    } else {
        CHECK_EQ(mq_unlink(name), 0);
        ready_while_queued(timed_receive, q, 6);
        CHECK_EQ(mq_close(q), 0);
    }

    CHECK_EQ(semctl(sem, 0, SETVAL, 1), 0); /* lets the blocker go */
    join(blocker);
    CHECK_EQ(semctl(sem, 0, IPC_RMID), 0);
    return 0;
}
