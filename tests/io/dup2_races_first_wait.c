/* SPDX-License-Identifier: MIT */
/* Description: a reader begins to wait on a descriptor number while a
 * kernel thread keeps dup2()ing other sockets onto that number; after each
 * burst of dup2s a byte is written to the file the number names last, and
 * the reader must get it. The reader's first wait on a life arms it in the
 * backend. When that wait's attempt belonged to a life the dup2s had
 * already ended, its arm marked the newer life armed without arming it,
 * so every later wait of that life parked for ever (uring, poll); under
 * epoll the stale registration failed and the wait blocked the worker in
 * poll(2) with no limit. Every backend, one and two workers. */
#include <pthread.h>
#include <sched.h>

#include "io/io_util.h"

enum { ROUNDS = 300, MAX_WAIT_MS = 10000 };

static int target, p[2], q[2];
static atomic_long got;
static atomic_int go, done, stop;

static void *reader(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        char c;
        ssize_t r = read(target, &c, 1);
        if (r == 1)
            atomic_fetch_add(&got, 1);
        else
            CHECK(r < 0 && errno == EBADF); /* its life ended by a dup2 */
    }
    return NULL;
}

/* A kernel thread (glibc's): bursts of dup2 onto target, an even number,
 * so the number names p[0]'s file after each. Between bursts it waits for
 * go yielding (a plain spin took a CPU from the workers, 3-8 s a run
 * instead of under 1 on a loaded machine; a futex sleep starts the burst
 * too late to race the reader's first wait in most runs). */
static void *duper(void *arg)
{
    (void)arg;
    unsigned seed = 1;
    for (;;) {
        while (!atomic_load(&go))
            sched_yield();
        if (atomic_load(&stop))
            return NULL;
        int k = 2 * (1 + (int)(rand_r(&seed) % 20));
        for (int i = 0; i < k; i++)
            CHECK_EQ(dup2((i & 1) ? p[0] : q[0], target), target);
        atomic_store(&go, 0);
        atomic_store(&done, 1);
    }
}

int main(void)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, p), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, q), 0);
    target = dup(p[0]);
    CHECK_GE(target, 0);
    cap_thread_t rt = spawn(reader, NULL);
    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, duper, NULL), 0);
    for (int round = 0; round < ROUNDS; round++) {
        atomic_store(&done, 0);
        atomic_store(&go, 1);
        while (!atomic_load(&done))
            cap_usleep(50);
        long before = atomic_load(&got);
        cap_usleep(200); /* the reader waits on the life the burst left */
        CHECK_EQ(write(p[1], "x", 1), 1);
        int ms = 0;
        while (atomic_load(&got) == before && ms++ < MAX_WAIT_MS)
            cap_usleep(1000);
        CHECK(atomic_load(&got) != before); /* woken, not parked for ever */
    }
    atomic_store(&stop, 1);
    atomic_store(&go, 1);
    CHECK_EQ(pthread_join(kt, NULL), 0);
    CHECK_EQ(write(p[1], "x", 1), 1); /* the reader's last wait */
    join(rt);
    return 0;
}
