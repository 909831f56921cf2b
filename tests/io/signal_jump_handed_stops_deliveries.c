/* SPDX-License-Identifier: MIT */
/* Description: signals sent to a thread that blocks them wait in its set;
 * pthread_sigmask that lets them in delivers them before it returns, one
 * after the other. When the first one's handler siglongjmps, its jump is
 * handed to the thread and made as pthread_sigmask returns (io/sigsafe.h).
 * From the handler on the program has left the call: the handler's
 * sa_mask blocks the second signal while it runs, and the jump puts back
 * the mask sigsetjmp saved, where both are blocked. So the second one
 * stays pending, as under Linux, and its handler runs only once the
 * thread lets it in again. The old code went on delivering after the jump
 * was handed: the second handler ran inside the abandoned call, before
 * the jump (its own jump, had it made one, dropped). */
#include <setjmp.h>
#include <signal.h>

#include "io/io_util.h"

static sigjmp_buf env; /* one thread at a time */
static volatile sig_atomic_t second_ran;

static void first(int sig)
{
    (void)sig;
    siglongjmp(env, 1);
}

static void second(int sig)
{
    (void)sig;
    second_ran = 1;
}

static void both(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGUSR2);
}

/* Both signals pending while blocked, then let in: the first jumps.
 * arg: not NULL on the only thread, whose mask the jump puts back whole
 * (with others, the part of it that every thread blocks, which sigsetjmp
 * saw: docs/pthread-compat.md). */
static void *deliver_both(void *arg)
{
    sigset_t set, pending;
    both(&set);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    second_ran = 0;
    if (sigsetjmp(env, 1) == 0) { /* saved with both blocked */
        CHECK_EQ(raise(SIGUSR1), 0);
        CHECK_EQ(raise(SIGUSR2), 0);
        (void)pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        CHECK(!"the first handler's jump was not made");
    }
    CHECK_EQ(second_ran, 0);
    if (arg != NULL) { /* the only thread: the jump put back its own mask */
        CHECK_EQ(sigpending(&pending), 0);
        CHECK(sigismember(&pending, SIGUSR2));
        CHECK(!sigismember(&pending, SIGUSR1));
    }
    /* Let in: now it runs. */
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &usr2, NULL), 0);
    CHECK_EQ(second_ran, 1);
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = first;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2); /* held while the first handler runs */
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    install_handler(SIGUSR2, second, 0);

    deliver_both("only"); /* on main, alone */
    /* Main blocks both too: the workers' mask, which sigsetjmp saves in
     * the other threads, then blocks both (docs/pthread-compat.md). */
    sigset_t set;
    both(&set);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &set, NULL), 0);
    join(spawn(deliver_both, NULL));
    return 0;
}
