/* SPDX-License-Identifier: MIT */
/* Description: a signalfd read takes the signals sent to the reading
 * thread itself (raise, pthread_kill of itself) that its mask holds, as
 * NPTL's does: lowest number first, before a process-directed one, with
 * si_code SI_TKILL and the sender's pid and uid; through read, readv (a
 * record split across buffers), a dup, and the SFD_NONBLOCK flag or not;
 * and a signal taken so is no longer pending (sigpending, sigtimedwait
 * no longer see it). A buffer too small for a record fails with EINVAL
 * and takes nothing. Before, the read said EAGAIN: those signals wait in
 * the user thread's own pending set, which the kernel's signalfd does
 * not read. */
#include <signal.h>
#include <sys/signalfd.h>
#include <time.h>

#include "io/io_util.h"

typedef struct signalfd_siginfo rec_t;

static void check_tkill(const rec_t *r, int sig)
{
    CHECK_EQ(r->ssi_signo, (uint32_t)sig);
    CHECK_EQ(r->ssi_code, SI_TKILL);
    CHECK_EQ(r->ssi_pid, (uint32_t)getpid());
    CHECK_EQ(r->ssi_uid, (uint32_t)getuid());
}

/* None of the set pending for the thread any more, nor for sigwait. */
static void check_none_pending(const sigset_t *set)
{
    sigset_t p;
    CHECK_EQ(sigpending(&p), 0);
    for (int sig = 1; sig < 64; sig++)
        if (sigismember(set, sig))
            CHECK_EQ(sigismember(&p, sig), 0);
    struct timespec zero = { 0, 0 };
    errno = 0;
    CHECK_EQ(sigtimedwait(set, NULL, &zero), -1);
    CHECK_EQ(errno, EAGAIN);
}

static void *run(void *arg)
{
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGHUP);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    sigaddset(&s, SIGRTMIN);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    int nb = signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK_GE(nb, 0);
    rec_t r[4];

    /* Thread-directed, in the wrong order, and one process-directed of
     * a lower number: the thread's own first, lowest first. */
    CHECK_EQ(kill(getpid(), SIGHUP), 0);
    CHECK_EQ(raise(SIGUSR2), 0);
    CHECK_EQ(cap_thread_kill(cap_thread_self(), SIGUSR1), 0);
    CHECK_EQ(read(nb, r, sizeof r), (ssize_t)(3 * sizeof r[0]));
    check_tkill(&r[0], SIGUSR1);
    check_tkill(&r[1], SIGUSR2);
    CHECK_EQ(r[2].ssi_signo, (uint32_t)SIGHUP);
    CHECK_EQ(r[2].ssi_code, SI_USER);
    check_none_pending(&s);
    errno = 0;
    CHECK_EQ(read(nb, r, sizeof r), -1);
    CHECK_EQ(errno, EAGAIN);

    /* Too small a buffer: EINVAL, and the signal stays pending. */
    CHECK_EQ(raise(SIGUSR1), 0);
    errno = 0;
    CHECK_EQ(read(nb, r, sizeof r[0] - 1), -1);
    CHECK_EQ(errno, EINVAL);
    sigset_t p;
    CHECK_EQ(sigpending(&p), 0);
    CHECK_EQ(sigismember(&p, SIGUSR1), 1);
    /* A bad buffer: EFAULT, blocking or not (never a wait), and the
     * signal stays pending too (Linux's loses it). */
    int blocking = signalfd(-1, &s, SFD_CLOEXEC);
    CHECK_GE(blocking, 0);
    void *volatile bad = (void *)8; /* volatile: no compile-time warning */
    errno = 0;
    CHECK_EQ(read(blocking, bad, sizeof r[0]), -1);
    CHECK_EQ(errno, EFAULT);
    CHECK_EQ(close(blocking), 0);
    CHECK_EQ(sigpending(&p), 0);
    CHECK_EQ(sigismember(&p, SIGUSR1), 1);

    /* readv with records split across buffers, and real-time signals
     * queued twice: each instance is a record. */
    CHECK_EQ(raise(SIGRTMIN), 0);
    CHECK_EQ(raise(SIGRTMIN), 0);
    char a[100], b[200], c[84];
    struct iovec v[3] = { { a, sizeof a }, { b, sizeof b }, { c, sizeof c } };
    CHECK_EQ(readv(nb, v, 3), (ssize_t)(3 * sizeof r[0]));
    char flat[3 * sizeof(rec_t)];
    memcpy(flat, a, sizeof a);
    memcpy(flat + sizeof a, b, sizeof b);
    memcpy(flat + sizeof a + sizeof b, c, sizeof c);
    memcpy(r, flat, sizeof flat);
    check_tkill(&r[0], SIGUSR1);
    check_tkill(&r[1], SIGRTMIN);
    check_tkill(&r[2], SIGRTMIN);
    check_none_pending(&s);

    /* A blocking signalfd that has one pending for the thread: read at
     * once, through a dup too. */
    int fd = signalfd(-1, &s, SFD_CLOEXEC);
    CHECK_GE(fd, 0);
    int d = dup(fd);
    CHECK_GE(d, 0);
    CHECK_EQ(raise(SIGUSR2), 0);
    CHECK_EQ(read(fd, r, sizeof r), (ssize_t)sizeof r[0]);
    check_tkill(&r[0], SIGUSR2);
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(read(d, r, sizeof r[0]), (ssize_t)sizeof r[0]);
    check_tkill(&r[0], SIGUSR1);
    check_none_pending(&s);

    /* One outside the signalfd's mask stays pending for the thread. */
    sigset_t only1;
    sigemptyset(&only1);
    sigaddset(&only1, SIGUSR1);
    int fd1 = signalfd(-1, &only1, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK_GE(fd1, 0);
    CHECK_EQ(raise(SIGUSR2), 0);
    errno = 0;
    CHECK_EQ(read(fd1, r, sizeof r), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(sigpending(&p), 0);
    CHECK_EQ(sigismember(&p, SIGUSR2), 1);
    CHECK_EQ(read(nb, r, sizeof r), (ssize_t)sizeof r[0]);
    check_tkill(&r[0], SIGUSR2);

    CHECK_EQ(close(fd1), 0);
    CHECK_EQ(close(d), 0);
    CHECK_EQ(close(fd), 0);
    CHECK_EQ(close(nb), 0);
    return NULL;
}

int main(void)
{
    alarm(30); /* a read that waits for good ends the test */
    /* Every thread blocks the set, so a process-directed one stays
     * pending in the kernel for the signalfd. */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGHUP);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    sigaddset(&s, SIGRTMIN);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    run(NULL); /* on main */
    join(spawn(run, NULL)); /* and on another thread */
    puts("ok");
    return 0;
}
