/* SPDX-License-Identifier: MIT */
/* Description: once the offload pool exists the runtime keeps SIGURG (the
 * signal it kicks pool threads with) and emulates the program's
 * SA_RESETHAND for it in the handler trampoline. A one-shot SIGURG
 * handler (split-stack code with a 2 KiB frame) still runs as every other
 * handler does in linked mode: on the alternate signal stack with no stack
 * limit, the interrupted limit coming back afterwards, and only once per
 * installation. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linked_util.h"

enum { ROUNDS = 50 };

static void urg_self(void)
{
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGURG);
}

static void *run(void *arg)
{
    /* An uncontended F_SETLKW goes through the pool, which reserves SIGURG. */
    char path[] = "/tmp/cap-urg-XXXXXX";
    int fd = mkstemp(path);
    CHECK_GE(fd, 0);
    unlink(path);
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    CHECK_EQ(fcntl(fd, F_SETLKW, &fl), 0);
    close(fd);

    uintptr_t limit0 = stack_limit();
    for (int i = 0; i < ROUNDS; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = counting_handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        CHECK_EQ(sigaction(SIGURG, &sa, NULL), 0);
        urg_self(); /* delivered on the way out of tgkill */
        urg_self(); /* the disposition is back to the default: ignored */
        CHECK_EQ(stack_limit(), limit0);
        CHECK_EQ(handled, i + 1);
    }
    fprintf(stderr, "%ld signals, %ld on the alternate stack, %ld with no limit\n", handled,
            on_altstack, limit_zero);
    return arg;
}

int main(void)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, run, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
    CHECK_EQ(handled, ROUNDS);
    CHECK_EQ(on_altstack, handled);
    CHECK_EQ(limit_zero, handled);
    struct sigaction back;
    CHECK_EQ(sigaction(SIGURG, NULL, &back), 0);
    CHECK(back.sa_handler == SIG_DFL);
    return 0;
}
