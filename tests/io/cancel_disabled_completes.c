/* SPDX-License-Identifier: MIT */
/* Description: with cancellation disabled, a thread parked in read, poll
 * or accept is not woken by a cancel request: the call completes normally
 * when the descriptor becomes ready, and the request acts at the first
 * cancellation point after cancellation is enabled again (a read of a
 * pipe that holds data, which it leaves unread), not at the enabling
 * itself. */
#include <stdatomic.h>
#include <sys/ioctl.h>

#include "io/io_util.h"

enum kind { READ, POLL, ACCEPT, NKINDS };
static const char *const names[] = { "read", "poll", "accept" };

static int rd, wr, listener, port, later_rd, later_wr;
static cap_sem_t going;
static long result;
static atomic_int enabled_again, cleaned;

static void note(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cleaned, 1);
}

static void *stubborn(void *arg)
{
    enum kind k = (enum kind)(long)arg;
    int old;
    CHECK_EQ(cap_thread_setcancelstate(CAP_CANCEL_DISABLE, &old), 0);
    CHECK_EQ(old, CAP_CANCEL_ENABLE);
    cap_cleanup_push(note, NULL);
    CHECK_EQ(cap_sem_post(&going), 0);
    char c = 0;
    struct pollfd p = { .fd = rd, .events = POLLIN };
    switch (k) {
    case READ: result = read(rd, &c, 1); break;
    case POLL: result = poll(&p, 1, -1); break;
    case ACCEPT: result = accept(listener, NULL, NULL); break;
    default: break;
    }
    CHECK_EQ(cap_thread_setcancelstate(CAP_CANCEL_ENABLE, NULL), 0);
    atomic_store(&enabled_again, 1);
    char d;
    long r = read(later_rd, &d, 1); /* the next point: acts, reads nothing */
    fprintf(stderr, "read after enabling returned %ld\n", r);
    exit(1);
    cap_cleanup_pop(0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(cap_sem_init(&going, 0, 0), 0);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    rd = p[0];
    wr = p[1];
    CHECK_EQ(pipe(p), 0);
    later_rd = p[0];
    later_wr = p[1];
    CHECK_EQ(write(later_wr, "L", 1), 1);
    listener = tcp_listener(SOCK_STREAM, 8, &port);

    for (long k = 0; k < NKINDS; k++) {
        result = -2;
        atomic_store(&enabled_again, 0);
        cap_thread_t t = spawn(stubborn, (void *)k);
        CHECK_EQ(cap_sem_wait(&going), 0);
        cap_sleep_ns(2000000); /* let it park (the outcome is the same if not) */
        CHECK_EQ(cap_thread_cancel(t), 0);
        cap_sleep_ns(2000000); /* a wrongly cancellable park would end now */
        int c = -1;
        if (k == ACCEPT) {
            c = tcp_connect(port);
            CHECK_GE(c, 0);
        } else {
            CHECK_EQ(write(wr, "x", 1), 1);
        }
        CHECK(join(t) == CAP_CANCELED);
        fprintf(stderr, "%s: completed with %ld, then cancelled\n", names[k], result);
        CHECK_EQ(atomic_load(&enabled_again), 1);
        CHECK_EQ(atomic_load(&cleaned), k + 1);
        if (k == ACCEPT) {
            CHECK_GE(result, 0);
            close((int)result);
            close(c);
        } else {
            CHECK_EQ(result, 1);
        }
        if (k == POLL) { /* poll left the byte */
            char x;
            CHECK_EQ(read(rd, &x, 1), 1);
        }
        int n = -1;
        CHECK_EQ(ioctl(later_rd, FIONREAD, &n), 0);
        CHECK_EQ(n, 1);
    }
    return 0;
}
