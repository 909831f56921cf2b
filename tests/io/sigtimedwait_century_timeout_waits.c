/* SPDX-License-Identifier: MIT */
/* Description: sigtimedwait with a timeout too long for a 64-bit count of
 * nanoseconds (2^62 s; 18446744074 s, just past 2^64 ns) waits until the
 * signal comes, as the kernel's, which clamps such a timeout, does. The
 * timeout was converted to nanoseconds with a multiplication that wrapped
 * round: 2^62 s became 0 (EAGAIN at once) and 18446744074 s became 0.29
 * s. Here the signal is sent only after the waiter began its wait. */
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "io/io_util.h"

static atomic_int waiting;

static void *sender(void *arg)
{
    (void)arg;
    while (!atomic_load(&waiting))
        cap_sleep_ns(1000000);
    cap_sleep_ns(20000000); /* the waiter is parked (if not, it takes it at once) */
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    return NULL;
}

int main(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    const time_t secs[] = { (time_t)1 << 62, (time_t)18446744074LL };
    for (unsigned i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        atomic_store(&waiting, 0);
        cap_thread_t t = spawn(sender, NULL);
        struct timespec ts = { secs[i], 0 };
        atomic_store(&waiting, 1);
        siginfo_t si;
        int r = sigtimedwait(&s, &si, &ts);
        CHECK_EQ(r, SIGUSR1);
        CHECK_EQ(si.si_pid, getpid());
        join(t);
    }
    return 0;
}
