/* SPDX-License-Identifier: MIT */
/* Description: the first buffered writes to a file, made at once by
 * threads on different workers, are all made on the worker under
 * CAP_FILE_WRITES=worker (io/disk.c, "Buffered writes"). Whether a file's
 * writes may be made there is decided at its first refused RWF_NOWAIT
 * write; a thread that looked before another thread's decision and found
 * it made after its own try sent its write to the backend (the ring's
 * io-wq or the pool: a kernel thread more; seen as a one-off in CI, in
 * io/buffered_file_writes). Many rounds of THREADS threads released
 * together on a fresh file; the process keeps its kernel threads, and
 * every record lands. Skips (77) as io/buffered_file_writes does. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "io/io_util.h"
#include "proc_util.h"

enum { ROUNDS = 400, THREADS = 4, REC = 64 };

static atomic_int arrived;
static atomic_int go;
static int file;

static void *writer(void *arg)
{
    int id = (int)(long)arg;
    atomic_fetch_add(&arrived, 1);
    while (!atomic_load(&go))
        cap_yield(); /* the others reach here too */
    unsigned char rec[REC];
    memset(rec, id, sizeof rec);
    CHECK_EQ(pwrite(file, rec, REC, (off_t)id * REC), REC);
    return NULL;
}

int main(void)
{
    if (!tmp_refuses_nowait_writes()) {
        printf("skip: /tmp takes RWF_NOWAIT writes or is not ext4/tmpfs\n");
        return 77;
    }

    int before = process_tasks();
    for (int r = 0; r < ROUNDS; r++) {
        file = unlinked_temp_file(0);
        atomic_store(&arrived, 0);
        atomic_store(&go, 0);
        cap_thread_t t[THREADS];
        for (int i = 0; i < THREADS; i++)
            t[i] = spawn(writer, (void *)(long)i);
        while (atomic_load(&arrived) < THREADS)
            cap_yield();
        atomic_store(&go, 1);
        for (int i = 0; i < THREADS; i++)
            join(t[i]);
        struct stat st;
        CHECK_EQ(fstat(file, &st), 0);
        CHECK_EQ(st.st_size, (off_t)THREADS * REC);
        for (int i = 0; i < THREADS; i++) {
            unsigned char got[REC], want[REC];
            memset(want, i, sizeof want);
            CHECK_EQ(pread(file, got, REC, (off_t)i * REC), REC);
            CHECK(memcmp(got, want, REC) == 0);
        }
        CHECK_EQ(close(file), 0);
        int now = process_tasks();
        if (now != before) {
            fprintf(stderr, "round %d of %d\n", r, ROUNDS);
            print_tasks("after the round (their count moved)");
        }
        CHECK_EQ(now, before);
    }
    printf("ok\n");
    return 0;
}
