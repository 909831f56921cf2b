/* SPDX-License-Identifier: MIT */
/* Description: a SIGSEGV or SIGBUS sent to the process or to a thread
 * (raise, pthread_kill, kill) while the program leaves it at SIG_DFL
 * ends the process by that signal, as the kernel's default action does;
 * under SIG_IGN it is ignored. The runtime's overflow handler used to
 * restore SIG_DFL and return, as it does for a fault whose instruction
 * re-runs: a sent signal has none, so it was lost and the program went
 * on (CPython's faulthandler._sigsegv, raise(SIGSEGV), returned). Also
 * after the program installed a handler and put back the disposition
 * sigaction reported (faulthandler's enable and disable). */
#include <capriccio.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "child.h"

static int sig_of(const char *mode)
{
    return strstr(mode, "bus") != NULL ? SIGBUS : SIGSEGV;
}

static void on_sig(int sig)
{
    (void)sig;
}

static void *send_it(void *arg)
{
    const char *mode = arg;
    int sig = sig_of(mode);
    if (strstr(mode, "kill-") == mode)
        kill(getpid(), sig);
    else if (strstr(mode, "self-") == mode)
        cap_thread_kill(cap_thread_self(), sig);
    else
        raise(sig);
    return NULL;
}

static int child(const char *mode)
{
    int sig = sig_of(mode);
    if (strstr(mode, "restored") != NULL) {
        struct sigaction sa = { 0 }, old;
        sa.sa_handler = on_sig;
        sa.sa_flags = SA_NODEFER | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        CHECK_EQ(sigaction(sig, &sa, &old), 0);
        CHECK_EQ(sigaction(sig, &old, NULL), 0);
    }
    if (strstr(mode, "ignored") != NULL)
        CHECK(signal(sig, SIG_IGN) != SIG_ERR);
    if (strstr(mode, "thread") != NULL) {
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, send_it, (void *)mode), 0);
        CHECK_EQ(cap_thread_join(t, NULL), 0);
    } else {
        send_it((void *)mode);
    }
    return 3; /* went on */
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return child(argv[1]);
    static const char *const modes[] = {
        "raise-segv",         "raise-bus",         "raise-segv-thread", "raise-bus-thread",
        "self-segv-thread",   "kill-segv",         "kill-segv-thread",  "raise-segv-restored",
        "raise-bus-restored", "raise-segv-ignored",
    };
    static char out[8192];
    int failed = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        const char *mode = modes[i];
        int status = run_child(mode, NULL, out, sizeof out);
        bool ok;
        if (strstr(mode, "ignored") != NULL) {
            ok = WIFEXITED(status) && WEXITSTATUS(status) == 3;
        } else {
#if defined(__SANITIZE_ADDRESS__)
            /* ASan's handler, installed before ours, gets the signal:
             * it reports and exits 1 (or aborts). Not going on is what
             * counts. */
            ok = !(WIFEXITED(status) && (WEXITSTATUS(status) == 3 || WEXITSTATUS(status) == 0));
#else
            ok = WIFSIGNALED(status) && WTERMSIG(status) == sig_of(mode);
#endif
        }
        if (!ok) {
            fprintf(stderr, "%s: child status %#x; stderr:\n%s\n", mode, status, out);
            failed = 1;
        }
        CHECK(strstr(out, "stack overflow") == NULL);
    }
    return failed;
}
