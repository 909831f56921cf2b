/* SPDX-License-Identifier: MIT */
/* Description: POSIX message queues between threads, with each way of
 * being told of a message.
 *  - SIGEV_THREAD: glibc runs the function on a thread of its own; it
 *    takes the message, registers again and wakes main through a
 *    semaphore, round after round, with the value it was given.
 *  - SIGEV_SIGNAL: main takes the signal with sigwaitinfo, which reports
 *    SI_MESGQ, the value and the sender's pid.
 *  - Only one registration per queue (EBUSY), and a NULL one removes it.
 *  - Blocking calls wait for another thread of the program, which must
 *    run meanwhile (a call that held the only kernel thread would hang):
 *    a receive on an empty queue, a send on a full one; a timed receive
 *    times out with ETIMEDOUT; a non-blocking queue says EAGAIN.
 *  - Messages come highest priority first, in order within a priority. */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

enum { ROUNDS = 20, MSG = 64, DEPTH = 4 };

static char name[64];
static mqd_t q;
static sem_t got;
static atomic_int bad_value, bad_message, next_round;

static mqd_t open_queue(int extra_flags)
{
    struct mq_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.mq_maxmsg = DEPTH;
    attr.mq_msgsize = MSG;
    mqd_t m = mq_open(name, O_RDWR | O_CREAT | O_EXCL | extra_flags, 0600, &attr);
    if (m == (mqd_t)-1 && (errno == ENOSYS || errno == EACCES)) {
        fprintf(stderr, "no POSIX message queues here (%s): skipped\n", strerror(errno));
        exit(77);
    }
    EXPECT(m != (mqd_t)-1);
    EXPECT_EQ(mq_unlink(name), 0); /* gone with its last descriptor */
    return m;
}

static void send_text(mqd_t m, const char *text, unsigned prio)
{
    EXPECT_EQ(mq_send(m, text, strlen(text) + 1, prio), 0);
}

static void expect_text(mqd_t m, const char *text, unsigned prio)
{
    char buf[MSG];
    unsigned p = 0;
    EXPECT_EQ(mq_receive(m, buf, sizeof buf, &p), (long)strlen(text) + 1);
    EXPECT_EQ(strcmp(buf, text), 0);
    EXPECT_EQ(p, prio);
}

static void notify_me(void);

/* On glibc's notification thread: the message, then the next round's
 * registration (a notification is used up by its delivery) before main
 * may send again. */
static void on_message(union sigval v)
{
    if (v.sival_int != 4242)
        atomic_fetch_add(&bad_value, 1);
    char buf[MSG];
    char want[32];
    snprintf(want, sizeof want, "round %d", atomic_load(&next_round));
    if (mq_receive(q, buf, sizeof buf, NULL) != (ssize_t)strlen(want) + 1 || strcmp(buf, want) != 0)
        atomic_fetch_add(&bad_message, 1);
    if (atomic_fetch_add(&next_round, 1) + 1 < ROUNDS)
        notify_me();
    EXPECT_EQ(sem_post(&got), 0);
}

static void notify_me(void)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = on_message;
    ev.sigev_value.sival_int = 4242;
    EXPECT_EQ(mq_notify(q, &ev), 0);
}

static void by_thread(void)
{
    q = open_queue(0);
    EXPECT_EQ(sem_init(&got, 0, 0), 0);
    notify_me();
    for (int i = 0; i < ROUNDS; i++) {
        char text[32];
        snprintf(text, sizeof text, "round %d", i);
        send_text(q, text, 1);
        while (sem_wait(&got) != 0)
            EXPECT_EQ(errno, EINTR);
    }
    EXPECT_EQ(atomic_load(&next_round), ROUNDS);
    EXPECT_EQ(atomic_load(&bad_value), 0);
    EXPECT_EQ(atomic_load(&bad_message), 0);
    EXPECT_EQ(sem_destroy(&got), 0);
    EXPECT_EQ(mq_close(q), 0);
}

static void by_signal(void)
{
    mqd_t m = open_queue(0);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    EXPECT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_int = 99;
    EXPECT_EQ(mq_notify(m, &ev), 0);
    /* One registration per queue; none to remove twice. */
    expect_fail(mq_notify(m, &ev), EBUSY);
    send_text(m, "signalled", 3);
    siginfo_t si;
    EXPECT_EQ(sigwaitinfo(&usr1, &si), SIGUSR1);
    EXPECT_EQ(si.si_code, SI_MESGQ);
    EXPECT_EQ(si.si_value.sival_int, 99);
    EXPECT_EQ(si.si_pid, getpid());
    expect_text(m, "signalled", 3);

    /* Registered, then removed: a message sends nothing. */
    EXPECT_EQ(mq_notify(m, &ev), 0);
    EXPECT_EQ(mq_notify(m, NULL), 0);
    send_text(m, "unsignalled", 0);
    sigset_t pending;
    EXPECT_EQ(sigpending(&pending), 0);
    EXPECT(!sigismember(&pending, SIGUSR1));
    expect_text(m, "unsignalled", 0);
    EXPECT_EQ(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
    EXPECT_EQ(mq_close(m), 0);
}

static mqd_t shared;

static void *late_sender(void *arg)
{
    (void)arg;
    sleep_ms(20); /* the receive below is waiting by then, mostly */
    send_text(shared, "late", 2);
    return NULL;
}

static void *late_receiver(void *arg)
{
    (void)arg;
    sleep_ms(20);
    expect_text(shared, "first", 7);
    return NULL;
}

static void blocking_calls(void)
{
    shared = open_queue(0);

    /* A receive on an empty queue waits for the sender thread. */
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, late_sender, NULL), 0);
    expect_text(shared, "late", 2);
    EXPECT_EQ(pthread_join(t, NULL), 0);

    /* A send on a full queue waits for the receiver thread to make room. */
    send_text(shared, "first", 7);
    for (int i = 1; i < DEPTH; i++)
        send_text(shared, "filler", 0);
    EXPECT_EQ(pthread_create(&t, NULL, late_receiver, NULL), 0);
    send_text(shared, "filler", 0);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    struct mq_attr attr;
    EXPECT_EQ(mq_getattr(shared, &attr), 0);
    EXPECT_EQ(attr.mq_curmsgs, DEPTH);
    for (int i = 0; i < DEPTH; i++)
        expect_text(shared, "filler", 0);

    /* A timed receive on an empty queue times out. */
    struct timespec deadline;
    EXPECT_EQ(clock_gettime(CLOCK_REALTIME, &deadline), 0);
    deadline.tv_nsec += 20000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    char buf[MSG];
    expect_fail(mq_timedreceive(shared, buf, sizeof buf, NULL, &deadline), ETIMEDOUT);
    struct timespec now;
    EXPECT_EQ(clock_gettime(CLOCK_REALTIME, &now), 0);
    EXPECT(now.tv_sec > deadline.tv_sec ||
           (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec));
    /* A buffer smaller than the queue's message size. */
    expect_fail(mq_receive(shared, buf, MSG - 1, NULL), EMSGSIZE);

    /* Priorities: highest first, in order within one. */
    send_text(shared, "low", 1);
    send_text(shared, "high-a", 9);
    send_text(shared, "high-b", 9);
    expect_text(shared, "high-a", 9);
    expect_text(shared, "high-b", 9);
    expect_text(shared, "low", 1);

    /* Non-blocking: EAGAIN both ways, at once. */
    attr.mq_flags = O_NONBLOCK;
    EXPECT_EQ(mq_setattr(shared, &attr, NULL), 0);
    expect_fail(mq_receive(shared, buf, sizeof buf, NULL), EAGAIN);
    for (int i = 0; i < DEPTH; i++)
        send_text(shared, "x", 0);
    expect_fail(mq_send(shared, "y", 2, 0), EAGAIN);
    EXPECT_EQ(mq_close(shared), 0);
    expect_fail(mq_close(shared), EBADF);
}

int main(void)
{
    snprintf(name, sizeof name, "/cap-mq-notify-%d", (int)getpid());
    /* The signal first: glibc's notification threads unblock every
     * signal, and one still ending could take the process's SIGUSR1
     * (whose default action ends it) in place of main's sigwaitinfo. */
    by_signal();
    blocking_calls();
    by_thread();
    return 0;
}
