/* SPDX-License-Identifier: MIT */
/* Description: a call with a timeout of its own that is still queued for
 * an offload-pool thread when its timeout passes returns what the call
 * returns at its timeout, without running: semtimedop EAGAIN,
 * mq_timedreceive ETIMEDOUT. Run with CAP_POOL_THREADS=64 (tests.cmake):
 * 64 threads blocked in semop hold every pool thread (the semaphore's
 * count of waiters says they are in the kernel), so the timed calls
 * queue. Before, a queued call's timeout did not run until it started:
 * both waited as long as the blockers (the alarm fails the program). */
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>

#include "io/io_util.h"

enum { BLOCKERS = 64 };   /* = CAP_POOL_THREADS, and the old pool's bound */
enum { TIMEOUT_MS = 100 };

static int sem;

static void *block_in_semop(void *arg)
{
    struct sembuf take = { 0, -1, 0 };
    CHECK_EQ(semop(sem, &take, 1), 0);
    return arg;
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void semtimedop_times_out(void)
{
    struct sembuf take = { 1, -1, 0 };
    struct timespec timeout = { 0, TIMEOUT_MS * 1000000L }, t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ(semtimedop(sem, &take, 1, &timeout), -1);
    CHECK_EQ(errno, EAGAIN);
    /* Not before its timeout (a lower bound only: load makes it later). */
    CHECK_GE(ms_since(&t0), TIMEOUT_MS / 2);
    CHECK_EQ(semctl(sem, 1, GETVAL), 0);
}

static void mq_timedreceive_times_out(void)
{
    char name[64];
    snprintf(name, sizeof name, "/capriccio-pool-timed-%d", (int)getpid());
    struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 8 };
    mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
    if (q == (mqd_t)-1) {
        fprintf(stderr, "no POSIX message queues here (%d): mq part skipped\n", errno);
        return;
    }
    CHECK_EQ(mq_unlink(name), 0);
    struct timespec deadline, t0;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += TIMEOUT_MS * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char msg[8];
    CHECK_EQ(mq_timedreceive(q, msg, sizeof msg, NULL, &deadline), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    CHECK_GE(ms_since(&t0), TIMEOUT_MS / 2);
    CHECK_EQ(mq_close(q), 0);
}

int main(void)
{
    alarm(40); /* the old pool's hang: killed, so failed */
    sem = semget(IPC_PRIVATE, 2, 0600);
    CHECK_GE(sem, 0);
    static cap_thread_t blockers[BLOCKERS];
    for (int i = 0; i < BLOCKERS; i++)
        blockers[i] = spawn(block_in_semop, NULL);
    /* Every blocker waits in the kernel: each holds a pool thread. */
    while (semctl(sem, 0, GETNCNT) < BLOCKERS)
        cap_usleep(1000);
    semtimedop_times_out();
    mq_timedreceive_times_out();
    CHECK_EQ(semctl(sem, 0, SETVAL, BLOCKERS), 0); /* lets every blocker go */
    for (int i = 0; i < BLOCKERS; i++)
        join(blockers[i]);
    CHECK_EQ(semctl(sem, 0, IPC_RMID), 0);
    return 0;
}
