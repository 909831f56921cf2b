/* SPDX-License-Identifier: MIT */
/* Description: under linked stacks, a handler that siglongjmps out of an
 * async-signal-safe call (read, write, poll, fcntl, dup2) that a thread
 * makes deep in linked chunks: the jump is handed to the thread and made
 * as the call returns (io/sigsafe.h), from the chunk the call ran on, back
 * to a frame on the first chunk. Every chunk in between is unlinked (as
 * many unlinks as links), the first chunk's limit is back after each
 * landing, and the calls and the pipe still work afterwards. The signal
 * is a timer aimed at the kernel thread the caller runs on, so the
 * handler interrupts it in the middle of those calls. */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "linked_util.h"

enum { DEPTH = 40, LANDINGS = 300, SPARE_FD = 200 };

static sigjmp_buf env;
static volatile sig_atomic_t armed;
static int p[2];

static void jump_back(int sig)
{
    (void)sig;
    if (armed)
        siglongjmp(env, 1);
}

/* At the bottom of the dive: calls that run the runtime's code, until a
 * jump ends them. */
static long calls(long unused)
{
    (void)unused;
    for (;;) {
        char c = 'x';
        CHECK_EQ(write(p[1], &c, 1), 1);
        CHECK_EQ(read(p[0], &c, 1), 1);
        struct pollfd pf = { .fd = p[0], .events = POLLIN };
        CHECK(poll(&pf, 1, 0) >= 0);
        CHECK(fcntl(p[0], F_GETFL) >= 0);
        CHECK_EQ(dup2(p[1], SPARE_FD), SPARE_FD);
    }
    return 0;
}

static void *diver(void *arg)
{
    (void)arg;
    timer_t timer = timer_on_this_kthread(SIGALRM, 0);
    uintptr_t limit0 = stack_limit();
    static volatile int landed;
    if (sigsetjmp(env, 1) != 0) {
        landed++;
        CHECK_EQ(stack_limit(), limit0);
    }
    if (landed == 0) {
        struct itimerspec every = { { 0, 200000 }, { 0, 200000 } };
        CHECK_EQ(timer_settime(timer, 0, &every, NULL), 0);
    }
    if (landed < LANDINGS) {
        armed = 1;
        dive(DEPTH, calls, 0);
    }
    armed = 0;
    CHECK_EQ(timer_delete(timer), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(pipe(p), 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = jump_back;
    CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
    cap_thread_t t;
    /* Only the diver takes the timer's signals: the handler jumps into its
     * frames, and a signal that finds its worker with no thread running is
     * kept for a thread that accepts it (io/sigroute.h), which would
     * otherwise be main, waiting in the join. */
    sigset_t only_diver, open_mask;
    sigemptyset(&only_diver);
    sigaddset(&only_diver, SIGALRM);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &only_diver, &open_mask), 0);
    cap_thread_attr_t da;
    CHECK_EQ(cap_thread_attr_init(&da), 0);
    CHECK_EQ(cap_thread_attr_setsigmask(&da, &open_mask), 0);
    CHECK_EQ(cap_thread_create(&t, &da, diver, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);

    /* A byte a jump left between its write and read, then the pipe. */
    char c;
    struct pollfd pf = { .fd = p[0], .events = POLLIN };
    while (poll(&pf, 1, 0) == 1)
        CHECK_EQ(read(p[0], &c, 1), 1);
    c = 'y';
    CHECK_EQ(write(p[1], &c, 1), 1);
    CHECK_EQ(read(p[0], &c, 1), 1);
    CHECK_EQ(c, 'y');
    cap_stack_stats_t st = stats();
    fprintf(stderr, "%llu links, %llu unlinks\n", (unsigned long long)st.chunks_linked,
            (unsigned long long)st.chunks_unlinked);
    CHECK_GE(st.chunks_linked, LANDINGS);
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    CHECK_EQ(close(SPARE_FD), 0);
    return 0;
}
