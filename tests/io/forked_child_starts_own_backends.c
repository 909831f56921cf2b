/* SPDX-License-Identifier: MIT */
/* Description: a fork's child lets go of the parent's I/O instances and
 * starts its own, of the kinds the parent chose, as a process does at
 * start-up. Four generations, each forked by the one before after it
 * made disk rings (O_DIRECT reads on its workers) and waited on pipes:
 * right after its fork, each generation holds exactly the runtime's own
 * descriptors (by kind: epoll or io_uring instance, eventfds, /proc
 * files) that the first process held when main began. Before, a child
 * kept every instance of its parent open (epoll set, kick and signal
 * eventfds, io_uring rings) beside its new epoll set: 3 or more
 * descriptors more per generation, a parent's ring (and the files its
 * polls hold) kept alive by its children, and always epoll, whatever
 * CAP_NETIO said. Then, in each child, O_DIRECT reads by threads return
 * their blocks and, on one worker, park: a yielding thread runs during
 * each (before, a child's disk calls blocked its worker, whatever
 * CAP_DISKIO said). Under CAP_DISKIO=blocking, which blocks the worker
 * by design, or without O_DIRECT, the reads are of a cached file and
 * only the descriptors are checked. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "io/io_util.h"

enum { GENS = 4, BLOCK = 4096, BLOCKS = 64, READERS = 4, READS = 8, KINDS_CAP = 2048 };

static int base, top;
static int dfd = -1;   /* the file read; O_DIRECT unless `direct` is false */
static bool direct;
static char first_kinds[KINDS_CAP]; /* the own descriptors' kinds when main began */
static struct ticker tk;
static atomic_int parked_ok; /* reads during which the ticker ran */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The kinds of the runtime's own descriptors, sorted, comma-separated:
 * a /proc file by its last component (the pid differs). */
static void own_kinds(char *out)
{
    static char names[64][96];
    char *sorted[64];
    int n = 0;
    for (int fd = base; fd < top; fd++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(path, names[n], sizeof names[n] - 1);
        if (len < 0)
            continue;
        names[n][len] = '\0';
        if (strncmp(names[n], "/proc/", 6) == 0)
            memmove(names[n], strrchr(names[n], '/') + 1, strlen(strrchr(names[n], '/')));
        sorted[n] = names[n];
        CHECK_LT(++n, 64);
    }
    qsort(sorted, (size_t)n, sizeof sorted[0], by_name);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        CHECK_LT(strlen(out) + strlen(sorted[i]) + 2, (size_t)KINDS_CAP);
        strcat(out, sorted[i]);
        strcat(out, ",");
    }
}

static void fill(unsigned char *buf, int k)
{
    memset(buf, k + 1, BLOCK);
}

static int open_file(void)
{
    const char *disk = getenv("CAP_DISKIO");
    int fd = -1;
    if (disk == NULL || strcmp(disk, "blocking") != 0)
        fd = flushed_file(BLOCKS, BLOCK, fill, O_DIRECT);
    direct = fd >= 0;
    if (fd < 0)
        fd = flushed_file(BLOCKS, BLOCK, fill, 0);
    CHECK_GE(fd, 0);
    return fd;
}

/* READS blocks read and checked; on one worker, each O_DIRECT read must
 * let the ticker run (it parked). */
static void *reader(void *arg)
{
    int id = (int)(intptr_t)arg;
    unsigned char *b = aligned_alloc(BLOCK, BLOCK);
    CHECK(b != NULL);
    for (int i = 0; i < READS; i++) {
        int k = (id * READS + i * 7) % BLOCKS;
        long before = atomic_load(&tk.ticks);
        CHECK_EQ(pread(dfd, b, BLOCK, (off_t)k * BLOCK), (ssize_t)BLOCK);
        if (atomic_load(&tk.ticks) != before)
            atomic_fetch_add(&parked_ok, 1);
        for (int j = 0; j < BLOCK; j++)
            CHECK_EQ(b[j], (unsigned char)(k + 1));
    }
    free(b);
    return NULL;
}

/* What each generation does before it forks the next: disk reads on
 * threads (a ring on each worker they ran on), pipe waits (registrations
 * in the descriptor backend). */
static void use_backends(void)
{
    atomic_store(&tk.stop, 0);
    atomic_store(&parked_ok, 0);
    cap_thread_t ticker = spawn(ticker_run, &tk);
    cap_thread_t r[READERS];
    for (int i = 0; i < READERS; i++)
        r[i] = spawn(reader, (void *)(intptr_t)i);
    for (int i = 0; i < READERS; i++)
        join(r[i]);
    atomic_store(&tk.stop, 1);
    join(ticker);
    if (direct && cap_worker_count() == 1)
        CHECK_EQ(atomic_load(&parked_ok), READERS * READS);
    parked_pipe_read_is_woken('x');
}

/* Generation gen (0: the first process): checks its descriptors (a child,
 * just forked), uses the backends, forks the next and waits for it. */
static void generation(int gen)
{
    if (gen > 0) {
        char kinds[KINDS_CAP];
        own_kinds(kinds);
        if (strcmp(kinds, first_kinds) != 0)
            fprintf(stderr, "generation %d holds %s; the first process began with %s\n", gen,
                    kinds, first_kinds);
        CHECK(strcmp(kinds, first_kinds) == 0);
    }
    use_backends();
    if (gen == GENS)
        return;
    pid_t child = fork();
    CHECK_GE(child, 0);
    if (child == 0) {
        generation(gen + 1);
        _exit(0);
    }
    int status;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
    if (!own_fd_range(&base, &top))
        SKIP("the descriptor limit keeps no range for the runtime's own");
    own_kinds(first_kinds);
    CHECK(first_kinds[0] != '\0');
    dfd = open_file();
    generation(0);
    CHECK_EQ(close(dfd), 0);
    return 0;
}
