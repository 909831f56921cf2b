/* SPDX-License-Identifier: MIT */
/* Description: a program started under a small address-space limit
 * (RLIMIT_AS, `ulimit -v`) runs, as it does on NPTL: the stack pool
 * reserves regions of a sixteenth of the limit rather than 1 GiB, so
 * under 96 MiB the runtime starts, 100 threads on the default 256 KiB
 * stacks run and are joined. Before, the first region (1 GiB) did not
 * fit and the runtime died at start-up ("cannot allocate the scheduler
 * stack"); coreutils' tests that find the smallest `ulimit -v` a command
 * runs under skipped for that. The same again on 16 workers: each
 * worker's kernel thread has a stack of the scheduler's size (256 KiB),
 * where glibc's default of 8 MiB each made 15 of them more than the limit
 * ("cannot start worker"). The limit is set, then the program runs
 * itself again under it. Skipped under ASan, whose shadow memory needs
 * terabytes of address space. */
#include <capriccio.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { THREADS = 100 };
#define LIMIT_BYTES ((rlim_t)96 << 20)

static void *run(void *arg)
{
    CHECK_EQ(cap_sleep_ns(1000000), 0);
    return (void *)((intptr_t)arg * 3);
}

static int child(void)
{
    struct rlimit rl;
    CHECK_EQ(getrlimit(RLIMIT_AS, &rl), 0);
    CHECK_EQ(rl.rlim_cur, LIMIT_BYTES); /* it runs under the limit */
    static cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, run, (void *)i), 0);
    for (intptr_t i = 0; i < THREADS; i++) {
        void *ret;
        CHECK_EQ(cap_thread_join(t[i], &ret), 0);
        CHECK_EQ((intptr_t)ret, i * 3);
    }
    return 0;
}

/* Runs this program again as "child" under the limit rl, on `workers`
 * workers (NULL: as many as this one was given), and checks it succeeds. */
static void run_child_under(const struct rlimit *rl, const char *self, const char *workers)
{
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        if (workers != NULL && setenv("CAP_WORKERS", workers, 1) != 0)
            _exit(89);
        /* One malloc arena: glibc reserves 64 MiB of address space for
         * each arena a kernel thread's malloc makes, so how many workers'
         * threads allocate first (which the host's load decides) would
         * decide whether the limit is met; this test is about stacks. */
        if (setenv("MALLOC_ARENA_MAX", "1", 1) != 0)
            _exit(88);
        if (setrlimit(RLIMIT_AS, rl) != 0)
            _exit(90);
        execl("/proc/self/exe", self, "child", (char *)NULL);
        _exit(91);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "child on %s workers: status %#x\n", workers != NULL ? workers : "the test's",
                (unsigned)status);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv)
{
#ifdef __SANITIZE_ADDRESS__
    (void)argc;
    (void)argv;
    return 77;
#else
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    struct rlimit rl;
    CHECK_EQ(getrlimit(RLIMIT_AS, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < LIMIT_BYTES)
        return 77;
    rl.rlim_cur = LIMIT_BYTES;
    run_child_under(&rl, argv[0], NULL); /* the test's own worker count */
    run_child_under(&rl, argv[0], "16");
    return 0;
#endif
}
