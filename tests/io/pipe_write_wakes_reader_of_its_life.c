/* SPDX-License-Identifier: MIT */
/* Description: a write on a pipe the runtime made wakes the reader parked
 * on its read end directly; when that read end has been closed (the pipe
 * living on through a dup) and its number reused by another pipe, the
 * write still reaches the dup's reader, and the new pipe's reader keeps
 * waiting for its own data (it gets exactly its own bytes, never the
 * other pipe's, and never an error). */
#include <string.h>

#include "io/io_util.h"

static int dup_fd, new_rd;

static void *read_dup(void *arg)
{
    (void)arg;
    char b[8];
    CHECK_EQ(read(dup_fd, b, sizeof b), 3);
    CHECK_EQ(memcmp(b, "old", 3), 0);
    return NULL;
}

static void *read_new(void *arg)
{
    (void)arg;
    char b[8];
    CHECK_EQ(read(new_rd, b, sizeof b), 3);
    CHECK_EQ(memcmp(b, "new", 3), 0);
    return NULL;
}

int main(void)
{
    for (int round = 0; round < 50; round++) {
        int a[2], n[2];
        CHECK_EQ(pipe(a), 0);
        dup_fd = dup(a[0]);
        CHECK_GE(dup_fd, 0);
        CHECK_EQ(close(a[0]), 0);
        CHECK_EQ(pipe(n), 0); /* takes a[0]'s number: the lowest free one */
        CHECK_EQ(n[0], a[0]);
        new_rd = n[0];
        cap_thread_t td = spawn(read_dup, NULL), tn = spawn(read_new, NULL);
        cap_sleep_ns(1000000); /* both park (if not, they read later: same result) */
        CHECK_EQ(write(a[1], "old", 3), 3);
        join(td);
        CHECK_EQ(write(n[1], "new", 3), 3);
        join(tn);
        CHECK_EQ(close(a[1]), 0);
        CHECK_EQ(close(dup_fd), 0);
        CHECK_EQ(close(n[0]), 0);
        CHECK_EQ(close(n[1]), 0);
    }
    return 0;
}
