/* SPDX-License-Identifier: MIT */
/* Description: a signal handler left by siglongjmp (a thread raises
 * SIGUSR1, whose handler jumps back into it) ends there:
 *  - its kernel thread is no longer "in a handler", so the thread's next
 *    blocking read parks only itself: with one worker the thread that
 *    writes what it waits for runs meanwhile (before, the worker stayed
 *    in the handler's state for good and that read blocked the worker
 *    itself, which hung the test);
 *  - the delivery interrupts no other call: main, parked in read all the
 *    while, gets its byte, not EINTR (Linux gives the signal to the
 *    thread that raised it, whose handler jumped);
 *  - a later delivery whose handler returns still interrupts main. */
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>

#include "io/io_util.h"

enum { JUMPS = 5 };

static sigjmp_buf back;
static volatile sig_atomic_t returned_runs;
static atomic_int jumping = 1;
static int p[2], q[2];

static void on_usr1(int sig)
{
    (void)sig;
    if (atomic_load(&jumping))
        siglongjmp(back, 1);
    returned_runs++;
}

/* Writes what the jumper's read waits for; with one worker it runs only
 * once the jumper has parked. */
static void *writer(void *arg)
{
    (void)arg;
    CHECK_EQ(write(q[1], "q", 1), 1);
    return NULL;
}

static atomic_int main_done;

static void *jumper(void *arg)
{
    (void)arg;
    int jumps = 0;
    for (int i = 0; i < JUMPS; i++) {
        if (sigsetjmp(back, 1) == 0) {
            raise(SIGUSR1); /* to this kernel thread: the handler runs here */
            CHECK(!"the handler returned");
        }
        jumps++;
    }
    CHECK_EQ(jumps, JUMPS);
    cap_thread_t w = spawn(writer, NULL);
    char c = 0;
    CHECK_EQ(read(q[0], &c, 1), 1);
    CHECK_EQ(c, 'q');
    join(w);
    CHECK_EQ(write(p[1], "p", 1), 1); /* main's byte, after the jumps */
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = 0 }; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(pipe(q), 0);
    cap_thread_t j = spawn(jumper, NULL);
    char c = 0;
    CHECK_EQ(read(p[0], &c, 1), 1); /* parked through the jumps */
    CHECK_EQ(c, 'p');
    join(j);

    /* A handler that returns still interrupts a parked call. */
    atomic_store(&jumping, 0);
    struct signal_until until = { SIGUSR1, &main_done };
    cap_thread_t s = spawn(signal_until_done, &until);
    errno = 0;
    CHECK_EQ(read(p[0], &c, 1), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_GT(returned_runs, 0);
    atomic_store(&main_done, 1);
    join(s);
    return 0;
}
