/* SPDX-License-Identifier: MIT */
/* Description: a blocking read of a signalfd parks only the reader (the
 * runtime makes it non-blocking underneath; the program still sees it
 * blocking): a ticker runs meanwhile, also on one worker, and the read
 * returns the signal sent to the process, with its sender, once for each
 * signal. A non-blocking signalfd says EAGAIN when nothing is pending, and
 * poll reports it readable once a signal is. Before, with two workers,
 * the signal the program blocked killed it: the other worker's kernel
 * thread did not block it. */
#include <signal.h>
#include <sys/signalfd.h>

#include "io/io_util.h"

enum { SIGNALS = 20 };

static struct ticker tk;
static atomic_int got, reading;
static atomic_long ticks_at_read;

static void *reader(void *arg)
{
    int fd = *(int *)arg;
    for (int i = 0; i < SIGNALS; i++) {
        long ticks = atomic_load(&tk.ticks);
        atomic_store(&ticks_at_read, ticks);
        atomic_store(&reading, i + 1);
        struct signalfd_siginfo si;
        CHECK_EQ(read(fd, &si, sizeof si), (ssize_t)sizeof si);
        CHECK_EQ(si.ssi_signo, SIGUSR2);
        CHECK_EQ(si.ssi_pid, (uint32_t)getpid());
        if (i == 0)
            CHECK_GT(atomic_load(&tk.ticks), ticks);
        atomic_fetch_add(&got, 1);
    }
    return NULL;
}

int main(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR2);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    int fd = signalfd(-1, &s, SFD_CLOEXEC);
    CHECK_GE(fd, 0);
    CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* the program's view */

    cap_thread_t t = spawn(ticker_run, &tk);
    cap_thread_t r = spawn(reader, &fd);
    for (int i = 0; i < SIGNALS; i++) {
        while (atomic_load(&reading) == i)
            cap_sleep_ns(100000);
        cap_sleep_ns(2000000); /* the reader parks first */
        /* The ticker ran while the reader waited: a read that held its
         * worker (the only one, with one) would hang the test here. Not
         * a time: a worker the kernel preempted (the suite's other
         * tests share the CPUs) may tick only later. */
        if (i == 0)
            while (atomic_load(&tk.ticks) <= atomic_load(&ticks_at_read))
                cap_sleep_ns(100000);
        CHECK_EQ(kill(getpid(), SIGUSR2), 0);
        while (atomic_load(&got) == i)
            cap_sleep_ns(100000);
    }
    join(r);

    int nb = signalfd(-1, &s, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK_GE(nb, 0);
    struct signalfd_siginfo si;
    errno = 0;
    CHECK_EQ(read(nb, &si, sizeof si), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(kill(getpid(), SIGUSR2), 0);
    struct pollfd pf = { .fd = nb, .events = POLLIN };
    CHECK_EQ(poll(&pf, 1, 5000), 1);
    CHECK_EQ(read(nb, &si, sizeof si), (ssize_t)sizeof si);
    CHECK_EQ(si.ssi_signo, SIGUSR2);
    CHECK_EQ(close(nb), 0);
    CHECK_EQ(close(fd), 0);
    atomic_store(&tk.stop, 1);
    join(t);
    puts("ok");
    return 0;
}
