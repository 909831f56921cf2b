/* SPDX-License-Identifier: MIT */
/* Description: stdio input on a pipe parks only the reading thread: the
 * thread that writes the input runs meanwhile, on the same worker
 * (CAP_WORKERS=1), so before (glibc's refills block the worker) each of
 * these hung:
 *  - fgets, getline, getdelim, fread and getw get input that arrives in pieces,
 *    byte-exact, a line or block split across writes included, and a
 *    block larger than the stream's buffer;
 *  - fgetc, getc, getc_unlocked (with optimisation the macro, whose
 *    refill is __uflow), getchar and scanf (on stdin) wait for their
 *    input;
 *  - fscanf in the usual loop (each call after the first starts with only
 *    a newline buffered) and on numbers and words split across writes
 *    waits for what each conversion needs, and leaves what it read ahead
 *    or pushed back to the next call (fgets, fgetc); 30,000 numbers in
 *    writes that cut lines anywhere all arrive, in order; a call that
 *    finds only blank lines buffered waits for its number; a call that
 *    finds a whole line buffered but wants more than it waits for the
 *    rest (%d %d on " 1\n"), as does one whose number the buffer cuts;
 *    a format that allocates (%ms) gets words split across writes;
 *  - EOF once the writer closes (feof, not ferror);
 *  - a signal sent to the reader with a handler without SA_RESTART ends
 *    fgets with NULL, ferror and EINTR (as glibc's read would), and the
 *    stream works after clearerr; with SA_RESTART the handler runs while
 *    fgets waits, and the line then comes;
 *  - a thread cancelled while fgets waits ends, and the next reader of
 *    the stream gets its line;
 *  - a character put back with ungetc comes first;
 *  - eight threads reading lines of one stream (fgets and getline) while
 *    the lines arrive in pieces of 1-40 bytes each get whole lines, and
 *    every line is read exactly once (each call is atomic, as POSIX wants
 *    of stdio, though it waits in between);
 *  - fgets under the caller's own flockfile, with the line already in
 *    the pipe, returns it (the wrapper leaves such a call to glibc; this
 *    part shows only that the call still works, not which path took it). */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "io/io_util.h"

static int wfd; /* the pipe's write end, for the writer threads */

struct pieces {
    const char *part[4];
    bool close_after;
};

static void *writer(void *arg)
{
    struct pieces *p = arg;
    for (int i = 0; i < 4 && p->part[i] != NULL; i++) {
        cap_usleep(2000); /* the reader is parked by now (or soon: either way) */
        size_t n = strlen(p->part[i]);
        CHECK_EQ(write(wfd, p->part[i], n), (ssize_t)n);
    }
    if (p->close_after)
        CHECK_EQ(close(wfd), 0);
    return NULL;
}

static FILE *open_pipe_stream(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    wfd = p[1];
    FILE *in = fdopen(p[0], "r");
    CHECK(in != NULL);
    return in;
}

static cap_thread_t feed(struct pieces *p)
{
    return spawn(writer, p);
}

static void lines_in_pieces(void)
{
    FILE *in = open_pipe_stream();
    struct pieces p = { { "hel", "lo\nwor", "ld\n", NULL }, false };
    cap_thread_t t = feed(&p);
    char buf[64];
    CHECK(fgets(buf, sizeof buf, in) == buf);
    CHECK_EQ(strcmp(buf, "hello\n"), 0);
    CHECK(fgets(buf, sizeof buf, in) == buf);
    CHECK_EQ(strcmp(buf, "world\n"), 0);
    join(t);

    /* A line longer than getline's first buffer, in pieces; then getdelim. */
    static char long_line[301];
    memset(long_line, 'a', 299);
    long_line[299] = '\n';
    /* The long line itself split in two. */
    static char first[151], second[151];
    memcpy(first, long_line, 150);
    memcpy(second, long_line + 150, 150);
    struct pieces q = { { first, second, "one,two", ",three\n" }, true };
    t = feed(&q);
    char *line = NULL;
    size_t cap = 0;
    CHECK_EQ(getline(&line, &cap, in), 300);
    CHECK_EQ(memcmp(line, long_line, 300), 0);
    CHECK_GE(cap, 301);
    CHECK_EQ(getdelim(&line, &cap, ',', in), 4);
    CHECK_EQ(strcmp(line, "one,"), 0);
    CHECK_EQ(getdelim(&line, &cap, ',', in), 4);
    CHECK_EQ(strcmp(line, "two,"), 0);
    CHECK_EQ(getline(&line, &cap, in), 6);
    CHECK_EQ(strcmp(line, "three\n"), 0);
    join(t);
    CHECK_EQ(getline(&line, &cap, in), -1); /* the writer closed */
    CHECK(feof(in));
    CHECK(!ferror(in));
    free(line);
    CHECK_EQ(fclose(in), 0);
}

static void blocks_and_chars(void)
{
    FILE *in = open_pipe_stream();
    struct pieces p = { { "abc", "defghij", "K", "L" }, true };
    cap_thread_t t = feed(&p);
    char buf[16] = { 0 };
    CHECK_EQ(fread(buf, 1, 10, in), 10);
    CHECK_EQ(memcmp(buf, "abcdefghij", 10), 0);
    CHECK_EQ(fgetc(in), 'K');
    CHECK_EQ(getc_unlocked(in), 'L'); /* with optimisation, the macro: __uflow */
    CHECK_EQ(getc(in), EOF);
    CHECK(feof(in));
    join(t);
    CHECK_EQ(fclose(in), 0);

    /* fread of whole items: 3 items of 4 bytes, the last one cut by EOF. */
    in = open_pipe_stream();
    struct pieces q = { { "12345", "678", "9ab", NULL }, true };
    t = feed(&q);
    char items[12];
    CHECK_EQ(fread(items, 4, 3, in), 2);
    CHECK_EQ(memcmp(items, "12345678", 8), 0);
    CHECK(feof(in));
    join(t);
    CHECK_EQ(fclose(in), 0);

    /* getw: an int's bytes, split across writes; EOF for a cut one. */
    in = open_pipe_stream();
    struct pieces r = { { "AB", "CDE", "FG", NULL }, true };
    t = feed(&r);
    int w;
    memcpy(&w, "ABCD", sizeof w);
    CHECK_EQ(getw(in), w);
    CHECK_EQ(getw(in), EOF); /* "EFG" and the writer's close */
    CHECK(feof(in));
    join(t);
    CHECK_EQ(fclose(in), 0);
}

/* A block larger than the stream's buffer (read past it, as glibc does),
 * written in pieces: byte-exact, and then the rest through the buffer. */
enum { BIG = 100000 };
static unsigned char big_data[BIG + 10];

static void *big_writer(void *arg)
{
    (void)arg;
    for (size_t at = 0; at < sizeof big_data;) {
        size_t n = sizeof big_data - at < 7000 ? sizeof big_data - at : 7000;
        CHECK_EQ(write(wfd, big_data + at, n), (ssize_t)n);
        at += n;
        cap_yield();
    }
    CHECK_EQ(close(wfd), 0);
    return NULL;
}

static void big_block(void)
{
    for (size_t i = 0; i < sizeof big_data; i++)
        big_data[i] = (unsigned char)(i * 7 + i / 251);
    FILE *in = open_pipe_stream();
    cap_thread_t t = spawn(big_writer, NULL);
    static unsigned char got[BIG + 10];
    CHECK_EQ(fgetc(in), big_data[0]); /* the buffer exists now */
    CHECK_EQ(fread(got + 1, 1, BIG - 1, in), BIG - 1);
    CHECK_EQ(fread(got + BIG, 1, 10, in), 10);
    CHECK_EQ(fread(got, 1, 1, in), 0);
    CHECK(feof(in));
    CHECK_EQ(memcmp(got + 1, big_data + 1, BIG + 9), 0);
    join(t);
    CHECK_EQ(fclose(in), 0);
}

static void ungetc_first(void)
{
    FILE *in = open_pipe_stream();
    CHECK_EQ(ungetc('x', in), 'x');
    struct pieces p = { { "yz\n", NULL }, true };
    cap_thread_t t = feed(&p);
    char buf[16];
    CHECK(fgets(buf, sizeof buf, in) == buf);
    CHECK_EQ(strcmp(buf, "xyz\n"), 0);
    join(t);
    CHECK_EQ(fclose(in), 0);
}

static void caller_holds_lock(void)
{
    FILE *in = open_pipe_stream();
    CHECK_EQ(write(wfd, "ready\n", 6), 6);
    char buf[16];
    flockfile(in);
    CHECK(fgets(buf, sizeof buf, in) == buf); /* glibc's: the data is there */
    funlockfile(in);
    CHECK_EQ(strcmp(buf, "ready\n"), 0);
    CHECK_EQ(close(wfd), 0);
    CHECK_EQ(fclose(in), 0);
}

/* ---- stdin: getchar and scanf --------------------------------------------- */

static void stdin_calls(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(dup2(p[0], 0), 0);
    CHECK_EQ(close(p[0]), 0);
    wfd = p[1];
    struct pieces q = { { "Q", "42 17\n", NULL }, true };
    cap_thread_t t = feed(&q);
    CHECK_EQ(getchar(), 'Q');
    int a = 0, b = 0;
    CHECK_EQ(scanf("%d %d", &a, &b), 2);
    CHECK_EQ(a, 42);
    CHECK_EQ(b, 17);
    join(t);
}

/* ---- scanf: input a conversion needs after it started --------------------- */

enum { NUMBERS = 30000 };

/* 1..NUMBERS, one per line, in writes of 1-700 bytes that cut lines
 * anywhere. */
static void *number_writer(void *arg)
{
    (void)arg;
    static char text[NUMBERS * 7];
    size_t len = 0;
    for (int i = 1; i <= NUMBERS; i++)
        len += (size_t)sprintf(text + len, "%d\n", i);
    for (size_t at = 0, k = 0; at < len; k++) {
        size_t n = (k * 7919) % 700 + 1;
        if (n > len - at)
            n = len - at;
        CHECK_EQ(write(wfd, text + at, n), (ssize_t)n);
        at += n;
        if (k % 4 == 0)
            cap_yield(); /* the reader often finds a line cut short */
    }
    CHECK_EQ(close(wfd), 0);
    return NULL;
}

static void scanf_parks_throughout(void)
{
    /* The usual loop: each call after the first starts with only the
     * previous line's newline in the buffer. */
    FILE *in = open_pipe_stream();
    struct pieces p = { { "1\n", "20\n", "300\n", NULL }, true };
    cap_thread_t t = feed(&p);
    int x, sum = 0, calls = 0;
    while (fscanf(in, "%d", &x) == 1) {
        sum += x;
        calls++;
    }
    CHECK_EQ(sum, 321);
    CHECK_EQ(calls, 3);
    CHECK(feof(in));
    join(t);
    CHECK_EQ(fclose(in), 0);

    /* Many numbers, lines cut anywhere: every one, in order (what a
     * call reads ahead goes back to the stream for the next). */
    in = open_pipe_stream();
    t = spawn(number_writer, NULL);
    int want = 1;
    while (fscanf(in, "%d", &x) == 1)
        CHECK_EQ(x, want++);
    CHECK_EQ(want, NUMBERS + 1);
    CHECK(feof(in));
    join(t);
    CHECK_EQ(fclose(in), 0);

    /* Numbers and a string split across writes; what scanf read ahead
     * and pushed back is the stream's again: fgets sees it, and %n
     * counts as glibc does. */
    in = open_pipe_stream();
    struct pieces q = { { "4", "5 6", "7 wo", "rd tail\n" }, true };
    t = feed(&q);
    int a = 0, b = 0, n = 0;
    char word[16];
    CHECK_EQ(fscanf(in, "%d %d %15s%n", &a, &b, word, &n), 3);
    CHECK_EQ(a, 45);
    CHECK_EQ(b, 67);
    CHECK_EQ(strcmp(word, "word"), 0);
    CHECK_EQ(n, 10);
    char rest[16];
    CHECK(fgets(rest, sizeof rest, in) == rest);
    CHECK_EQ(strcmp(rest, " tail\n"), 0);
    CHECK(fgets(rest, sizeof rest, in) == NULL);
    join(t);
    CHECK_EQ(fclose(in), 0);

    /* Only white space and blank lines left in the buffer when the call
     * begins: it waits for the number (glibc's call on the stream would
     * block the worker). */
    in = open_pipe_stream();
    CHECK_EQ(write(wfd, "5\n \n", 4), 4);
    CHECK_EQ(fscanf(in, "%d", &a), 1); /* leaves "\n \n" buffered */
    CHECK_EQ(a, 5);
    struct pieces w = { { "8\n", NULL }, true };
    t = feed(&w);
    CHECK_EQ(fscanf(in, "%d", &a), 1);
    CHECK_EQ(a, 8);
    join(t);
    CHECK_EQ(fclose(in), 0);

    /* A whole line buffered, and a format that wants more than it: the
     * call waits for the rest (glibc's call on the stream, which a
     * buffered line used to get, blocked the worker at the line's end).
     * A number cut at the buffer's end is read whole. */
    in = open_pipe_stream();
    CHECK_EQ(write(wfd, "0 1\n", 4), 4);
    CHECK_EQ(fscanf(in, "%d", &a), 1); /* leaves " 1\n" buffered */
    CHECK_EQ(a, 0);
    struct pieces m = { { "2\n3", "4\n", NULL }, true };
    t = feed(&m);
    a = b = 0;
    CHECK_EQ(fscanf(in, "%d %d", &a, &b), 2);
    CHECK_EQ(a, 1);
    CHECK_EQ(b, 2);
    CHECK_EQ(fscanf(in, "%d", &a), 1); /* "3" buffered, "4" still coming */
    CHECK_EQ(a, 34);
    CHECK_EQ(fscanf(in, "%d", &a), EOF);
    join(t);
    CHECK_EQ(fclose(in), 0);

    /* A format that allocates (%ms), its word split across writes. */
    in = open_pipe_stream();
    struct pieces al = { { "ab", "cd ef\n", NULL }, true };
    t = feed(&al);
    char *word1 = NULL, *word2 = NULL;
    CHECK_EQ(fscanf(in, "%ms %ms", &word1, &word2), 2);
    CHECK_EQ(strcmp(word1, "abcd"), 0);
    CHECK_EQ(strcmp(word2, "ef"), 0);
    free(word1);
    free(word2);
    join(t);
    CHECK_EQ(fclose(in), 0);

    /* A matching failure: the character that failed stays unread. */
    in = open_pipe_stream();
    struct pieces r = { { "12", "x\n", NULL }, true };
    t = feed(&r);
    CHECK_EQ(fscanf(in, "%d%d", &a, &b), 1);
    CHECK_EQ(a, 12);
    CHECK_EQ(fgetc(in), 'x');
    join(t);
    CHECK_EQ(fclose(in), 0);
}

/* ---- signals -------------------------------------------------------------- */

static atomic_int usr1_runs, usr2_runs, reading, got_line;
static FILE *sig_in;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&usr1_runs, 1);
}

static void on_usr2(int sig)
{
    (void)sig;
    atomic_fetch_add(&usr2_runs, 1);
}

static void *interrupted_reader(void *arg)
{
    (void)arg;
    char buf[16];
    atomic_store(&reading, 1);
    errno = 0;
    char *r = fgets(buf, sizeof buf, sig_in);
    CHECK(r == NULL);
    CHECK_EQ(errno, EINTR);
    CHECK(ferror(sig_in));
    CHECK(!feof(sig_in));
    clearerr(sig_in);
    return NULL;
}

static void *restarted_reader(void *arg)
{
    (void)arg;
    char buf[16];
    atomic_store(&reading, 1);
    CHECK(fgets(buf, sizeof buf, sig_in) == buf);
    CHECK_EQ(strcmp(buf, "late\n"), 0);
    atomic_store(&got_line, 1);
    return NULL;
}

static void signals(void)
{
    install_handler(SIGUSR1, on_usr1, 0);
    install_handler(SIGUSR2, on_usr2, SA_RESTART);
    sig_in = open_pipe_stream();

    atomic_store(&reading, 0);
    cap_thread_t t = spawn(interrupted_reader, NULL);
    while (!atomic_load(&reading))
        cap_usleep(1000);
    cap_usleep(5000);
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    join(t);
    CHECK_EQ(atomic_load(&usr1_runs), 1);

    atomic_store(&reading, 0);
    t = spawn(restarted_reader, NULL);
    while (!atomic_load(&reading))
        cap_usleep(1000);
    cap_usleep(5000);
    CHECK_EQ(cap_thread_kill(t, SIGUSR2), 0);
    while (atomic_load(&usr2_runs) == 0)
        cap_usleep(1000); /* the handler runs while fgets still waits */
    CHECK_EQ(atomic_load(&got_line), 0);
    CHECK_EQ(write(wfd, "late\n", 5), 5);
    join(t);
    CHECK_EQ(atomic_load(&got_line), 1);
    CHECK_EQ(close(wfd), 0);
    CHECK_EQ(fclose(sig_in), 0);
}

/* ---- cancellation in a wait ---------------------------------------------- */

static FILE *cancel_in;

static void *cancelled_reader(void *arg)
{
    (void)arg;
    char buf[16];
    atomic_store(&reading, 1);
    fgets(buf, sizeof buf, cancel_in); /* cancelled while it waits */
    CHECK(0);
    return NULL;
}

/* A thread cancelled in fgets's wait ends, and leaves the stream to the
 * next reader (its turn given back). */
static void cancelled_wait(void)
{
    cancel_in = open_pipe_stream();
    atomic_store(&reading, 0);
    cap_thread_t t = spawn(cancelled_reader, NULL);
    while (!atomic_load(&reading))
        cap_usleep(1000);
    cap_usleep(5000);
    CHECK_EQ(cap_thread_cancel(t), 0);
    void *ret = NULL;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK(ret == CAP_CANCELED);
    struct pieces p = { { "after\n", NULL }, true };
    t = feed(&p);
    char buf[16];
    CHECK(fgets(buf, sizeof buf, cancel_in) == buf);
    CHECK_EQ(strcmp(buf, "after\n"), 0);
    join(t);
    CHECK_EQ(fclose(cancel_in), 0);
}

/* ---- one stream, many readers: whole lines each -------------------------- */

enum { LINES = 3000, READERS = 8 };
static FILE *shared;
static atomic_int seen[LINES];
static atomic_int torn;

static void *line_reader(void *arg)
{
    bool use_getline = (intptr_t)arg % 2 != 0;
    char buf[32], *line = NULL;
    size_t cap = 0;
    for (;;) {
        const char *got;
        if (use_getline) {
            if (getline(&line, &cap, shared) < 0)
                break;
            got = line;
        } else {
            if (fgets(buf, sizeof buf, shared) == NULL)
                break;
            got = buf;
        }
        int k = -1;
        char end = 0;
        if (sscanf(got, "L%5d%c", &k, &end) != 2 || end != '\n' || strlen(got) != 7 ||
            k < 0 || k >= LINES)
            atomic_fetch_add(&torn, 1);
        else
            atomic_fetch_add(&seen[k], 1);
    }
    free(line);
    return NULL;
}

static void *line_writer(void *arg)
{
    (void)arg;
    static char all[LINES * 7 + 1];
    for (int k = 0; k < LINES; k++)
        snprintf(all + 7 * k, 8, "L%05d\n", k);
    unsigned seed = 7;
    size_t at = 0, total = (size_t)LINES * 7;
    while (at < total) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 1 + (seed >> 16) % 40;
        if (n > total - at)
            n = total - at;
        CHECK_EQ(write(wfd, all + at, n), (ssize_t)n);
        at += n;
        if ((seed >> 8) % 4 == 0)
            cap_yield(); /* readers run out of input mid-line */
    }
    CHECK_EQ(close(wfd), 0);
    return NULL;
}

static void shared_stream_lines(void)
{
    shared = open_pipe_stream();
    cap_thread_t r[READERS];
    for (int i = 0; i < READERS; i++)
        r[i] = spawn(line_reader, (void *)(intptr_t)i);
    cap_thread_t w = spawn(line_writer, NULL);
    join(w);
    for (int i = 0; i < READERS; i++)
        join(r[i]);
    CHECK_EQ(atomic_load(&torn), 0);
    for (int k = 0; k < LINES; k++)
        CHECK_EQ(atomic_load(&seen[k]), 1);
    CHECK_EQ(fclose(shared), 0);
}

int main(void)
{
    lines_in_pieces();
    blocks_and_chars();
    big_block();
    ungetc_first();
    caller_holds_lock();
    signals();
    cancelled_wait();
    shared_stream_lines();
    stdin_calls();
    scanf_parks_throughout();
    return 0;
}
