/* SPDX-License-Identifier: MIT */
/* Description: flockfile on a user thread owns the stream for that user
 * thread, across its parks, as POSIX wants; and a locked stream's output
 * parks like any other. glibc's FILE lock is recursive and owned by the
 * kernel thread, so before (CAP_WORKERS=1) each of these failed:
 *  - a thread that locked a stream and parked (a sleep) between two of
 *    its writes had another thread's fputs, printf, putc, fwrite, or
 *    flockfile of the same worker walk in between them; the output must
 *    be the holder's two pieces, then the other's (and ftell, fgetpos,
 *    fseek and rewind, on a regular file, act after the holder's pieces);
 *  - ftrylockfile by another thread while the holder is parked fails,
 *    and succeeds once it unlocked; a lock taken twice is held until the
 *    second funlockfile;
 *  - the holder writing a megabyte to a full pipe with the _unlocked
 *    calls blocked the worker, and so the drainer on it (a hang);
 *  - sixteen threads each writing records of three pieces with a yield
 *    and a sleep in between, under flockfile: every record arrives whole.
 * Both on a pipe (the wrapped calls park) and on a regular file (glibc's
 * calls, held off while another thread holds the stream). With
 * CAP_MIGRATE=1 the holder may resume on another worker, where glibc's
 * lock named the old one (its next lock waited for itself). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"

static FILE *out;
static int rfd = -1;          /* the pipe's read end, or -1 for the file */
static char path[64];

static void open_stream(bool pipe_kind)
{
    if (pipe_kind) {
        int p[2];
        CHECK_EQ(pipe(p), 0);
        CHECK_GE(fcntl(p[1], F_SETPIPE_SZ, 1 << 20), 1 << 20);
        rfd = p[0];
        out = fdopen(p[1], "w");
    } else {
        strcpy(path, "/tmp/cap-flockfile-XXXXXX");
        int fd = mkstemp(path);
        CHECK_GE(fd, 0);
        rfd = -1;
        out = fdopen(fd, "w+");
    }
    CHECK(out != NULL);
}

/* Everything written to the stream so far (flushed), NUL-terminated, in a
 * buffer the caller frees; the stream is closed. */
static char *close_and_read(void)
{
    CHECK_EQ(fflush(out), 0);
    size_t cap = 1 << 22, got = 0;
    char *buf = malloc(cap + 1);
    CHECK(buf != NULL);
    if (rfd >= 0) {
        CHECK_EQ(fclose(out), 0);
        ssize_t r;
        while ((r = read(rfd, buf + got, cap - got)) > 0)
            got += (size_t)r;
        CHECK_EQ(r, 0);
        CHECK_EQ(close(rfd), 0);
    } else {
        int fd = open(path, O_RDONLY);
        CHECK_GE(fd, 0);
        ssize_t r;
        while ((r = read(fd, buf + got, cap - got)) > 0)
            got += (size_t)r;
        CHECK_EQ(r, 0);
        CHECK_EQ(close(fd), 0);
        CHECK_EQ(fclose(out), 0);
        CHECK_EQ(unlink(path), 0);
    }
    buf[got] = '\0';
    return buf;
}

/* ---- a holder parked between two writes ---------------------------------- */

static atomic_int holding, intruder_done, try_result;

static void *holder(void *arg)
{
    int twice = (int)(intptr_t)arg;
    flockfile(out);
    if (twice)
        flockfile(out);
    CHECK_EQ(fputs("A1 ", out), 1);
    atomic_store(&holding, 1);
    cap_usleep(20000); /* parked: the intruder runs meanwhile */
    CHECK_EQ(fputs("A2\n", out), 1);
    if (twice) {
        funlockfile(out);
        cap_usleep(5000); /* still held once */
        CHECK_EQ(atomic_load(&intruder_done), 0);
        CHECK_EQ(fputs("A3\n", out), 1);
    }
    funlockfile(out);
    return NULL;
}

enum intrusion {
    BY_FPUTS, BY_PRINTF, BY_PUTC, BY_FWRITE, BY_FLOCKFILE, BY_TRYLOCK, BY_FTELL, BY_FGETPOS,
    BY_FSEEK, BY_REWIND, N_INTRUSIONS
};

static void intrude(enum intrusion how)
{
    switch (how) {
    case BY_FPUTS:
        CHECK_EQ(fputs("B\n", out), 1);
        break;
    case BY_PRINTF:
        CHECK_EQ(fprintf(out, "%c\n", 'B'), 2);
        break;
    case BY_PUTC:
        CHECK_EQ(putc('B', out), 'B');
        CHECK_EQ(fputc('\n', out), '\n');
        break;
    case BY_FWRITE:
        CHECK_EQ(fwrite("B\n", 1, 2, out), 2);
        break;
    case BY_FLOCKFILE:
        flockfile(out);
        CHECK_EQ(fputs_unlocked("B\n", out), 1);
        funlockfile(out);
        break;
    case BY_TRYLOCK:
        atomic_store(&try_result, ftrylockfile(out));
        while (ftrylockfile(out) != 0)
            cap_usleep(1000);
        CHECK_EQ(putc_unlocked('B', out), 'B');
        CHECK_EQ(putc_unlocked('\n', out), '\n');
        funlockfile(out);
        break;
    case BY_FTELL: /* a regular file's position: after the holder's bytes */
        CHECK_EQ(ftell(out), rfd < 0 ? 6 : -1);
        CHECK_EQ(fputs("B\n", out), 1);
        break;
    case BY_FGETPOS: { /* (glibc's fpos_t: the offset in __pos) */
        fpos_t pos;
        if (rfd < 0) {
            CHECK_EQ(fgetpos(out, &pos), 0);
            CHECK_EQ(pos.__pos, 6);
            CHECK_EQ(fsetpos(out, &pos), 0);
        }
        CHECK_EQ(fputs("B\n", out), 1);
        break;
    }
    case BY_FSEEK: /* writes the buffer out, then seeks (a pipe: ESPIPE) */
        CHECK_EQ(fseek(out, 0, SEEK_END), rfd < 0 ? 0 : -1);
        if (rfd < 0) { /* what reached the file: all the holder's bytes */
            struct stat st;
            CHECK_EQ(fstat(fileno(out), &st), 0);
            CHECK_EQ(st.st_size, 6);
        }
        CHECK_EQ(fputs("B\n", out), 1);
        break;
    case BY_REWIND: /* the same through rewind, then back to the end */
        rewind(out);
        if (rfd < 0) {
            struct stat st;
            CHECK_EQ(fstat(fileno(out), &st), 0);
            CHECK_EQ(st.st_size, 6);
            CHECK_EQ(ftell(out), 0);
            CHECK_EQ(fseek(out, 0, SEEK_END), 0);
        }
        clearerr(out); /* (a pipe: rewind's seek failed) */
        CHECK_EQ(fputs("B\n", out), 1);
        break;
    default:
        CHECK(0);
    }
}

static void *intruder(void *arg)
{
    while (!atomic_load(&holding))
        cap_usleep(1000);
    intrude((enum intrusion)(intptr_t)arg);
    atomic_store(&intruder_done, 1);
    return NULL;
}

static void holder_keeps_stream(bool pipe_kind, enum intrusion how, int twice)
{
    open_stream(pipe_kind);
    atomic_store(&holding, 0);
    atomic_store(&intruder_done, 0);
    atomic_store(&try_result, 0);
    cap_thread_t a = spawn(holder, (void *)(intptr_t)twice);
    cap_thread_t b = spawn(intruder, (void *)(intptr_t)how);
    join(a);
    join(b);
    char *got = close_and_read();
    CHECK_EQ(strcmp(got, twice ? "A1 A2\nA3\nB\n" : "A1 A2\nB\n"), 0);
    if (how == BY_TRYLOCK)
        CHECK(atomic_load(&try_result) != 0); /* held by the parked holder */
    free(got);
}

/* ---- a locked stream's output to a full pipe parks ---------------------------- */

enum { MEGABYTE = 1 << 20 };

struct drain {
    int fd;
    size_t total;
    bool ok;
};

static void *drainer(void *arg)
{
    struct drain *d = arg;
    cap_usleep(10000); /* the writer fills the pipe first */
    char buf[4096];
    ssize_t r;
    size_t i = 0;
    d->ok = true;
    while ((r = read(d->fd, buf, sizeof buf)) > 0) {
        for (ssize_t k = 0; k < r; k++, i++)
            d->ok &= buf[k] == (char)('a' + i % 26);
        d->total += (size_t)r;
    }
    return NULL;
}

static void locked_output_parks(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    FILE *f = fdopen(p[1], "w");
    CHECK(f != NULL);
    struct drain d = { p[0], 0, false };
    cap_thread_t t = spawn(drainer, &d);
    flockfile(f);
    size_t i = 0;
    char block[1000];
    while (i < MEGABYTE) {
        for (int k = 0; k < 100; k++, i++)
            CHECK_EQ(putc_unlocked('a' + (int)(i % 26), f), 'a' + (int)(i % 26));
        for (size_t k = 0; k < sizeof block; k++)
            block[k] = (char)('a' + (i + k) % 26);
        CHECK_EQ(fwrite_unlocked(block, 1, sizeof block, f), sizeof block);
        i += sizeof block;
        CHECK_EQ(fprintf(f, "%c", 'a' + (int)(i % 26)), 1);
        i++;
    }
    funlockfile(f);
    CHECK_EQ(fclose(f), 0);
    join(t);
    CHECK_EQ(d.total, i);
    CHECK(d.ok);
    CHECK_EQ(close(p[0]), 0);
}

/* ---- many lockers: whole records ------------------------------------------ */

enum { LOCKERS = 16, RECORDS = 60 };

static void *locker(void *arg)
{
    int w = (int)(intptr_t)arg;
    for (int k = 0; k < RECORDS; k++) {
        char head[32];
        int n = snprintf(head, sizeof head, "<%d %d", w, k);
        flockfile(out);
        CHECK_EQ(fprintf(out, "<%d %d", w, k), n);
        cap_yield();
        CHECK_EQ(fputs(" mid", out), 1);
        if (k % 7 == 0)
            cap_usleep(200);
        CHECK_EQ(putc_unlocked('>', out), '>');
        CHECK_EQ(putc('\n', out), '\n');
        funlockfile(out);
    }
    return NULL;
}

static void records_whole(bool pipe_kind)
{
    open_stream(pipe_kind);
    cap_thread_t t[LOCKERS];
    for (int i = 0; i < LOCKERS; i++)
        t[i] = spawn(locker, (void *)(intptr_t)i);
    for (int i = 0; i < LOCKERS; i++)
        join(t[i]);
    char *got = close_and_read();
    int next[LOCKERS] = { 0 };
    int lines = 0;
    for (char *line = strtok(got, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        int w, k, n = 0;
        CHECK_EQ(sscanf(line, "<%d %d mid>%n", &w, &k, &n), 2);
        CHECK_EQ((size_t)n, strlen(line)); /* nothing else inside */
        CHECK(w >= 0 && w < LOCKERS);
        CHECK_EQ(k, next[w]);
        next[w]++;
        lines++;
    }
    CHECK_EQ(lines, LOCKERS * RECORDS);
    free(got);
}

int main(void)
{
    for (int kind = 0; kind < 2; kind++) {
        for (int how = 0; how < N_INTRUSIONS; how++)
            holder_keeps_stream(kind == 0, (enum intrusion)how, 0);
        holder_keeps_stream(kind == 0, BY_FPUTS, 1);
        holder_keeps_stream(kind == 0, BY_FLOCKFILE, 1);
        records_whole(kind == 0);
    }
    locked_output_parks();
    return 0;
}
