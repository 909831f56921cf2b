/* SPDX-License-Identifier: MIT */
/* Description: a worker with no threads of its own takes no part in I/O
 * (io/idle.c): while main, the only user thread, exchanges 40,000
 * messages over two pipes with a child process, the other worker's
 * kernel thread stays asleep. It used to hold the backend's instance, or
 * be woken to hold it when main's worker went to run main, and then woke
 * main's worker for an event: the library before made 1,111-5,477
 * voluntary context switches of the other kernel threads in 20,000
 * messages (six runs), and makes 0-147 now with six copies and three
 * CPU hogs on two CPUs (its re-checks: at most one a millisecond while
 * main's worker is awake). The test allows one in 40 messages. Two
 * workers. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "io/io_util.h"

enum { WARMUP = 200, EXCHANGES = 40000 };

/* Voluntary context switches of every kernel thread of the process but
 * the main one (main's worker) and io_uring's own workers (iou-*), which
 * the kernel runs as it likes. */
static long others_switches(void)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    long sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == getpid())
            continue;
        char path[300], line[128];
        bool kernels = false;
        long n = 0;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue; /* it ended meanwhile */
        while (fgets(line, sizeof line, f) != NULL) {
            if (strncmp(line, "Name:\tiou-", 10) == 0)
                kernels = true;
            if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
                n = atol(line + 24);
        }
        fclose(f);
        if (!kernels)
            sum += n;
    }
    closedir(d);
    return sum;
}

static void exchange(int to, int from, int n)
{
    for (int i = 0; i < n; i++) {
        char c = (char)i;
        CHECK_EQ(write(to, &c, 1), 1);
        char back;
        CHECK_EQ(read(from, &back, 1), 1);
        CHECK_EQ(back, c);
    }
}

int main(void)
{
    int down[2], up[2];
    CHECK_EQ(pipe(down), 0);
    CHECK_EQ(pipe(up), 0);
    pid_t pid = fork();
    CHECK_NE(pid, -1);
    if (pid == 0) { /* the echo */
        close(down[1]);
        close(up[0]);
        char c;
        while (read(down[0], &c, 1) == 1)
            if (write(up[1], &c, 1) != 1)
                _exit(3);
        _exit(0);
    }
    close(down[0]);
    close(up[1]);

    exchange(down[1], up[0], WARMUP);
    long before = others_switches();
    exchange(down[1], up[0], EXCHANGES);
    long switches = others_switches() - before;
    fprintf(stderr, "the other kernel threads: %ld voluntary switches in %d exchanges\n", switches,
            EXCHANGES);
    CHECK_LT(switches, EXCHANGES / 40);

    close(down[1]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(up[0]);
    return 0;
}
