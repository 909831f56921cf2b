/* SPDX-License-Identifier: MIT */
/* Description: a process exits cleanly while other user threads are
 * runnable and allocate. Under AddressSanitizer (the sanitizer ctest
 * configuration) LeakSanitizer's check at exit locks the allocator, stops
 * the other kernel threads and spins on sched_yield; the library's
 * sched_yield switched to another user thread there, whose malloc (or the
 * scheduler's) waited for good on the lock the check held (CI: two tests
 * hung so; here one exit in three). The test re-runs itself CHILDREN
 * times; each run starts allocating yielders and returns from main, and
 * must exit 0 within WAIT_S (then it is killed and the test fails).
 * Without a sanitizer it checks that such exits are clean. */
#include <capriccio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { CHILDREN = 10, YIELDERS = 4, WAIT_S = 20 };

static void *allocate_and_yield(void *arg)
{
    (void)arg;
    for (;;) {
        free(malloc(100));
        cap_yield();
    }
    return NULL;
}

static int child(void)
{
    for (int i = 0; i < YIELDERS; i++) {
        cap_thread_t t;
        CHECK_EQ(cap_thread_create(&t, NULL, allocate_and_yield, NULL), 0);
    }
    cap_yield(); /* they run, and stay runnable */
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    for (int c = 0; c < CHILDREN; c++) {
        pid_t pid = fork();
        CHECK_GE(pid, 0);
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "child", (char *)NULL);
            _exit(127);
        }
        int status = 0;
        int waited_ms = 0;
        pid_t r;
        while ((r = waitpid(pid, &status, WNOHANG)) == 0 && waited_ms < WAIT_S * 1000) {
            usleep(10000);
            waited_ms += 10;
        }
        if (r == 0) {
            kill(pid, SIGKILL);
            CHECK_EQ(waitpid(pid, &status, 0), pid);
            fprintf(stderr, "run %d did not exit in %d s\n", c, WAIT_S);
            return 1;
        }
        CHECK_EQ(r, pid);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 0);
    }
    return 0;
}
