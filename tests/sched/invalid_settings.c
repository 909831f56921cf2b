/* SPDX-License-Identifier: MIT */
/* Description: invalid settings stop the program at start-up with status
 * 2 and a message naming the variable and listing the valid values; valid
 * ones are accepted. The test re-runs itself with each environment. */
#include <capriccio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

struct child_result {
    int status;
    char err[2048];
};

static struct child_result run_self(const char *var, const char *value)
{
    int pipefd[2];
    CHECK_EQ(pipe(pipefd), 0);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        setenv(var, value, 1);
        setenv("CAP_SETTINGS_CHILD", "1", 1);
        execl("/proc/self/exe", "invalid_settings", (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    struct child_result r = { 0 };
    size_t len = 0;
    ssize_t n;
    while ((n = read(pipefd[0], r.err + len, sizeof r.err - 1 - len)) > 0)
        len += (size_t)n;
    close(pipefd[0]);
    CHECK_EQ(waitpid(pid, &r.status, 0), pid);
    return r;
}

static void expect_rejected(const char *var, const char *value, const char *valid_hint)
{
    struct child_result r = run_self(var, value);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 2) {
        fprintf(stderr, "%s=%s: expected exit 2, got status %d\n", var, value, r.status);
        exit(1);
    }
    if (strstr(r.err, var) == NULL || strstr(r.err, valid_hint) == NULL) {
        fprintf(stderr, "%s=%s: message lacks '%s' or '%s': %s\n", var, value, var,
                valid_hint, r.err);
        exit(1);
    }
}

static void expect_accepted(const char *var, const char *value)
{
    struct child_result r = run_self(var, value);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
        fprintf(stderr, "%s=%s: expected exit 0, got status %d: %s\n", var, value,
                r.status, r.err);
        exit(1);
    }
}

int main(void)
{
    if (getenv("CAP_SETTINGS_CHILD") != NULL)
        return cap_worker_count() >= 1 ? 0 : 3; /* the runtime accepted them */

    expect_rejected("CAP_WORKERS", "0", "1 to 1024");
    expect_rejected("CAP_WORKERS", "two", "1 to 1024");
    expect_rejected("CAP_WORKERS", "5000", "1 to 1024");
    expect_rejected("CAP_WORKERS", "", "1 to 1024");
    expect_rejected("CAP_STACK_SIZE", "1K", "16384");
    expect_rejected("CAP_STACK_SIZE", "64Q", "16384");
    expect_rejected("CAP_STACK_SIZE", "4G", "16384");
    expect_rejected("CAP_SCHED", "lifo", "fifo");
    expect_rejected("CAP_SCHED", "resource", "fifo");
    expect_rejected("CAP_SCHED", "cohort", "fifo");
    expect_rejected("CAP_MIGRATE", "yes", "0");
    expect_rejected("CAP_POOL_THREADS", "0", "1 to 65536");
    expect_rejected("CAP_POOL_THREADS", "100000", "1 to 65536");
    expect_rejected("CAP_POOL_THREADS", "4K", "1 to 65536");

    expect_accepted("CAP_WORKERS", "3");
    expect_accepted("CAP_STACK_SIZE", "64K");
    expect_accepted("CAP_STACK_SIZE", "1M");
    expect_accepted("CAP_SCHED", "fifo");
    expect_accepted("CAP_MIGRATE", "1");
    expect_accepted("CAP_POOL_THREADS", "64");
    return 0;
}
