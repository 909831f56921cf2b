/* SPDX-License-Identifier: MIT */
/* Description: a poll of a signalfd while a signal sent to the polling
 * thread is pending (the runtime then reads the signalfd's mask from
 * /proc/self/fdinfo) takes no descriptor number a signal handler of the
 * program can see: an open() in a SIGPROF handler that interrupts the
 * poll loop of this single-threaded program gets the lowest free number
 * every time, as POSIX says and NPTL does. Before, it got the next one
 * in about three of four tries: the handler ran on the kernel thread
 * while the fdinfo file was open. One worker only: with two, a handler
 * of a process-directed signal may run on the other worker meanwhile
 * (README, Limits). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/time.h>

#include "io/io_util.h"

enum { CALLS = 500 };

static int lowest;
static atomic_int calls, wrong;

static void on_prof(int sig)
{
    (void)sig;
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd != lowest)
        atomic_fetch_add(&wrong, 1);
    close(fd);
    atomic_fetch_add(&calls, 1);
}

static void *body(void *arg)
{
    (void)arg;
    int sfd = blocked_signalfd(SIGUSR1);
    CHECK_EQ(cap_thread_kill(cap_thread_self(), SIGUSR1), 0);
    struct pollfd p = { .fd = sfd, .events = POLLIN };
    CHECK_EQ(poll(&p, 1, 0), 1); /* whatever the runtime opens, it has */
    lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK_GE(lowest, 0);
    CHECK_EQ(close(lowest), 0);
    install_handler(SIGPROF, on_prof, SA_RESTART);
    /* CPU time: the loop below spends it, so the ticks come. */
    struct itimerval it = { { 0, 200 }, { 0, 200 } };
    CHECK_EQ(setitimer(ITIMER_PROF, &it, NULL), 0);
    while (atomic_load(&calls) < CALLS) {
        p.revents = 0;
        CHECK_EQ(poll(&p, 1, 0), 1);
        CHECK_EQ(p.revents, POLLIN);
    }
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    CHECK_EQ(setitimer(ITIMER_PROF, &off, NULL), 0);
    CHECK_EQ(atomic_load(&wrong), 0);
    CHECK_EQ(close(sfd), 0);
    return NULL;
}

int main(void)
{
    alarm(50);
    join(spawn(body, NULL));
    puts("ok");
    return 0;
}
