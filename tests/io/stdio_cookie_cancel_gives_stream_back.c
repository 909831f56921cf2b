/* SPDX-License-Identifier: MIT */
/* Description: a user thread cancelled while its fgetc (or fgets, fread,
 * fscanf) waits inside a fopencookie stream's read function (a read(2)
 * of an empty pipe) gives the stream back whole, as nptl's unwinding
 * does: a second user thread whose fgetc waited for the stream meanwhile
 * gets the next byte written, and afterwards a kernel thread the library
 * does not run (glibc's pthread_create) finds glibc's lock of the stream
 * free (ftrylockfile). Before, the second thread walked into the stream
 * while the first waited (two threads in the function at once), and the
 * cancelled call's level of glibc's lock was never let go (the stack is
 * not unwound), so the stream stayed locked to the worker's kernel
 * thread for good. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "io/io_util.h"

struct cookie {
    int fd;
    atomic_int entered; /* calls of the read function so far */
};

static ssize_t cookie_read(void *arg, char *buf, size_t n)
{
    struct cookie *k = arg;
    atomic_fetch_add(&k->entered, 1);
    return read(k->fd, buf, n); /* the cancel acts here */
}

struct reader {
    FILE *fp;
    int kind; /* which call the cancelled thread waits in */
};

static void *read_cancelled(void *arg)
{
    struct reader *r = arg;
    char line[8];
    int n;
    switch (r->kind) {
    case 0:
        fgetc(r->fp);
        break;
    case 1:
        fgets(line, sizeof line, r->fp);
        break;
    case 2:
        fread(line, 1, 1, r->fp);
        break;
    default:
        fscanf(r->fp, "%d", &n);
        break;
    }
    CHECK(!"the cancel did not act in the read");
    return NULL;
}

static void *read_one(void *arg)
{
    return (void *)(intptr_t)fgetc(arg);
}

/* glibc's lock of the stream, tried from a kernel thread of its own. */
static void *try_lock(void *arg)
{
    FILE *fp = arg;
    if (ftrylockfile(fp) != 0)
        return (void *)(intptr_t)-1;
    funlockfile(fp);
    return NULL;
}

static void round_of(int kind)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    struct cookie k = { .fd = p[0] };
    FILE *fp = fopencookie(&k, "r", (cookie_io_functions_t){ .read = cookie_read });
    CHECK(fp != NULL);
    struct reader a = { fp, kind };
    cap_thread_t ta = spawn(read_cancelled, &a);
    while (atomic_load(&k.entered) == 0)
        cap_yield(); /* a waits inside the function, the pipe empty */
    cap_thread_t tb = spawn(read_one, fp);
    for (int i = 0; i < 20; i++)
        cap_yield(); /* let b start its call (a race either way: looped) */
    int entered = atomic_load(&k.entered);
    CHECK_EQ(entered, 1); /* b waits for a's call, not in the function */
    CHECK_EQ(cap_thread_cancel(ta), 0);
    CHECK(join(ta) == CAP_CANCELED);
    CHECK_EQ(write(p[1], "7", 1), 1);
    CHECK_EQ((intptr_t)join(tb), '7');

    pthread_t kt;
    CHECK_EQ(pthread_create(&kt, NULL, try_lock, fp), 0);
    void *locked = NULL;
    CHECK_EQ(pthread_join(kt, &locked), 0);
    CHECK(locked == NULL); /* glibc's lock is free */

    CHECK_EQ(write(p[1], "8", 1), 1); /* and the stream still works */
    CHECK_EQ(fgetc(fp), '8');
    CHECK_EQ(fclose(fp), 0);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
}

int main(void)
{
    alarm(40);
    for (int i = 0; i < 16; i++)
        round_of(i % 4);
    return 0;
}
