/* SPDX-License-Identifier: MIT */
/* Description: a thread parked on a socket that becomes readable runs
 * soon even while another thread of its worker makes transfers that never
 * wait. The busy thread passes 16 bytes round a pipe (read, then write
 * back) without ever parking and counts its calls; a kernel thread the
 * runtime does not run sends a byte to the parked thread's socket once
 * the busy one is going, and notes the count just after. The parked
 * thread, once it has its byte, notes the count again: at most
 * MAX_CALLS_BEHIND calls may lie between. The busy thread yields every
 * CAP__IO_TURN_MAX (64) calls (src/io/io.h); before such a yield looked
 * for readiness, only every 61st switch of the worker did, and the woken
 * thread waited ~3,900 of its neighbour's calls.
 * The count is checked on one worker only: with two, the parked thread
 * may be on the other worker, which a loaded machine may not run for a
 * while as the busy one counts on. Every configuration still checks that
 * the byte arrives and the busy thread stops. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "io/io_util.h"

enum {
    CHUNK = 16,
    START_AFTER = 1000,      /* calls of the busy thread before the byte is sent */
    MAX_CALLS_BEHIND = 256,  /* four turns */
    GIVE_UP = 50 * 1000 * 1000,
};

static int busy_pipe[2], sv[2];
static atomic_long calls;
static atomic_long sent_at = -1, woken_at = -1;
static atomic_int waiting, stop;

static void *busy(void *arg)
{
    (void)arg;
    char buf[CHUNK];
    while (!atomic_load(&stop) && atomic_load(&calls) < GIVE_UP) {
        CHECK_EQ(read(busy_pipe[0], buf, sizeof buf), (ssize_t)sizeof buf);
        atomic_fetch_add(&calls, 1);
        CHECK_EQ(write(busy_pipe[1], buf, sizeof buf), (ssize_t)sizeof buf);
        atomic_fetch_add(&calls, 1);
    }
    return NULL;
}

static void *parked(void *arg)
{
    (void)arg;
    char c = 0;
    atomic_store(&waiting, 1);
    CHECK_EQ(read(sv[1], &c, 1), 1);
    atomic_store(&woken_at, atomic_load(&calls));
    atomic_store(&stop, 1);
    CHECK_EQ(c, 'r');
    return NULL;
}

/* A kernel thread: its send makes the socket readable from outside. */
static void *sender(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_thread_self(), 0);
    while (atomic_load(&calls) < START_AFTER)
        sched_yield();
    CHECK_EQ(send(sv[0], "r", 1, 0), 1);
    atomic_store(&sent_at, atomic_load(&calls));
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(busy_pipe), 0);
    char chunk[CHUNK] = "busy busy busy!";
    CHECK_EQ(write(busy_pipe[1], chunk, sizeof chunk), (ssize_t)sizeof chunk);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);

    cap_thread_t p = spawn(parked, NULL);
    while (!atomic_load(&waiting))
        cap_yield();
    for (int i = 0; i < 8; i++) /* on one worker: it parks before we go on */
        cap_yield();
    pthread_t k;
    CHECK_EQ(pthread_create(&k, NULL, sender, NULL), 0);
    cap_thread_t b = spawn(busy, NULL);
    join(b);
    join(p);
    CHECK_EQ(pthread_join(k, NULL), 0);

    long sent = atomic_load(&sent_at), woken = atomic_load(&woken_at);
    CHECK_GE(sent, START_AFTER);
    CHECK_GE(woken, 0);
    if (cap_worker_count() == 1)
        CHECK_LE(woken - sent, MAX_CALLS_BEHIND);
    return 0;
}
