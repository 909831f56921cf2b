/* SPDX-License-Identifier: MIT */
/* Description: a read() of a regular file returns what the kernel's read
 * returns, also when that is short of the request before end of file:
 * ftrace's trace_pipe (a regular file) returns the events it has and
 * waits only when it has none. The disk layer continued every short read,
 * so the read waited there for more events (for good if none came).
 * Runs in a trace instance of its own (root and tracefs; skipped
 * without). After 30 s a helper writes end markers until the read
 * returns, so the old library fails with them in the data (its read
 * filled the buffer) rather than hanging. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "io/io_util.h"

static char dir[128];
static atomic_int returned;

static void put_marker(const char *text)
{
    char path[192];
    snprintf(path, sizeof path, "%s/trace_marker", dir);
    int fd = open(path, O_WRONLY);
    CHECK_GE(fd, 0);
    CHECK_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    CHECK_EQ(close(fd), 0);
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (int i = 0; i < 30 && !atomic_load(&returned); i++)
        sleep(1);
    while (!atomic_load(&returned)) { /* fills the old library's read */
        put_marker("capriccio-end\n");
        usleep(1000);
    }
    return NULL;
}

int main(void)
{
    snprintf(dir, sizeof dir, "/sys/kernel/tracing/instances/capriccio-%d", (int)getpid());
    if (mkdir(dir, 0700) != 0) {
        printf("no trace instance (%s): skipped\n", strerror(errno));
        return 77;
    }
    char path[192];
    snprintf(path, sizeof path, "%s/trace_pipe", dir);
    int fd = open(path, O_RDONLY);
    CHECK_GE(fd, 0);
    struct stat st;
    CHECK_EQ(fstat(fd, &st), 0);
    CHECK(S_ISREG(st.st_mode));
    put_marker("capriccio-first\n");
    cap_thread_t w = spawn(watchdog, NULL);
    static char b[4096];
    ssize_t r = read(fd, b, sizeof b - 1);
    atomic_store(&returned, 1);
    join(w);
    CHECK_EQ(close(fd), 0);
    CHECK_EQ(rmdir(dir), 0); /* before the checks: no instance left behind */
    CHECK_GT(r, 0);
    CHECK_LT(r, (ssize_t)sizeof b - 1);
    b[r] = '\0';
    CHECK(strstr(b, "capriccio-first") != NULL);
    CHECK(strstr(b, "capriccio-end") == NULL);
    printf("ok\n");
    return 0;
}
