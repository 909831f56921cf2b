/* SPDX-License-Identifier: MIT */
/* Description: a burst of calls that wait on the offload pool starts one
 * pool thread per call, not more: 200 threads blocked in semop at once
 * add at most 200 kernel threads to the process. Before, a pool thread
 * that took a job of the burst started another for the jobs still
 * queued, though threads already starting would take them (they were not
 * counted): up to twice as many threads as calls. */
#include <dirent.h>
#include <sys/ipc.h>
#include <sys/sem.h>

#include "io/io_util.h"

enum { BLOCKERS = 200 };

static int sem;

static void *block_in_semop(void *arg)
{
    struct sembuf take = { 0, -1, 0 };
    CHECK_EQ(semop(sem, &take, 1), 0);
    return arg;
}

/* The process's kernel threads, io_uring's own workers (iou-*) left out:
 * the kernel starts those as it likes. */
static int kernel_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue; /* ended meanwhile */
        if (fgets(comm, sizeof comm, f) == NULL)
            comm[0] = '\0';
        fclose(f);
        n += strncmp(comm, "iou-", 4) != 0;
    }
    closedir(d);
    return n;
}

/* n threads blocked in semop at once, then let go. */
static void burst(int n, cap_thread_t *threads)
{
    for (int i = 0; i < n; i++)
        threads[i] = spawn(block_in_semop, NULL);
    while (semctl(sem, 0, GETNCNT) < n)
        cap_usleep(1000);
}

static void release(int n, cap_thread_t *threads)
{
    CHECK_EQ(semctl(sem, 0, SETVAL, n), 0);
    for (int i = 0; i < n; i++)
        join(threads[i]);
}

int main(void)
{
    alarm(40);
    sem = semget(IPC_PRIVATE, 1, 0600);
    CHECK_GE(sem, 0);
    static cap_thread_t threads[BLOCKERS];
    /* One call first: whatever the runtime starts with the pool's first
     * thread is there before the count (that thread stays, idle). */
    burst(1, threads);
    release(1, threads);
    int before = kernel_threads();
    burst(BLOCKERS, threads);
    int added = kernel_threads() - before;
    fprintf(stderr, "%d blocked calls, %d kernel threads added\n", BLOCKERS, added);
    CHECK_LE(added, BLOCKERS);
    CHECK_GE(added, BLOCKERS - 1); /* each blocked call has its own */
    release(BLOCKERS, threads);
    CHECK_EQ(semctl(sem, 0, IPC_RMID), 0);
    return 0;
}
