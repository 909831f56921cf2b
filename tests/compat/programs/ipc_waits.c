/* SPDX-License-Identifier: MIT */
/* Description: a thread blocked in msgrcv, msgsnd (full queue), semop,
 * mq_receive or mq_send (full queue) lets the other threads run: each
 * wait ends when another thread sends, receives or posts after a pause. A
 * wait that held up the threads beside it would never end (the alarm fails
 * the program). Exits 77 (skipped) where the IPC objects cannot be made. */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <unistd.h>

#include "check.h"

struct msg {
    long type;
    char text[8];
};

static int q, sem;
static mqd_t mq;

static void *msg_sender(void *arg)
{
    (void)arg;
    usleep(30000);
    struct msg m = { 1, "hi" };
    EXPECT_EQ(msgsnd(q, &m, sizeof m.text, 0), 0);
    return NULL;
}

static void *msg_receiver(void *arg)
{
    (void)arg;
    usleep(30000);
    struct msg m;
    EXPECT_EQ(msgrcv(q, &m, sizeof m.text, 0, 0), (long)sizeof m.text);
    return NULL;
}

static void *sem_poster(void *arg)
{
    (void)arg;
    usleep(30000);
    struct sembuf op = { 0, 1, 0 };
    EXPECT_EQ(semop(sem, &op, 1), 0);
    return NULL;
}

static void *mq_sender(void *arg)
{
    (void)arg;
    usleep(30000);
    EXPECT_EQ(mq_send(mq, "hi", 3, 0), 0);
    return NULL;
}

static void *mq_receiver(void *arg)
{
    (void)arg;
    usleep(30000);
    char buf[16];
    EXPECT_EQ(mq_receive(mq, buf, sizeof buf, NULL), 3);
    return NULL;
}

static void run_beside(void *(*fn)(void *), void (*wait)(void))
{
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, fn, NULL), 0);
    wait();
    EXPECT_EQ(pthread_join(t, NULL), 0);
}

static void msg_receive(void)
{
    struct msg m;
    EXPECT_EQ(msgrcv(q, &m, sizeof m.text, 0, 0), (long)sizeof m.text);
    EXPECT_EQ(strcmp(m.text, "hi"), 0);
}

static void msg_send_full(void)
{
    struct msqid_ds ds;
    EXPECT_EQ(msgctl(q, IPC_STAT, &ds), 0);
    ds.msg_qbytes = 8; /* room for one message */
    EXPECT_EQ(msgctl(q, IPC_SET, &ds), 0);
    struct msg m = { 1, "one" };
    EXPECT_EQ(msgsnd(q, &m, sizeof m.text, 0), 0);
    EXPECT_EQ(msgsnd(q, &m, sizeof m.text, 0), 0); /* waits for the receiver */
    EXPECT_EQ(msgrcv(q, &m, sizeof m.text, 0, 0), (long)sizeof m.text);
}

static void sem_wait_op(void)
{
    struct sembuf op = { 0, -1, 0 };
    EXPECT_EQ(semop(sem, &op, 1), 0);
}

static void mq_receive_one(void)
{
    char buf[16];
    EXPECT_EQ(mq_receive(mq, buf, sizeof buf, NULL), 3);
    EXPECT_EQ(strcmp(buf, "hi"), 0);
}

static void mq_send_full(void)
{
    EXPECT_EQ(mq_send(mq, "hi", 3, 0), 0); /* maxmsg 1: now full */
    EXPECT_EQ(mq_send(mq, "hi", 3, 0), 0); /* waits for the receiver */
    char buf[16];
    EXPECT_EQ(mq_receive(mq, buf, sizeof buf, NULL), 3);
}

int main(void)
{
    alarm(20);
    q = msgget(IPC_PRIVATE, 0600);
    sem = semget(IPC_PRIVATE, 1, 0600);
    char name[32];
    snprintf(name, sizeof name, "/compat_ipc_%d", (int)getpid());
    struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 16 };
    mq = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
    if (q < 0 || sem < 0 || mq == (mqd_t)-1) {
        fprintf(stderr, "IPC objects unavailable: %s\n", strerror(errno));
        if (q >= 0)
            msgctl(q, IPC_RMID, NULL);
        if (sem >= 0)
            semctl(sem, 0, IPC_RMID);
        return 77;
    }
    mq_unlink(name);
    run_beside(msg_sender, msg_receive);
    run_beside(msg_receiver, msg_send_full);
    run_beside(sem_poster, sem_wait_op);
    run_beside(mq_sender, mq_receive_one);
    run_beside(mq_receiver, mq_send_full);
    msgctl(q, IPC_RMID, NULL);
    semctl(sem, 0, IPC_RMID);
    mq_close(mq);
    return 0;
}
