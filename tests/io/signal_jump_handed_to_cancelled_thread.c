/* SPDX-License-Identifier: MIT */
/* Description: a handler's jump into another thread's frames is handed to
 * that thread when it is inside a call (src/stack/signal.c, "Jumps into
 * another thread"; io/sigsafe.h), in a record from a pool of 256, freed
 * as the thread makes the jump. A thread whose call ends by a
 * cancellation instead (the cancel came first) never makes it: the jump
 * is dropped with the thread, its record freed. The old code left the
 * record taken for good (and every wrapper on the slow path of
 * cap__sig_take_jump); after 256 such threads no record was left and the
 * program stopped ("more than 256 jumps ... wait to be made").
 *
 * Each round: a reader parks in read() of an empty pipe, main cancels it
 * (it is woken, not yet run: one worker), then a signal whose handler
 * runs on main jumps into the reader's frames. The reader either makes
 * the jump (and returns) or is cancelled; both are fine. One worker: main
 * runs only once the reader parked (README, Limits: a jump into a thread
 * that runs on another worker is refused). */
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { ROUNDS = 300 };

static sigjmp_buf reader_env; /* one reader at a time */
static int p[2], q[2];

static void jump_into_reader(int sig)
{
    (void)sig;
    siglongjmp(reader_env, 1);
}

static void *reader(void *arg)
{
    (void)arg;
    if (sigsetjmp(reader_env, 1) != 0)
        return NULL; /* the jump was made */
    char c = 'r';
    CHECK_EQ(write(q[1], &c, 1), 1); /* main runs once this thread parks */
    (void)read(p[0], &c, 1);
    CHECK(!"read returned: nothing writes the pipe");
    return NULL;
}

/* sig queued to this kernel thread as a process signal: its handler runs
 * as the system call returns, on main. */
int main(void)
{
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(pipe(q), 0);
    install_handler(SIGUSR1, jump_into_reader, 0);
    int jumped = 0, cancelled = 0;
    for (int i = 0; i < ROUNDS; i++) {
        cap_thread_t t = spawn(reader, NULL);
        char c;
        CHECK_EQ(read(q[0], &c, 1), 1);
        CHECK_EQ(cap_thread_cancel(t), 0);
        CHECK_EQ(queue_here(SIGUSR1), 0);
        void *r = join(t);
        if (r == CAP_CANCELED)
            cancelled++;
        else
            jumped++;
    }
    printf("%d jumps made, %d threads cancelled first\n", jumped, cancelled);
    return 0;
}
