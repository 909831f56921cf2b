/* SPDX-License-Identifier: MIT */
/* Description: through <capriccio/pthread.h>, what is not supported fails
 * with the documented POSIX error instead of being ignored: real-time
 * scheduling and system scope,
 * priority protection, bad signal numbers and thread
 * handles (pthread_kill, pthread_sigqueue), and the GNU extensions
 * without a meaning here;
 * what is supported in those families works. */
#include <capriccio/pthread.h>
#include <fcntl.h>

#include "check.h"


int main(void)
{
    pthread_mutexattr_t ma;
    pthread_rwlockattr_t ra;
    CHECK_EQ(pthread_mutexattr_init(&ma), 0);
    CHECK_EQ(pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_PROTECT), ENOTSUP);
    CHECK_EQ(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE), 0);
    CHECK_EQ(pthread_rwlockattr_init(&ra), 0);
    CHECK_EQ(pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_READER_NP), 0);
    int kind = -1;
    CHECK_EQ(pthread_rwlockattr_getkind_np(&ra, &kind), 0);
    CHECK_EQ(kind, PTHREAD_RWLOCK_PREFER_READER_NP);

    pthread_attr_t a;
    struct sched_param sp = { 0 };
    int v = -1;
    CHECK_EQ(pthread_attr_init(&a), 0);
    CHECK_EQ(pthread_attr_setschedpolicy(&a, SCHED_FIFO), ENOTSUP);
    CHECK_EQ(pthread_attr_setschedpolicy(&a, SCHED_RR), ENOTSUP);
    CHECK_EQ(pthread_attr_setschedpolicy(&a, SCHED_OTHER), 0);
    sp.sched_priority = 10;
    CHECK_EQ(pthread_attr_setschedparam(&a, &sp), EINVAL);
    CHECK_EQ(pthread_attr_setscope(&a, PTHREAD_SCOPE_SYSTEM), ENOTSUP);
    CHECK_EQ(pthread_attr_setscope(&a, PTHREAD_SCOPE_PROCESS), 0);
    CHECK_EQ(pthread_attr_getscope(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_SCOPE_PROCESS);
    CHECK_EQ(pthread_attr_setstacksize(&a, 1), EINVAL);
    CHECK_EQ(pthread_attr_setstacksize(&a, 128 * 1024), 0);
    size_t size = 0;
    CHECK_EQ(pthread_attr_getstacksize(&a, &size), 0);
    CHECK_EQ(size, 128 * 1024);

    pthread_t self = pthread_self();
    sp.sched_priority = 0;
    CHECK_EQ(pthread_setschedparam(self, SCHED_FIFO, &sp), ENOTSUP);
    CHECK_EQ(pthread_setschedparam(self, SCHED_OTHER, &sp), 0);
    int policy = -1;
    CHECK_EQ(pthread_getschedparam(self, &policy, &sp), 0);
    CHECK_EQ(policy, SCHED_OTHER);
    CHECK_EQ(pthread_kill(self, 0), 0);
    CHECK_EQ(pthread_kill(self, -1), EINVAL);
    CHECK_EQ(pthread_kill(self, NSIG), EINVAL);
    CHECK_EQ(pthread_kill(self, 32), EINVAL); /* glibc's own */
    union sigval sv = { .sival_int = 1 };
    CHECK_EQ(pthread_sigqueue(self, 0, sv), 0);
    CHECK_EQ(pthread_sigqueue(self, NSIG, sv), EINVAL);
    CHECK_EQ(pthread_sigqueue(self, 33, sv), EINVAL); /* glibc's own */
    CHECK_EQ(pthread_sigqueue(self + 12345, SIGUSR1, sv), ESRCH);
    CHECK_EQ(pthread_kill(self + 12345, 0), ESRCH);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, NULL, &old), 0);
    CHECK_EQ(pthread_sigmask(12345, &set, NULL), EINVAL);
    clockid_t clk;
    CHECK_EQ(pthread_getcpuclockid(self, &clk), ENOENT);
    CHECK_EQ(pthread_tryjoin_np(self, NULL), EBUSY); /* supported: itself runs, as glibc says */
    CHECK_EQ(pthread_getaffinity_np(self, 0, NULL), ENOSYS);

    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    CHECK_EQ(pthread_mutex_consistent(&m), EINVAL);
    CHECK_EQ(pthread_setconcurrency(-1), EINVAL);
    CHECK_EQ(pthread_setconcurrency(4), 0);
    CHECK_EQ(pthread_getconcurrency(), 4);

    struct timespec bad = { 0, 2000000000L };
    errno = 0;
    CHECK_EQ(nanosleep(&bad, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    struct timespec tiny = { 0, 1000 };
    CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &tiny, NULL), 0);
    CHECK_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &tiny, NULL), ENOTSUP);
    return 0;
}
