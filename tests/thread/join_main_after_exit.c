/* SPDX-License-Identifier: MIT */
/* Description: main() may end with cap_thread_exit (pthread_exit) and
 * another thread may then join it, as POSIX allows and glibc does: the
 * join returns 0 with main's exit value, whether the joiner was already
 * waiting when main exited or came after. (It used to wait forever and
 * the deadlock report ended the process.) Both orders run, one in a fork
 * child and one in the parent. */
#include <capriccio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static cap_thread_t main_handle;

static void *join_main(void *arg)
{
    (void)arg;
    void *ret = NULL;
    CHECK_EQ(cap_thread_join(main_handle, &ret), 0);
    CHECK_EQ((intptr_t)ret, 42);
    exit(0);
}

/* Starts the joiner and ends main; with wait_first, lets the joiner
 * reach its join before main exits (on one worker, a yield runs it). */
static _Noreturn void run(bool wait_first)
{
    main_handle = cap_thread_self();
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, NULL, join_main, NULL), 0);
    if (wait_first)
        for (int i = 0; i < 10; i++)
            cap_yield();
    cap_thread_exit((void *)42);
}

int main(void)
{
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0)
        run(true);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    run(false);
}
