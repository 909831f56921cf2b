/* SPDX-License-Identifier: MIT */
/* Description: descriptors' readiness keeps arriving after a burst of
 * events larger than the backend can queue, and a close right after such
 * a burst really closes the file. Under CAP_NETIO=uring every byte that
 * reaches a watched socket posts a completion of its multishot poll (run
 * at the arming worker's next system call); more than the completion
 * queue holds between two harvests ends those polls (their last
 * completions wait in the kernel's overflow list), and the runtime
 * re-arms them. Each round: readers parked on PAIRS sockets, a kernel
 * thread sending them one byte at a time while user threads on the
 * workers make system calls without yielding (completions are posted but
 * nobody harvests), then each reader takes its bytes and closes its end;
 * the other end must then read EOF. A poll that outlives its descriptor's
 * close holds the file open, and that EOF never comes: it happened when a
 * re-arm raced the close on another worker (the close's removal found
 * nothing, then the re-arm added a poll of the closed life) and, far more
 * often, when the removal (POLL_REMOVE) met a wake-up in progress and gave
 * up with -EALREADY, leaving the multishot poll armed (a pipe written
 * through stdio and closed hung its reader, once in CI). */
#include <pthread.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { PAIRS = 48, BYTES = 100, ROUNDS = 100, SPINNERS = 2 };

static int near_end[PAIRS], far_end[PAIRS];
static atomic_int flooding;

static void *reader(void *arg)
{
    int i = (int)(intptr_t)arg;
    char buf[BYTES];
    read_exactly_n(near_end[i], buf, sizeof buf, BYTES);
    for (int j = 0; j < BYTES; j++)
        CHECK_EQ(buf[j], (char)(i + j));
    CHECK_EQ(close(near_end[i]), 0);
    return NULL;
}

/* A user thread that keeps its worker in system calls, never parking. */
static void *spinner(void *arg)
{
    (void)arg;
    while (atomic_load(&flooding))
        syscall(SYS_getppid);
    return NULL;
}

/* A kernel thread (glibc's, not the runtime's): plain blocking sends. */
static void *flooder(void *arg)
{
    (void)arg;
    for (int j = 0; j < BYTES; j++)
        for (int i = 0; i < PAIRS; i++)
            CHECK_EQ(send(far_end[i], &(char){ (char)(i + j) }, 1, 0), 1);
    atomic_store(&flooding, 0);
    return NULL;
}

int main(void)
{
    for (int round = 0; round < ROUNDS; round++) {
        cap_thread_t readers[PAIRS], spinners[SPINNERS];
        for (int i = 0; i < PAIRS; i++) {
            int sv[2];
            CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
            near_end[i] = sv[0];
            far_end[i] = sv[1];
            readers[i] = spawn(reader, (void *)(intptr_t)i);
        }
        cap_usleep(2000); /* the readers park: their sockets' polls are armed */
        atomic_store(&flooding, 1);
        for (int s = 0; s < SPINNERS; s++)
            spinners[s] = spawn(spinner, NULL);
        pthread_t kt;
        CHECK_EQ(pthread_create(&kt, NULL, flooder, NULL), 0);
        for (int s = 0; s < SPINNERS; s++)
            join(spinners[s]);
        CHECK_EQ(pthread_join(kt, NULL), 0); /* done: it ended the spinners */
        for (int i = 0; i < PAIRS; i++)
            join(readers[i]);
        /* Each close reached its file: EOF here, not a wait for ever. */
        for (int i = 0; i < PAIRS; i++) {
            struct pollfd p = { .fd = far_end[i], .events = POLLIN };
            CHECK_EQ(poll(&p, 1, 10000), 1);
            char c;
            CHECK_EQ(read(far_end[i], &c, 1), 0);
            CHECK_EQ(close(far_end[i]), 0);
        }
    }
    return 0;
}
