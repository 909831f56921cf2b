/* SPDX-License-Identifier: MIT */
/* Description: with a handler installed with SA_RESTART, a read parked on
 * a pipe is restarted (it never sees EINTR and later returns the data),
 * while poll and nanosleep still fail with EINTR, and so does recv on a
 * socket with SO_RCVTIMEO (signal(7): a socket timeout makes the call
 * interruptible whatever SA_RESTART says). */
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>
#include <time.h>

#include "io/io_util.h"

static volatile sig_atomic_t count;
static void on_usr1(int sig)
{
    (void)sig;
    count++;
}

static int rd, poll_rd, sock;
static atomic_int reader_in, reader_done, other_done;
static long reader_result, other_result;
static int other_err;
static char byte;

static void *reader(void *arg)
{
    (void)arg;
    atomic_store(&reader_in, 1);
    reader_result = read(rd, &byte, 1);
    atomic_store(&reader_done, 1);
    return NULL;
}

static void *other(void *arg)
{
    long r = -2;
    char buf[4];
    switch ((long)arg) {
    case 0: {
        struct pollfd p = { .fd = poll_rd, .events = POLLIN };
        r = poll(&p, 1, -1);
        break;
    }
    case 1: {
        struct timespec ts = { .tv_sec = 1000 };
        r = nanosleep(&ts, NULL);
        break;
    }
    case 2: r = recv(sock, buf, sizeof buf, 0); break;
    }
    other_err = errno;
    other_result = r;
    atomic_store(&other_done, 1);
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    int p1[2], p2[2], sv[2];
    CHECK_EQ(pipe(p1), 0);
    CHECK_EQ(pipe(p2), 0);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct timeval tv = { .tv_sec = 1000 };
    CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    rd = p1[0];
    poll_rd = p2[0];
    sock = sv[0];

    /* The reader parks first, so it is the longest waiter: were it
     * eligible, every signal below would go to it rather than to the
     * other call. */
    cap_thread_t r = spawn(reader, NULL);
    while (!atomic_load(&reader_in))
        cap_yield();
    cap_sleep_ns(20000000); /* let it reach its wait (either order is correct) */

    for (long k = 0; k < 3; k++) {
        atomic_store(&other_done, 0);
        cap_thread_t t = spawn(other, (void *)k);
        while (!atomic_load(&other_done)) {
            CHECK_EQ(kill(getpid(), SIGUSR1), 0);
            cap_sleep_ns(1000000);
        }
        join(t);
        fprintf(stderr, "call %ld: %ld, errno %d\n", k, other_result, other_err);
        CHECK_EQ(other_result, -1);
        CHECK_EQ(other_err, EINTR);
        CHECK_EQ(atomic_load(&reader_done), 0); /* restarted, still waiting */
    }
    CHECK_GT(count, 0);
    CHECK_EQ(write(p1[1], "x", 1), 1);
    join(r);
    CHECK_EQ(reader_result, 1);
    CHECK_EQ(byte, 'x');
    return 0;
}
