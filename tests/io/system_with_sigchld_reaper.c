/* SPDX-License-Identifier: MIT */
/* Description: system() in a program that reaps its children in a
 * SIGCHLD handler returns the command's status, as glibc's does by
 * blocking SIGCHLD in the calling thread while it waits. The mask was
 * blocked only on the pool thread running the call, so the handler, run
 * for the calling thread, reaped the command first and system() said -1
 * with ECHILD (20 runs in 20). The handler still runs afterwards for
 * children it may reap. */
#include "io/io_util.h"

static atomic_int reaped;

static void on_chld(int sig)
{
    (void)sig;
    int saved = errno;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        atomic_fetch_add(&reaped, 1);
    errno = saved;
}

int main(void)
{
    install_handler(SIGCHLD, on_chld, SA_RESTART);
    for (int i = 0; i < 10; i++) {
        int r = system("exit 3");
        CHECK(r != -1);
        CHECK(WIFEXITED(r));
        CHECK_EQ(WEXITSTATUS(r), 3);
    }
    /* A child of the program's own is still the handler's. */
    pid_t p = fork();
    CHECK_GE(p, 0);
    if (p == 0)
        _exit(0);
    while (atomic_load(&reaped) == 0)
        cap_sleep_ns(1000000);
    CHECK_EQ(waitpid(p, NULL, WNOHANG), -1);
    CHECK_EQ(errno, ECHILD);
    return 0;
}
