/* SPDX-License-Identifier: MIT */
/* Description: two user threads reading one fopencookie stream whose read
 * function parks (a read(2) of an empty pipe) take turns, as on nptl,
 * where the second waits for glibc's stream lock: while the first waits
 * inside the function, the second's fgetc, getc, fgets or fread waits
 * for it to finish (the function is never entered by two threads at
 * once), then takes the byte the first left in the buffer; the bytes
 * written after come next, then end of input. Before, glibc's lock,
 * owned by the worker's kernel thread, let the second thread of the same
 * worker into the stream, where its own refill waited too and then wrote
 * over what the first had buffered (a byte lost, a later one returned in
 * its place); on two workers the second blocked its worker in glibc's
 * lock while the first was parked (the alarm ends that hang). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "io/io_util.h"

struct cookie {
    int fd;
    atomic_int inside; /* threads in the read function now */
    atomic_int most;   /* the most there ever were at once */
};

static ssize_t cookie_read(void *arg, char *buf, size_t n)
{
    struct cookie *k = arg;
    int now = atomic_fetch_add(&k->inside, 1) + 1;
    int most = atomic_load(&k->most);
    while (now > most && !atomic_compare_exchange_weak(&k->most, &most, now))
        ;
    ssize_t r = read(k->fd, buf, n);
    atomic_fetch_sub(&k->inside, 1);
    return r;
}

enum { KINDS = 4 };

struct reader {
    FILE *fp;
    int kind; /* which call takes the one character */
};

static void *read_one(void *arg)
{
    struct reader *r = arg;
    char line[2];
    unsigned char c = 0;
    switch (r->kind) {
    case 0:
        return (void *)(intptr_t)fgetc(r->fp);
    case 1:
        return (void *)(intptr_t)getc(r->fp);
    case 2:
        if (fgets(line, sizeof line, r->fp) == NULL)
            return (void *)(intptr_t)EOF;
        CHECK_EQ(strlen(line), (size_t)1);
        return (void *)(intptr_t)(unsigned char)line[0];
    default:
        if (fread(&c, 1, 1, r->fp) != 1)
            return (void *)(intptr_t)EOF;
        return (void *)(intptr_t)c;
    }
}

static void round_of(int kind_a, int kind_b)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    struct cookie k = { .fd = p[0] };
    FILE *fp = fopencookie(&k, "r", (cookie_io_functions_t){ .read = cookie_read });
    CHECK(fp != NULL);
    struct reader a = { fp, kind_a }, b = { fp, kind_b };
    cap_thread_t ta = spawn(read_one, &a);
    while (atomic_load(&k.inside) == 0)
        cap_yield(); /* a waits inside the function, the pipe empty */
    cap_thread_t tb = spawn(read_one, &b);
    for (int i = 0; i < 20; i++)
        cap_yield(); /* let b start its call (a race either way: looped) */
    CHECK_EQ(write(p[1], "12", 2), 2);
    CHECK_EQ((intptr_t)join(ta), '1');
    CHECK_EQ(write(p[1], "34", 2), 2);
    CHECK_EQ(close(p[1]), 0);
    CHECK_EQ((intptr_t)join(tb), '2');
    char rest[8];
    CHECK(fgets(rest, sizeof rest, fp) != NULL);
    CHECK_EQ(strcmp(rest, "34"), 0);
    CHECK_EQ(fgetc(fp), EOF);
    CHECK(feof(fp));
    int most = atomic_load(&k.most);
    CHECK_EQ(most, 1); /* threads in the function at once */
    CHECK_EQ(fclose(fp), 0);
    CHECK_EQ(close(p[0]), 0);
}

int main(void)
{
    alarm(40);
    for (int i = 0; i < 64; i++)
        round_of(i % KINDS, i / KINDS % KINDS);
    return 0;
}
