/* SPDX-License-Identifier: MIT */
/* Description: a handler that sends its own thread a signal its mask
 * holds (the handler's sa_mask, or the handler's own signal without
 * SA_NODEFER) does not have that signal's handler run nested in it: the
 * signal stays pending and runs once the handler returns, as Linux does.
 * The runtime raised it at once, so the second handler ran inside the
 * first, and a handler that sent itself its own signal recursed. One a
 * handler's mask lets through still runs nested, before the send
 * returns. On main and on a created thread, with cap_thread_kill
 * (pthread_kill) and raise. */
#include <signal.h>

#include "io/io_util.h"

static volatile sig_atomic_t in_first, nested, second_ran, self_depth, self_max, self_runs,
    open_ran, open_nested;
static bool use_raise;

static void send_self(int sig)
{
    if (use_raise)
        CHECK_EQ(raise(sig), 0);
    else
        CHECK_EQ(cap_thread_kill(cap_thread_self(), sig), 0);
}

static void on_usr2(int sig)
{
    (void)sig;
    if (in_first)
        nested = 1;
    second_ran++;
}

/* SIGUSR1's handler: SIGUSR2 in its sa_mask, SIGHUP not. */
static void on_usr1(int sig)
{
    (void)sig;
    in_first = 1;
    send_self(SIGUSR2);
    CHECK_EQ(second_ran, 0); /* held by the mask until we return */
    send_self(SIGHUP);
    CHECK_EQ(open_ran, 1); /* not held: ran nested, before the send returned */
    in_first = 0;
}

static void on_hup(int sig)
{
    (void)sig;
    if (in_first)
        open_nested = 1;
    open_ran++;
}

/* SIGWINCH's handler sends itself SIGWINCH once more, which
 * its own mask holds while it runs. */
static void on_winch(int sig)
{
    self_runs++;
    self_depth++;
    if (self_depth > self_max)
        self_max = self_depth;
    if (self_runs == 1)
        send_self(sig);
    self_depth--;
}

static void round_on_this_thread(void)
{
    for (int r = 0; r < 2; r++) {
        use_raise = r == 1;
        in_first = nested = second_ran = open_ran = open_nested = 0;
        send_self(SIGUSR1);
        CHECK_EQ(second_ran, 1); /* ran once SIGUSR1's handler returned */
        CHECK_EQ(nested, 0);
        CHECK_EQ(open_ran, 1);
        CHECK_EQ(open_nested, 1);
        self_depth = self_max = self_runs = 0;
        send_self(SIGWINCH);
        CHECK_EQ(self_runs, 2);
        CHECK_EQ(self_max, 1); /* one after the other, not nested */
    }
}

static void *on_thread(void *arg)
{
    (void)arg;
    round_on_this_thread();
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    sa.sa_handler = on_hup;
    CHECK_EQ(sigaction(SIGHUP, &sa, NULL), 0);
    sa.sa_handler = on_winch;
    CHECK_EQ(sigaction(SIGWINCH, &sa, NULL), 0);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);

    round_on_this_thread();
    for (int i = 0; i < 4; i++)
        join(spawn(on_thread, NULL));
    round_on_this_thread();
    return 0;
}
