/* SPDX-License-Identifier: MIT */
/* Description: semtimedop, mq_timedreceive and mq_timedsend refuse a
 * malformed timeout (EINVAL) or one they cannot read (EFAULT) before
 * doing anything, as Linux does, also when the operation could proceed
 * at once: no semaphore unit taken, no message consumed or queued. The
 * wrappers' first try without waiting used to go ahead regardless. */
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <time.h>

#include "io/io_util.h"

static void semaphore_unit_kept(void)
{
    int sem = semget(IPC_PRIVATE, 1, 0600);
    CHECK_GE(sem, 0);
    CHECK_EQ(semctl(sem, 0, SETVAL, 1), 0);
    struct sembuf take = { 0, -1, 0 };
    struct timespec bad = { 0, -1 };
    CHECK_EQ(semtimedop(sem, &take, 1, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    bad = (struct timespec){ -1, 0 };
    CHECK_EQ(semtimedop(sem, &take, 1, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(semtimedop(sem, &take, 1, (struct timespec *)8), -1);
    CHECK_EQ(errno, EFAULT);
    CHECK_EQ(semctl(sem, 0, GETVAL), 1);
    struct timespec ok = { 0, 1000 };
    CHECK_EQ(semtimedop(sem, &take, 1, &ok), 0);
    CHECK_EQ(semctl(sem, 0, GETVAL), 0);
    CHECK_EQ(semctl(sem, 0, IPC_RMID), 0);
}

static void messages_kept(void)
{
    char name[64];
    snprintf(name, sizeof name, "/capriccio-ipc-bad-timeout-%d", (int)getpid());
    struct mq_attr attr = { .mq_maxmsg = 2, .mq_msgsize = 8 };
    mqd_t q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    if (q == (mqd_t)-1) {
        fprintf(stderr, "mq_open: %s: skipped\n", strerror(errno));
        exit(77);
    }
    CHECK_EQ(mq_unlink(name), 0);
    struct timespec bad = { 0, 1000000000 };
    char buf[8];
    /* room in the queue: nothing queued */
    CHECK_EQ(mq_timedsend(q, "a", 1, 0, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(mq_timedsend(q, "a", 1, 0, (struct timespec *)8), -1);
    CHECK_EQ(errno, EFAULT);
    struct mq_attr now;
    CHECK_EQ(mq_getattr(q, &now), 0);
    CHECK_EQ(now.mq_curmsgs, 0);
    /* a message there: not consumed */
    CHECK_EQ(mq_send(q, "m", 1, 0), 0);
    CHECK_EQ(mq_timedreceive(q, buf, sizeof buf, NULL, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(mq_timedreceive(q, buf, sizeof buf, NULL, (struct timespec *)8), -1);
    CHECK_EQ(errno, EFAULT);
    CHECK_EQ(mq_getattr(q, &now), 0);
    CHECK_EQ(now.mq_curmsgs, 1);
    struct timespec past = { 1, 0 };
    CHECK_EQ(mq_timedreceive(q, buf, sizeof buf, NULL, &past), 1);
    CHECK_EQ(buf[0], 'm');
    CHECK_EQ(mq_close(q), 0);
}

int main(void)
{
    semaphore_unit_kept();
    messages_kept();
    return 0;
}
