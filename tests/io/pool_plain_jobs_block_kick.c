/* SPDX-License-Identifier: MIT */
/* Description: a pool kernel thread accepts SIGURG (the runtime's kick)
 * only while it runs one of the calls a kick may end (FIFO open,
 * F_SETLKW, connect on an inherited socket), which retry a call a stray
 * SIGURG interrupted. While it runs any other job — here pclose waiting
 * for its child, after the same pool ran an F_SETLKW — SIGURG is blocked
 * on it, so neither a kick that arrives late (meant for the job the thread
 * ran before) nor the program's own SIGURG, whose SA_RESTART the kernel
 * no longer sees, can make that job's system call fail with EINTR. */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "io/io_util.h"

static char dir[] = "/tmp/cap-pool-XXXXXX";
static char fifo[64];

static void *closer(void *arg)
{
    (void)arg;
    char cmd[128];
    /* timeout: should the test die before it lets cat finish, cat does
     * not outlive it for long (it holds whatever descriptors we had). */
    snprintf(cmd, sizeof cmd, "exec timeout 60 cat %s >/dev/null", fifo);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    static int status;
    status = pclose(p); /* waits on the pool until cat sees a writer come and go */
    return &status;
}

/* The kernel thread of this process blocked in wait4 (pclose's wait), or 0. */
static pid_t waiting_task(void)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    pid_t found = 0;
    for (struct dirent *e; found == 0 && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], line[128] = { 0 };
        snprintf(path, sizeof path, "/proc/self/task/%s/syscall", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(line, sizeof line, f) != NULL && atoi(line) == SYS_wait4)
            found = (pid_t)atoi(e->d_name);
        fclose(f);
    }
    closedir(d);
    return found;
}

static unsigned long long blocked_mask(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    unsigned long long mask = 0;
    bool seen = false;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "SigBlk:", 7) == 0)
            seen = sscanf(line + 7, "%llx", &mask) == 1;
    fclose(f);
    CHECK(seen);
    return mask;
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK_EQ(mkfifo(fifo, 0600), 0);

    /* An uncontended F_SETLKW: the pool starts, reserves SIGURG, and one
     * of its threads runs a job the kick may end. */
    char lockfile[64];
    snprintf(lockfile, sizeof lockfile, "%s/lock", dir);
    int fd = open(lockfile, O_RDWR | O_CREAT, 0600);
    CHECK_GE(fd, 0);
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
    CHECK_EQ(fcntl(fd, F_SETLKW, &fl), 0);
    CHECK_EQ(close(fd), 0);

    cap_thread_t t = spawn(closer, NULL);
    pid_t tid = 0;
    for (int i = 0; i < 5000 && (tid = waiting_task()) == 0; i++)
        cap_sleep_ns(1000000);
    CHECK(tid != 0);
    unsigned long long mask = blocked_mask(tid);
    fprintf(stderr, "task %d waits in wait4 with SigBlk %016llx\n", (int)tid, mask);

    int w = open(fifo, O_WRONLY | O_NONBLOCK); /* ENXIO until cat opened it */
    for (int i = 0; w < 0 && i < 5000; i++) {
        CHECK_EQ(errno, ENXIO);
        cap_sleep_ns(1000000);
        w = open(fifo, O_WRONLY | O_NONBLOCK);
    }
    CHECK_GE(w, 0);
    CHECK_EQ(close(w), 0);
    int *status = join(t);
    CHECK(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    CHECK((mask >> (SIGURG - 1)) & 1); /* checked once cat has finished */

    unlink(fifo);
    unlink(lockfile);
    rmdir(dir);
    return 0;
}
