/* SPDX-License-Identifier: MIT */
/* Description: without CAP_WORKERS, the runtime starts one worker per CPU
 * of the process's affinity mask (not per online CPU): under a one-CPU
 * mask, one worker; under the inherited mask, its CPU count. An explicit
 * CAP_WORKERS still wins over the mask. The test re-runs itself with each
 * mask and environment. */
#include <capriccio.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Runs this program again under mask, with CAP_WORKERS set to workers (or
 * unset: NULL); returns the worker count the child reports. */
static int workers_in_child(const cpu_set_t *mask, const char *workers)
{
    int pipefd[2];
    CHECK_EQ(pipe(pipefd), 0);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        if (sched_setaffinity(0, sizeof *mask, mask) != 0)
            _exit(126);
        if (workers != NULL)
            setenv("CAP_WORKERS", workers, 1);
        else
            unsetenv("CAP_WORKERS");
        setenv("CAP_AFFINITY_CHILD", "1", 1);
        execl("/proc/self/exe", "default_workers_follow_affinity", (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    char buf[32] = { 0 };
    size_t len = 0;
    ssize_t n;
    while (len < sizeof buf - 1 && (n = read(pipefd[0], buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)n;
    close(pipefd[0]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return atoi(buf);
}

int main(void)
{
    if (getenv("CAP_AFFINITY_CHILD") != NULL) {
        printf("%d\n", cap_worker_count());
        return 0;
    }
    cpu_set_t all;
    CHECK_EQ(sched_getaffinity(0, sizeof all, &all), 0);
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);

    CHECK_EQ(workers_in_child(&one, NULL), 1);
    CHECK_EQ(workers_in_child(&all, NULL), CPU_COUNT(&all));
    CHECK_EQ(workers_in_child(&one, "2"), 2);
    return 0;
}
