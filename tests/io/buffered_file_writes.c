/* SPDX-License-Identifier: MIT */
/* Description: buffered writes to a regular file on a local file system
 * that refuses RWF_NOWAIT for them (ext4, tmpfs; io/disk.c, "Buffered
 * writes"): write, pwrite, writev, pwritev and O_APPEND writes from many
 * threads land exactly as on the kernel whatever CAP_FILE_WRITES says.
 * Where they are made is checked by the kernel threads they start: with
 * CAP_FILE_WRITES=worker none (no pool thread, no io-wq worker of the
 * ring), and an O_DSYNC file's write still leaves the worker (checked
 * where that is our own pool, CAP_DISKIO=threads); with =backend under
 * CAP_DISKIO=threads the pool takes them. auto decides by time, so it is
 * checked for results only. Skips (77) where /tmp's file system takes
 * RWF_NOWAIT writes or is not one the rule covers. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "io/io_util.h"
#include "proc_util.h"

enum { THREADS = 8, WRITES = 200, REC = 512 };

static void fill(unsigned char *rec, int thread, int k)
{
    for (int i = 0; i < REC; i++)
        rec[i] = (unsigned char)(thread * 31 + k * 7 + i);
}

struct job {
    int id;
    int own;    /* this thread's file: positioned and file-position writes */
    int shared; /* every thread's O_APPEND file */
};

static void *writer(void *arg)
{
    struct job *j = arg;
    unsigned char rec[REC];
    for (int k = 0; k < WRITES; k++) {
        fill(rec, j->id, k);
        struct iovec v[2] = { { rec, REC / 2 }, { rec + REC / 2, REC / 2 } };
        switch (k % 4) {
        case 0:
            CHECK_EQ(write(j->own, rec, REC), REC);
            break;
        case 1:
            CHECK_EQ(writev(j->own, v, 2), REC);
            break;
        case 2:
            CHECK_EQ(pwrite(j->own, rec, REC, (off_t)k * REC), REC);
            CHECK_EQ(lseek(j->own, (off_t)(k + 1) * REC, SEEK_SET), (off_t)(k + 1) * REC);
            break;
        default:
            CHECK_EQ(pwritev(j->own, v, 2, (off_t)k * REC), REC);
            CHECK_EQ(lseek(j->own, (off_t)(k + 1) * REC, SEEK_SET), (off_t)(k + 1) * REC);
            break;
        }
        rec[0] = (unsigned char)j->id; /* the shared file's records say whose they are */
        rec[1] = (unsigned char)k;
        CHECK_EQ(write(j->shared, rec, REC), REC);
    }
    return NULL;
}

int main(void)
{
    if (!tmp_refuses_nowait_writes()) {
        printf("skip: /tmp takes RWF_NOWAIT writes or is not ext4/tmpfs\n");
        return 77;
    }

    int before = process_tasks();
    int shared = unlinked_temp_file(O_APPEND);
    struct job jobs[THREADS];
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (struct job){ .id = i, .own = unlinked_temp_file(0), .shared = shared };
        t[i] = spawn(writer, &jobs[i]);
    }
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    const char *mode = getenv("CAP_FILE_WRITES");
    const char *disk = getenv("CAP_DISKIO");
    bool worker = mode != NULL && strcmp(mode, "worker") == 0;
    bool pool = disk != NULL && strcmp(disk, "threads") == 0;
    int after = process_tasks();
    if (worker && after != before)
        print_tasks("after the writes (their count moved)");
    if (worker)
        CHECK_EQ(after, before);
    else if (mode != NULL && strcmp(mode, "backend") == 0 && pool)
        CHECK(after > before);

    unsigned char want[REC], got[REC];
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(lseek(jobs[i].own, 0, SEEK_CUR), (off_t)WRITES * REC);
        for (int k = 0; k < WRITES; k++) {
            fill(want, i, k);
            CHECK_EQ(pread(jobs[i].own, got, REC, (off_t)k * REC), REC);
            CHECK(memcmp(got, want, REC) == 0);
        }
        CHECK_EQ(close(jobs[i].own), 0);
    }
    struct stat st;
    CHECK_EQ(fstat(shared, &st), 0);
    CHECK_EQ(st.st_size, (off_t)THREADS * WRITES * REC);
    int seen[THREADS] = { 0 };
    for (int r = 0; r < THREADS * WRITES; r++) {
        CHECK_EQ(pread(shared, got, REC, (off_t)r * REC), REC);
        int id = got[0], k = got[1];
        CHECK(id < THREADS);
        CHECK_EQ(k, seen[id] % 256); /* each thread's records in its order, none torn */
        fill(want, id, seen[id]);
        CHECK(memcmp(got + 2, want + 2, REC - 2) == 0);
        seen[id]++;
    }
    CHECK_EQ(close(shared), 0);

    if (worker && pool) {
        int sync = unlinked_temp_file(O_DSYNC);
        int was = process_tasks();
        unsigned char rec[REC];
        fill(rec, 0, 0);
        CHECK_EQ(write(sync, rec, REC), REC);
        CHECK(process_tasks() > was); /* the pool took it */
        CHECK_EQ(pread(sync, got, REC, 0), REC);
        CHECK(memcmp(got, rec, REC) == 0);
        CHECK_EQ(close(sync), 0);
    }
    printf("ok\n");
    return 0;
}
