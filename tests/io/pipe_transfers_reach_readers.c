/* SPDX-License-Identifier: MIT */
/* Description: a private pipe (io/pipe.h: never armed in the backend)
 * learns of data only from the wrappers, so every way data can come in
 * must reach its reader, whether the reader is already parked (the write
 * must wake it) or reads later (it must not park with the data there):
 * what a kernel thread the runtime does not run wrote (write, writev,
 * pwritev2), what a signal handler wrote, a pwritev2 with flags, and a
 * plain write. Reads that take part of the content leave the rest
 * readable at once (a vector read too), a read of nothing answers 0, and
 * writers and readers on every worker move every token exactly once, the
 * readers parked at the end getting EOF from the last close. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>

#include "io/io_util.h"

static int p[2];

/* Writes "ab", "cde" and "fg" from a kernel thread the runtime does not
 * run (plain pthread_create). */
static void *foreign_writes(void *arg)
{
    (void)arg;
    CHECK_EQ(cap_thread_self(), 0);
    CHECK_EQ(write(p[1], "ab", 2), 2);
    struct iovec v[2] = { { "cd", 2 }, { "e", 1 } };
    CHECK_EQ(writev(p[1], v, 2), 3);
    struct iovec w = { "fg", 2 };
    CHECK_EQ(pwritev2(p[1], &w, 1, -1, 0), 2);
    return NULL;
}

static void write_foreign(void)
{
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, foreign_writes, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
}

static void write_in_handler(int sig)
{
    (void)sig;
    int saved = errno;
    if (write(p[1], "abcdefg", 7) != 7)
        _exit(3);
    errno = saved;
}

static void write_by_handler(void)
{
    CHECK_EQ(raise(SIGUSR1), 0); /* the handler runs on this kernel thread */
}

static void write_flagged(void)
{
    struct iovec v = { "abcdefg", 7 };
    CHECK_EQ(pwritev2(p[1], &v, 1, -1, RWF_DSYNC), 7); /* a flag a pipe takes */
}

static void write_plain(void)
{
    CHECK_EQ(write(p[1], "abcdefg", 7), 7);
}

/* Reads until 7 bytes came: "abcdefg". */
static void *read_seven(void *arg)
{
    (void)arg;
    char buf[16];
    size_t got = 0;
    while (got < 7) {
        ssize_t r = read(p[0], buf + got, sizeof buf - got);
        CHECK_GE(r, 1);
        got += (size_t)r;
    }
    CHECK_EQ(got, 7);
    CHECK_EQ(memcmp(buf, "abcdefg", 7), 0);
    return NULL;
}

/* writer's data reaches a reader parked before it, then one after it. */
static void arrives(void (*writer)(void))
{
    CHECK_EQ(pipe(p), 0);
    cap_thread_t r = spawn(read_seven, NULL);
    cap_sleep_ns(20000000); /* time to park (valid, if weaker, if it has not) */
    writer();
    join(r);
    writer();
    read_seven(NULL);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
}

static void *read_next(void *arg)
{
    (void)arg;
    char buf[16];
    CHECK_EQ(read(p[0], buf, sizeof buf), 4);
    CHECK_EQ(memcmp(buf, "next", 4), 0);
    return NULL;
}

static void part_by_part(void)
{
    char buf[64], big[100];
    CHECK_EQ(pipe(p), 0);
    for (int i = 0; i < 100; i++)
        big[i] = (char)i;
    CHECK_EQ(write(p[1], big, 100), 100);
    CHECK_EQ(read(p[0], buf, 30), 30);
    CHECK_EQ(memcmp(buf, big, 30), 0);
    char a[20], b[30];
    struct iovec two[2] = { { a, sizeof a }, { b, sizeof b } };
    CHECK_EQ(readv(p[0], two, 2), 50);
    CHECK_EQ(memcmp(a, big + 30, 20), 0);
    CHECK_EQ(memcmp(b, big + 50, 30), 0);
    CHECK_EQ(read(p[0], buf, sizeof buf), 20);
    CHECK_EQ(memcmp(buf, big + 80, 20), 0);
    CHECK_EQ(read(p[0], buf, 0), 0); /* nothing asked: 0 at once */
    cap_thread_t r = spawn(read_next, NULL);
    cap_sleep_ns(20000000);
    CHECK_EQ(write(p[1], "next", 4), 4);
    join(r);
    CHECK_EQ(close(p[0]), 0);
    CHECK_EQ(close(p[1]), 0);
}

/* Many writers and readers of one pipe: 8-byte tokens (atomic writes),
 * each read takes one. */
enum { WRITERS = 8, READERS = 8, TOKENS = 4000 };
static atomic_long sum_read, tokens_read;

static void *token_writer(void *arg)
{
    long base = (long)(intptr_t)arg * TOKENS;
    for (long i = 0; i < TOKENS; i++) {
        long v = base + i;
        CHECK_EQ(write(p[1], &v, sizeof v), (ssize_t)sizeof v);
    }
    return NULL;
}

static void *token_reader(void *arg)
{
    (void)arg;
    for (;;) {
        long v;
        ssize_t r = read(p[0], &v, sizeof v);
        if (r == 0)
            return NULL; /* every write end closed */
        CHECK_EQ(r, (ssize_t)sizeof v);
        atomic_fetch_add(&sum_read, v);
        atomic_fetch_add(&tokens_read, 1);
    }
}

static void every_token_once(void)
{
    CHECK_EQ(pipe(p), 0);
    cap_thread_t w[WRITERS], r[READERS];
    for (int i = 0; i < READERS; i++)
        r[i] = spawn(token_reader, NULL);
    for (int i = 0; i < WRITERS; i++)
        w[i] = spawn(token_writer, (void *)(intptr_t)i);
    for (int i = 0; i < WRITERS; i++)
        join(w[i]);
    CHECK_EQ(close(p[1]), 0);
    for (int i = 0; i < READERS; i++)
        join(r[i]);
    long n = (long)WRITERS * TOKENS;
    CHECK_EQ(atomic_load(&tokens_read), n);
    CHECK_EQ(atomic_load(&sum_read), n * (n - 1) / 2);
    CHECK_EQ(close(p[0]), 0);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = write_in_handler };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    arrives(write_plain);
    arrives(write_foreign);
    arrives(write_by_handler);
    arrives(write_flagged);
    part_by_part();
    for (int round = 0; round < 5; round++) {
        atomic_store(&sum_read, 0);
        atomic_store(&tokens_read, 0);
        every_token_once();
    }
    puts("ok");
    return 0;
}
