/* SPDX-License-Identifier: MIT */
/* Description: two user threads writing one fopencookie stream whose
 * write function parks (a write(2) to a full pipe) take turns, as on
 * nptl, where the second waits for glibc's stream lock: while the first
 * thread's fputs waits inside the function, the second's fputs, fwrite,
 * fprintf or putc loop waits for it; the pipe then gets the first line
 * whole, then the second, each byte once, and the function is never
 * entered by two threads at once. Before, glibc's lock, owned by the
 * worker's kernel thread, let the second thread of the same worker into
 * the stream mid-flush: it wrote the full buffer again and both then
 * reset it (bytes doubled and lost). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "io/io_util.h"

enum { LINE = 200, BUF = 64 };

struct cookie {
    int fd;
    atomic_int inside; /* threads in the write function now */
    atomic_int most;   /* the most there ever were at once */
};

static ssize_t cookie_write(void *arg, const char *buf, size_t n)
{
    struct cookie *k = arg;
    int now = atomic_fetch_add(&k->inside, 1) + 1;
    int most = atomic_load(&k->most);
    while (now > most && !atomic_compare_exchange_weak(&k->most, &most, now))
        ;
    ssize_t r = write(k->fd, buf, n);
    atomic_fetch_sub(&k->inside, 1);
    return r;
}

struct writer {
    FILE *fp;
    int kind; /* which call writes the line */
    char line[LINE + 1];
};

static void *write_line(void *arg)
{
    struct writer *w = arg;
    switch (w->kind) {
    case 0:
        CHECK_GE(fputs(w->line, w->fp), 0);
        break;
    case 1:
        CHECK_EQ(fwrite(w->line, 1, LINE, w->fp), (size_t)LINE);
        break;
    case 2:
        CHECK_EQ(fprintf(w->fp, "%s", w->line), LINE);
        break;
    default:
        flockfile(w->fp); /* one call's worth: POSIX's way to make a run of putc atomic */
        for (int i = 0; i < LINE; i++)
            CHECK_EQ(putc(w->line[i], w->fp), (unsigned char)w->line[i]);
        funlockfile(w->fp);
        break;
    }
    return NULL;
}

static void make_line(char *line, char c)
{
    memset(line, c, LINE - 1);
    line[LINE - 1] = '\n';
    line[LINE] = '\0';
}

static void round_of(int kind_a, int kind_b)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    int room = fcntl(p[1], F_GETPIPE_SZ);
    CHECK_GT(room, 2 * LINE);
    static char filler[1 << 20];
    CHECK_LE((size_t)room, sizeof filler);
    memset(filler, 'x', (size_t)room);
    CHECK_EQ(write(p[1], filler, (size_t)room), (ssize_t)room); /* full now */

    struct cookie k = { .fd = p[1] };
    FILE *fp = fopencookie(&k, "w", (cookie_io_functions_t){ .write = cookie_write });
    CHECK(fp != NULL);
    static char buf[BUF];
    CHECK_EQ(setvbuf(fp, buf, _IOFBF, sizeof buf), 0);
    static struct writer a, b;
    a.fp = b.fp = fp;
    a.kind = kind_a;
    b.kind = kind_b;
    make_line(a.line, 'a');
    make_line(b.line, 'b');

    cap_thread_t ta = spawn(write_line, &a);
    while (atomic_load(&k.inside) == 0)
        cap_yield(); /* a waits inside the function, the pipe full */
    cap_thread_t tb = spawn(write_line, &b);
    for (int i = 0; i < 20; i++)
        cap_yield(); /* let b start its call (a race either way: looped) */
    static char got[1 << 20];
    read_exactly_n(p[0], got, (size_t)room, (size_t)room); /* the filler: room for both */
    join(ta);
    join(tb);
    CHECK_EQ(fclose(fp), 0);
    CHECK_EQ(close(p[1]), 0);
    size_t n = 0;
    ssize_t r;
    while ((r = read(p[0], got + n, sizeof got - n)) > 0)
        n += (size_t)r;
    CHECK_EQ(r, 0);
    CHECK_EQ(n, (size_t)2 * LINE);
    CHECK_EQ(memcmp(got, a.line, LINE), 0);
    CHECK_EQ(memcmp(got + LINE, b.line, LINE), 0);
    int most = atomic_load(&k.most);
    CHECK_EQ(most, 1); /* threads in the function at once */
    CHECK_EQ(close(p[0]), 0);
}

int main(void)
{
    alarm(40);
    for (int i = 0; i < 64; i++)
        round_of(i % 4, i / 4 % 4);
    return 0;
}
