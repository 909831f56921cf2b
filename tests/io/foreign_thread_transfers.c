/* SPDX-License-Identifier: MIT */
/* Description: a kernel thread the runtime does not run (plain
 * pthread_create) keeps libc's meaning on descriptors the runtime made,
 * which are non-blocking underneath: a recv/recvmsg with MSG_DONTWAIT and
 * a preadv2 with RWF_NOWAIT on an empty one return EAGAIN at once (they
 * waited for readiness before: a hang here); a preadv2 without RWF_NOWAIT
 * on an empty pipe waits for data as on a blocking pipe (it returned
 * EAGAIN before); and a pwritev2 into a private pipe (io/pipe.h) wakes the
 * user thread parked on its read end (it woke nobody before: a hang). */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "io/io_util.h"

static int sv[2], p[2], q[2];
static atomic_int calling;

static void *dontwait_calls(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_thread_self(), 0); /* not a user thread */
    char c;
    errno = 0;
    CHECK_EQ(recv(sv[0], &c, 1, MSG_DONTWAIT), -1);
    CHECK_EQ(errno, EAGAIN);
    struct iovec v = { &c, 1 };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    errno = 0;
    CHECK_EQ(recvmsg(sv[0], &m, MSG_DONTWAIT), -1);
    CHECK_EQ(errno, EAGAIN);
    errno = 0;
    ssize_t r = preadv2(p[0], &v, 1, -1, RWF_NOWAIT);
    CHECK(r == -1 && (errno == EAGAIN || errno == EOPNOTSUPP));
    return NULL;
}

static void *blocking_preadv2(void *arg)
{
    (void)arg;
    char c = 0;
    struct iovec v = { &c, 1 };
    atomic_store(&calling, 1);
    ssize_t r = preadv2(p[0], &v, 1, -1, 0);
    CHECK_EQ(r, 1);
    CHECK_EQ(c, 'x');
    return NULL;
}

static void *foreign_pwritev2(void *arg)
{
    (void)arg;
    char c = 'y';
    struct iovec v = { &c, 1 };
    CHECK_EQ(pwritev2(q[1], &v, 1, -1, 0), 1);
    return NULL;
}

static void *parked_reader(void *arg)
{
    (void)arg;
    char c = 0;
    CHECK_EQ(read(q[0], &c, 1), 1);
    CHECK_EQ(c, 'y');
    return NULL;
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    CHECK_EQ(pipe(p), 0);
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, dontwait_calls, NULL), 0);
    CHECK_EQ(pthread_join(kt, NULL), 0);

    /* Written once the kernel thread is about to call: before the fix its
     * preadv2 said EAGAIN long before this write. */
    CHECK_EQ(pthread_create(&kt, NULL, blocking_preadv2, NULL), 0);
    while (!atomic_load(&calling))
        cap_sleep_ns(1000 * 1000);
    cap_sleep_ns(20 * 1000 * 1000);
    CHECK_EQ(write(p[1], "x", 1), 1);
    CHECK_EQ(pthread_join(kt, NULL), 0);

    /* A private pipe: the reader parks unarmed; only the foreign write's
     * wake-up can end its wait. */
    CHECK_EQ(pipe(q), 0);
    cap_thread_t r = spawn(parked_reader, NULL);
    cap_sleep_ns(20 * 1000 * 1000); /* the test holds whether or not it parked */
    CHECK_EQ(pthread_create(&kt, NULL, foreign_pwritev2, NULL), 0);
    join(r); /* parks main: the reader's worker is free to run it */
    CHECK_EQ(pthread_join(kt, NULL), 0);
    return 0;
}
