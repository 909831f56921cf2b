/* SPDX-License-Identifier: MIT */
/* Description: threads writing one regular file through one descriptor
 * at its position (write, not pwrite; not O_APPEND) never overwrite each
 * other's records, and threads reading one through one descriptor never
 * get the same record twice: read(2) and write(2) take the file position
 * under a lock, so every record lands once. Under CAP_DISKIO=uring the
 * writes that the page cache could not take at once went to the ring at
 * "the current position", which io_uring reads and advances without that
 * lock: records were lost (the file came out short). The same with the
 * descriptor in O_APPEND mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

enum { THREADS = 4, RECORDS = 500, RECORD = 64 };

static int fd;

static void *writer(void *arg)
{
    int id = (int)(intptr_t)arg;
    char rec[RECORD];
    for (int i = 0; i < RECORDS; i++) {
        memset(rec, 'a' + id, sizeof rec);
        snprintf(rec, sizeof rec, "%d:%d:", id, i);
        rec[RECORD - 1] = '\n';
        CHECK_EQ(write(fd, rec, sizeof rec), (ssize_t)sizeof rec);
    }
    return NULL;
}

static atomic_int seen[THREADS][RECORDS];

static void *reader(void *arg)
{
    (void)arg;
    char rec[RECORD];
    for (;;) {
        ssize_t n = read(fd, rec, sizeof rec);
        CHECK(n == 0 || n == (ssize_t)sizeof rec);
        if (n == 0)
            return NULL;
        int id, i;
        CHECK_EQ(sscanf(rec, "%d:%d:", &id, &i), 2);
        CHECK(id >= 0 && id < THREADS && i >= 0 && i < RECORDS);
        CHECK_EQ(atomic_fetch_add(&seen[id][i], 1), 0); /* never twice */
    }
}

/* Every record once, whole, read back by readers sharing the position. */
static void check_records(void)
{
    memset(seen, 0, sizeof seen);
    CHECK_EQ(lseek(fd, 0, SEEK_END), (off_t)THREADS * RECORDS * RECORD);
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        t[i] = spawn(reader, NULL);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    for (int id = 0; id < THREADS; id++)
        for (int i = 0; i < RECORDS; i++)
            CHECK_EQ(atomic_load(&seen[id][i]), 1);
}

static void write_all(void)
{
    cap_thread_t t[THREADS];
    for (intptr_t i = 0; i < THREADS; i++)
        t[i] = spawn(writer, (void *)i);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
}

int main(void)
{
    char path[] = "/tmp/cap-filepos-XXXXXX";
    fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ(unlink(path), 0);
    write_all();
    CHECK_EQ(lseek(fd, 0, SEEK_CUR), (off_t)THREADS * RECORDS * RECORD);
    check_records();
    CHECK_EQ(close(fd), 0);

    /* O_APPEND, whose writes the uring backend keeps in its ring: the
     * kernel appends each at the end under the inode's lock. */
    char path2[] = "/tmp/cap-fileapp-XXXXXX";
    fd = mkstemp(path2);
    CHECK(fd >= 0);
    CHECK_EQ(unlink(path2), 0);
    CHECK_EQ(fcntl(fd, F_SETFL, O_APPEND), 0);
    write_all();
    check_records();
    CHECK_EQ(close(fd), 0);
    return 0;
}
