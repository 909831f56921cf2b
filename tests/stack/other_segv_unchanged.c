/* SPDX-License-Identifier: MIT */
/* Description: a SIGSEGV that is not a stack overflow (a null pointer
 * write on a user thread) still kills the process by SIGSEGV, with no
 * overflow report: the runtime's handler passes it on unchanged. Under
 * AddressSanitizer, whose handler was installed before ours, it reaches
 * that handler (which reports and exits 1). And a handler the application
 * installs itself takes over. */
#include <capriccio.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "child.h"

static void *crash(void *arg)
{
    *(volatile int *)arg = 1;
    return NULL;
}

static sigjmp_buf back;
static void on_segv(int sig)
{
    siglongjmp(back, 1);
}

static void *caught(void *arg)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = on_segv;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
    if (sigsetjmp(back, 1) == 0) {
        *(volatile int *)arg = 1;
        return (void *)0;
    }
    return (void *)1;
}

int main(int argc, char **argv)
{
    cap_thread_t t;
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        CHECK_EQ(cap_thread_create(&t, NULL, crash, (void *)16), 0);
        cap_thread_join(t, NULL);
        return 3;
    }
    static char out[8192];
    int status = run_child("child", NULL, out, sizeof out);
#if defined(__SANITIZE_ADDRESS__)
    /* ASan reports, then exits 1, or aborts with abort_on_error=1 (as
     * `make test` runs it); either way the child must not have exited 0
     * or 3 and the report must be ASan's SEGV one. */
    bool asan_ended = (WIFEXITED(status) && WEXITSTATUS(status) == 1) ||
                      (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    if (!asan_ended || strstr(out, "AddressSanitizer: SEGV") == NULL) {
        fprintf(stderr, "child status %#x, wanted ASan's SEGV report; stderr:\n%s\n", status,
                out);
        return 1;
    }
#else
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
        fprintf(stderr, "child status %#x, wanted death by SIGSEGV; stderr:\n%s\n", status, out);
        return 1;
    }
#endif
    CHECK(strstr(out, "stack overflow") == NULL);

    void *ret;
    CHECK_EQ(cap_thread_create(&t, NULL, caught, (void *)16), 0);
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK_EQ((long)ret, 1);
    return 0;
}
