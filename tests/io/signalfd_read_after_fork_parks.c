/* SPDX-License-Identifier: MIT */
/* Description: a signalfd the program made blocking still parks only its
 * reader after a fork, which gives the runtime's descriptors back their
 * blocking mode (the child shares them): a read and a readv with nothing
 * pending park until a signal comes, and a read that takes the thread's
 * own pending signals and then looks for more in the kernel finds none
 * without waiting. A non-blocking one still says EAGAIN. Before, the
 * runtime's read of such a signalfd was the plain blocking one: it held
 * the worker until a signal came (on one worker for ever, the sender
 * being a thread of it), and the look for more after the thread's own
 * signals held it for good. */
#include <signal.h>
#include <sys/signalfd.h>

#include "fork_util.h"
#include "io/io_util.h"

typedef struct signalfd_siginfo rec_t;

static int fd;
static atomic_int reading;

/* One read (readv with `vector`) that must park: main sends SIGUSR2 to
 * the process once it runs again, which it does on one worker only if
 * the read parked. */
static void *reader(void *arg)
{
    bool vector = arg != NULL;
    rec_t r[2];
    atomic_store(&reading, 1);
    if (vector) {
        struct iovec v[2] = { { &r[0], sizeof r[0] }, { &r[1], sizeof r[1] } };
        CHECK_EQ(readv(fd, v, 2), (ssize_t)sizeof r[0]);
    } else {
        CHECK_EQ(read(fd, r, sizeof r), (ssize_t)sizeof r[0]);
    }
    CHECK_EQ(r[0].ssi_signo, SIGUSR2);
    CHECK_EQ(r[0].ssi_pid, (uint32_t)getpid());
    return NULL;
}

static void parked_read(bool vector)
{
    atomic_store(&reading, 0);
    cap_thread_t t = spawn(reader, vector ? &fd : NULL);
    while (atomic_load(&reading) == 0)
        cap_sleep_ns(100000);
    cap_sleep_ns(2000000); /* the reader parks first */
    CHECK_EQ(kill(getpid(), SIGUSR2), 0);
    join(t);
}

/* The thread's own pending SIGUSR1 (raise), and nothing in the kernel:
 * the read returns that one record and does not wait for a second. */
static void *own_then_none(void *arg)
{
    (void)arg;
    CHECK_EQ(raise(SIGUSR1), 0);
    rec_t r[4];
    CHECK_EQ(read(fd, r, sizeof r), (ssize_t)sizeof r[0]);
    CHECK_EQ(r[0].ssi_signo, SIGUSR1);
    CHECK_EQ(r[0].ssi_code, SI_TKILL);
    /* Own, then the kernel's: both in one read. */
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(kill(getpid(), SIGUSR2), 0);
    CHECK_EQ(read(fd, r, sizeof r), (ssize_t)(2 * sizeof r[0]));
    CHECK_EQ(r[0].ssi_signo, SIGUSR1);
    CHECK_EQ(r[1].ssi_signo, SIGUSR2);
    return NULL;
}

static int exit_at_once(void)
{
    return 0;
}

int main(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    fd = signalfd(-1, &s, SFD_CLOEXEC);
    CHECK_GE(fd, 0);
    int nb = signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK_GE(nb, 0);

    run_in_fork_child(exit_at_once);
    CHECK_EQ(kernel_nonblock(fd), 0); /* given back, as the child has it */

    parked_read(false);
    parked_read(true);
    join(spawn(own_then_none, NULL));

    rec_t r;
    errno = 0;
    CHECK_EQ(read(nb, &r, sizeof r), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(close(nb), 0);
    CHECK_EQ(close(fd), 0);
    return 0;
}
