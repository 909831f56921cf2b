/* SPDX-License-Identifier: MIT */
/*
 * Waits on kernel objects the descriptor backends cannot watch: System V
 * message queues and semaphores (msgrcv, msgsnd, semop, semtimedop), POSIX
 * message queues (mq_receive, mq_send and their timed forms). Left to
 * libc each blocked its
 * worker, so a wait for another user thread of that worker (the sender,
 * the poster, the thread that raises the signal) never ended: a hang with
 * one worker.
 *
 * On a user thread each first tries without waiting (IPC_NOWAIT, an
 * already-past deadline, a zero timeout) and only a call that would wait
 * runs on the offload pool (io/offload.c); the try is a raw system call,
 * so a call that then waits and succeeds leaves errno as it was, as the
 * kernel's does. Interruption follows signal(7):
 * the System V calls are never restarted (any handler interrupts them),
 * the message-queue calls only by handlers without SA_RESTART. The POSIX
 * cancellation points among them (all but semop and semtimedop) end on a
 * cancel too. A timeout or deadline the kernel refuses (unreadable:
 * EFAULT; malformed: EINVAL) goes to the kernel untried: Linux checks it
 * before the operation, so the call fails without taking a unit or a
 * message even when it could have proceeded at once.
 *
 * The signal waits (sigwait and its kin) are in sigwait.c.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <mqueue.h>
#include <stdbool.h>
#include <string.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MSG_COPY
#define MSG_COPY 040000 /* <linux/msg.h> */
#endif

#include "arch/syscall.h"
#include "arch/usercheck.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "util/clock.h"

/* Runs c on the pool; a cancellation point if point. Still queued for a
 * pool thread at deadline (CLOCK_MONOTONIC; CAP__FOREVER: none), it is
 * tried once without waiting instead (its absolute timeout, the fifth
 * argument, replaced by one long gone). */
static long offload(cap__sys_call *c, const cap__intr *base, bool point, uint64_t deadline)
{
    cap__intr in = *base;
    in.cancel = point;
    long r = cap__ic_offload_sys_until(c, &in, deadline);
    return point ? cap__ic_ret_cancel(r) : cap__ic_ret(r);
}

/* Whether the kernel refuses ts before it looks at the object: a pointer
 * it cannot read, or a time that is not a valid timespec. */
static bool refused_time(const struct timespec *ts)
{
    return ts != NULL && (!cap__user_readable(ts, sizeof *ts) || !cap__ic_timespec_valid(ts));
}

/* ---- System V ---------------------------------------------------------------- */

/* MSG_COPY (Linux's peek) is refused by the kernel without IPC_NOWAIT,
 * at once (EINVAL): such a call goes to the kernel as it is, since the
 * try below would add IPC_NOWAIT and make it succeed. */
ssize_t msgrcv(int id, void *msg, size_t size, long type, int flags)
{
    if (!cap__ic_enter() || (flags & (IPC_NOWAIT | MSG_COPY)))
        return syscall(SYS_msgrcv, id, msg, size, type, flags);
    long r = cap__sys6(SYS_msgrcv, id, (long)msg, (long)size, type, flags | IPC_NOWAIT, 0);
    if (r != -ENOMSG)
        return cap__ic_ret(r);
    cap__sys_call c = { SYS_msgrcv, { id, (long)msg, (long)size, type, flags }, 0 };
    return offload(&c, &cap__intr_always, true, CAP__FOREVER);
}

int msgsnd(int id, const void *msg, size_t size, int flags)
{
    if (!cap__ic_enter() || (flags & IPC_NOWAIT))
        return (int)syscall(SYS_msgsnd, id, msg, size, flags);
    long r = cap__sys6(SYS_msgsnd, id, (long)msg, (long)size, flags | IPC_NOWAIT, 0, 0);
    if (r != -EAGAIN)
        return (int)cap__ic_ret(r);
    cap__sys_call c = { SYS_msgsnd, { id, (long)msg, (long)size, flags, 0 }, 0 };
    return (int)offload(&c, &cap__intr_always, true, CAP__FOREVER);
}

enum { SEMOPS_TRY = 32 }; /* longer op lists go to the pool untried */

/* A semtimedop with a timeout, on the pool: the kernel is given what is
 * left of the timeout when the call starts (it may have waited in the
 * pool's queue, or be retried after a stray kick), so it ends at the
 * deadline taken as the caller made it. */
struct timed_semop {
    int id;
    struct sembuf *ops;
    size_t n;
    uint64_t deadline;
    long result;
};

static void run_timed_semop(void *arg)
{
    struct timed_semop *c = arg;
    struct timespec left = cap__ic_time_left(c->deadline);
    c->result = cap__ic_sys(syscall(SYS_semtimedop, c->id, c->ops, c->n, &left));
}

int semtimedop(int id, struct sembuf *ops, size_t n, const struct timespec *timeout)
{
    if (!cap__ic_user() || refused_time(timeout))
        return (int)syscall(SYS_semtimedop, id, ops, n, timeout);
    if (n > 0 && n <= SEMOPS_TRY) {
        struct sembuf nowait[SEMOPS_TRY];
        bool waits = false;
        for (size_t i = 0; i < n; i++) {
            if (!cap__user_readable(&ops[i], sizeof ops[i]))
                return (int)syscall(SYS_semtimedop, id, ops, n, timeout); /* EFAULT */
            nowait[i] = ops[i];
            waits |= !(ops[i].sem_flg & IPC_NOWAIT);
            nowait[i].sem_flg |= IPC_NOWAIT;
        }
        long r = cap__sys6(SYS_semtimedop, id, (long)nowait, (long)n, 0, 0, 0);
        if (!waits || r != -EAGAIN)
            return (int)cap__ic_ret(r);
    }
    uint64_t deadline = cap__ic_rel_deadline(timeout);
    if (deadline == CAP__FOREVER) {
        cap__sys_call c = { SYS_semtimedop, { id, (long)ops, (long)n, (long)timeout, 0 }, 0 };
        return (int)offload(&c, &cap__intr_always, false, CAP__FOREVER);
    }
    /* Past the deadline run_timed_semop gives the kernel no time left: a
     * try without waiting, EAGAIN if the call would wait. */
    struct timed_semop c = { id, ops, n, deadline, 0 };
    return (int)cap__ic_ret(cap__offload_call_until(run_timed_semop, &c, &c.result,
                                                    &cap__intr_always, deadline,
                                                    run_timed_semop));
}

int semop(int id, struct sembuf *ops, size_t n)
{
    return semtimedop(id, ops, n, NULL);
}

/* ---- POSIX message queues -------------------------------------------------- */

static const struct timespec past = { 0, 0 }; /* an absolute deadline long gone */

/* The CLOCK_MONOTONIC deadline at the absolute CLOCK_REALTIME one (NULL:
 * none). Only a call still queued for a pool thread ends by it: a clock
 * step after the call was made is not followed there (the kernel follows
 * it once the call runs). */
static uint64_t monotonic_deadline(const struct timespec *abs)
{
    if (abs == NULL)
        return CAP__FOREVER;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (abs->tv_sec < now.tv_sec || (abs->tv_sec == now.tv_sec && abs->tv_nsec <= now.tv_nsec))
        return cap__now();
    uint64_t sec = (uint64_t)(abs->tv_sec - now.tv_sec);
    long nsec = abs->tv_nsec - now.tv_nsec;
    if (nsec < 0) {
        sec--;
        nsec += 1000000000;
    }
    return cap__deadline_after(cap__timeout_ns(sec, (uint64_t)nsec));
}

/* deadline NULL: no limit (mq_receive; glibc declares mq_timedreceive's
 * argument non-null). */
static ssize_t receive(mqd_t q, char *msg, size_t len, unsigned *prio,
                       const struct timespec *deadline)
{
    if (!cap__ic_enter() || refused_time(deadline))
        return syscall(SYS_mq_timedreceive, q, msg, len, prio, deadline);
    long r = cap__sys6(SYS_mq_timedreceive, q, (long)msg, (long)len, (long)prio, (long)&past, 0);
    if (r != -ETIMEDOUT)
        return cap__ic_ret(r);
    cap__sys_call c = { SYS_mq_timedreceive, { q, (long)msg, (long)len, (long)prio,
                                                 (long)deadline }, 0 };
    return offload(&c, &cap__intr_restart, true, monotonic_deadline(deadline));
}

ssize_t mq_timedreceive(mqd_t q, char *msg, size_t len, unsigned *prio,
                        const struct timespec *deadline)
{
    return receive(q, msg, len, prio, deadline);
}

ssize_t mq_receive(mqd_t q, char *msg, size_t len, unsigned *prio)
{
    return receive(q, msg, len, prio, NULL);
}

static int send_msg(mqd_t q, const char *msg, size_t len, unsigned prio,
                    const struct timespec *deadline)
{
    if (!cap__ic_enter() || refused_time(deadline))
        return (int)syscall(SYS_mq_timedsend, q, msg, len, prio, deadline);
    long r = cap__sys6(SYS_mq_timedsend, q, (long)msg, (long)len, prio, (long)&past, 0);
    if (r != -ETIMEDOUT)
        return (int)cap__ic_ret(r);
    cap__sys_call c = { SYS_mq_timedsend, { q, (long)msg, (long)len, (long)prio,
                                              (long)deadline }, 0 };
    return (int)offload(&c, &cap__intr_restart, true, monotonic_deadline(deadline));
}

int mq_timedsend(mqd_t q, const char *msg, size_t len, unsigned prio,
                 const struct timespec *deadline)
{
    return send_msg(q, msg, len, prio, deadline);
}

int mq_send(mqd_t q, const char *msg, size_t len, unsigned prio)
{
    return send_msg(q, msg, len, prio, NULL);
}
