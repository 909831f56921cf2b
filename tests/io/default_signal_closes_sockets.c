/* SPDX-License-Identifier: MIT */
/* Description: a program ended by a signal's default action (kill -TERM,
 * Ctrl-C's SIGINT, a hang-up, SIGPIPE, SIGUSR1, a real-time signal, a
 * raise of its own) has closed its sockets by the time it is reaped, as
 * on NPTL, also the ones its threads were waiting on: the ports of its
 * listeners can be bound again at once and the peer of its Unix stream
 * socket reads end-of-file. The parent's wait sees the signal that ended
 * it. Under CAP_NETIO=uring the waits' polls held the files until the
 * kernel ended the dead ring's requests in a worker of its own, some
 * milliseconds after the reaping (bind: EADDRINUSE).
 *
 * The hidden handler that makes this so is not the program's business:
 * sigaction reports SIG_DFL (after a handler was set and taken back too,
 * and after a one-shot handler ran); SIG_IGN set by the program or
 * inherited through exec (nohup) still ignores. */
#include "io/held_sockets.h"

static void reports_default(int sig)
{
    struct sigaction old;
    CHECK_EQ(sigaction(sig, NULL, &old), 0);
    CHECK(old.sa_handler == SIG_DFL);
    CHECK_EQ(old.sa_flags & SA_SIGINFO, 0);
}

static void on_signal(int sig)
{
    (void)sig;
    char h = 'h';
    CHECK_EQ(write(1, &h, 1), 1);
}

/* What the child does with its dispositions before it says it is ready
 * (the parent's part is in rounds[] below). */
static void prepare(const char *how)
{
    if (strcmp(how, "plain") == 0) {
        reports_default(SIGTERM);
        reports_default(SIGRTMIN + 2);
    } else if (strcmp(how, "taken-back") == 0) {
        CHECK(signal(SIGTERM, on_signal) != SIG_ERR);
        CHECK(signal(SIGTERM, SIG_DFL) == on_signal);
        reports_default(SIGTERM);
    } else if (strcmp(how, "one-shot") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESETHAND;
        CHECK_EQ(sigaction(SIGTERM, &sa, NULL), 0);
    } else if (strcmp(how, "ignored") == 0) {
        CHECK(signal(SIGUSR2, SIG_IGN) == SIG_DFL);
    } else if (strcmp(how, "inherited-ignore") == 0) {
        struct sigaction old;
        CHECK_EQ(sigaction(SIGHUP, NULL, &old), 0);
        CHECK(old.sa_handler == SIG_IGN);
    } else if (strcmp(how, "raise") != 0) {
        CHECK(!"unknown mode");
    }
}

/* The child: its dispositions, the sockets and waits of held_sockets.h,
 * then a wait for the signal that ends it. */
static _Noreturn void child(pid_t parent, const char *how)
{
    prepare(how);
    held_child_setup(parent);
    if (strcmp(how, "raise") == 0)
        raise(SIGUSR1);
    for (;;)
        pause();
}

/* The handler's byte, from the child. */
static void read_handler_byte(int out)
{
    char h;
    CHECK_EQ(read(out, &h, 1), 1);
    CHECK_EQ(h, 'h');
}

struct round {
    const char *how;
    int sends[2];  /* signals the parent sends, in order (0: none) */
    int ends_by;   /* the signal the parent's wait must see */
};

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "child") == 0)
        child((pid_t)atoi(argv[2]), argv[3]);

    const struct round rounds[] = {
        { "plain", { SIGTERM, 0 }, SIGTERM },
        { "plain", { SIGINT, 0 }, SIGINT },
        { "plain", { SIGHUP, 0 }, SIGHUP },
        { "plain", { SIGPIPE, 0 }, SIGPIPE },
        { "plain", { SIGRTMIN + 2, 0 }, SIGRTMIN + 2 },
        { "raise", { 0, 0 }, SIGUSR1 },
        { "taken-back", { SIGTERM, 0 }, SIGTERM },
        /* The handler runs (the parent reads its byte), the second one
         * ends the process. */
        { "one-shot", { SIGTERM, SIGTERM }, SIGTERM },
        /* The lower number is delivered first: had it not been ignored,
         * the process would have ended by it. */
        { "ignored", { SIGUSR2, SIGTERM }, SIGTERM },
        { "inherited-ignore", { SIGHUP, SIGTERM }, SIGTERM },
    };

    /* The children inherit what this process ignores through exec: a
     * run from a background job of a shell (SIGINT and SIGQUIT ignored)
     * or under nohup (SIGHUP) would keep them alive, and the wait below
     * would not end. The rounds set what they need themselves. */
    const int sent[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2, SIGRTMIN + 2 };
    for (size_t i = 0; i < sizeof sent / sizeof sent[0]; i++)
        CHECK(signal(sent[i], SIG_DFL) != SIG_ERR);

    int ul = held_parent_listen();
    for (size_t i = 0; i < sizeof rounds / sizeof rounds[0]; i++) {
        const struct round *r = &rounds[i];
        bool nohup = strcmp(r->how, "inherited-ignore") == 0;
        if (nohup) /* exec keeps SIG_IGN */
            CHECK(signal(SIGHUP, SIG_IGN) == SIG_DFL);
        int out, peer, near_port, far_port;
        pid_t pid = held_start_child(argv[0], (char *)r->how, ul, &out, &peer, &near_port, &far_port);
        if (nohup)
            CHECK(signal(SIGHUP, SIG_DFL) == SIG_IGN);
        for (int k = 0; k < 2 && r->sends[k] != 0; k++) {
            CHECK_EQ(kill(pid, r->sends[k]), 0);
            if (strcmp(r->how, "one-shot") == 0 && k == 0)
                read_handler_byte(out);
        }
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != r->ends_by)
            fprintf(stderr, "round %zu (%s): status %#x, expected the end by signal %d\n", i,
                    r->how, status, r->ends_by);
        CHECK(WIFSIGNALED(status));
        CHECK_EQ(WTERMSIG(status), r->ends_by);
        held_check_released(near_port, far_port, peer); /* at once */
        CHECK_EQ(close(out), 0);
    }
    CHECK_EQ(close(ul), 0);
    return 0;
}
