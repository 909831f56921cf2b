/* SPDX-License-Identifier: MIT */
/* Description: glibc's eventfd_read and eventfd_write, which read and
 * write through glibc's internal names, park only their thread: a read of
 * a zero counter waits for a kernel thread's eventfd_write while others
 * run, and a write that would overflow the counter waits for a kernel
 * thread's eventfd_read (both blocked the worker before, starving the
 * ticker). */
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>

#include "io/io_util.h"

static int efd;
static struct ticker tick;

static void *late_write(void *arg)
{
    (void)arg;
    usleep(30000);
    CHECK_EQ(eventfd_write(efd, 5), 0);
    return NULL;
}

static void *late_read(void *arg)
{
    (void)arg;
    usleep(30000);
    eventfd_t v = 0;
    CHECK_EQ(eventfd_read(efd, &v), 0);
    CHECK_EQ(v, UINT64_MAX - 1);
    return NULL;
}

int main(void)
{
    efd = eventfd(0, 0); /* the application's own, blocking */
    CHECK(efd >= 0);
    cap_thread_t t = spawn(ticker_run, &tick);
    while (atomic_load(&tick.ticks) == 0)
        cap_yield();

    long before = atomic_load(&tick.ticks);
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, late_write, NULL), 0);
    eventfd_t v = 0;
    CHECK_EQ(eventfd_read(efd, &v), 0);
    CHECK_EQ(v, 5);
    CHECK(atomic_load(&tick.ticks) > before + 1);
    CHECK_EQ(pthread_join(kt, NULL), 0);

    /* The counter's largest value, then one more: waits for a read. */
    CHECK_EQ(eventfd_write(efd, UINT64_MAX - 1), 0);
    before = atomic_load(&tick.ticks);
    CHECK_EQ(pthread_create(&kt, NULL, late_read, NULL), 0);
    CHECK_EQ(eventfd_write(efd, 1), 0);
    CHECK(atomic_load(&tick.ticks) > before + 1);
    CHECK_EQ(pthread_join(kt, NULL), 0);
    CHECK_EQ(eventfd_read(efd, &v), 0);
    CHECK_EQ(v, 1);

    /* A bad descriptor: -1 with errno, as glibc's. */
    errno = 0;
    CHECK_EQ(eventfd_read(-1, &v), -1);
    CHECK_EQ(errno, EBADF);

    atomic_store(&tick.stop, 1);
    join(t);
    CHECK_EQ(close(efd), 0);
    return 0;
}
