/* SPDX-License-Identifier: MIT */
/* Description: wide-character stdio on a pipe parks only the calling
 * thread: the thread at the pipe's other end runs meanwhile, on the same
 * worker (CAP_WORKERS=1), so before (glibc's conversion and write, or
 * read, block the worker) each of these hung:
 *  - fwprintf (short and longer than 256 characters, a NUL inside),
 *    fputws, fputwc, putwc and fputwc_unlocked in a UTF-8 locale arrive
 *    byte-exact, half a megabyte through a 64 KiB pipe; fclose writes
 *    the rest; wprintf and putwchar on stdout, fwprintf and fputwc on
 *    an unbuffered stream over a full pipe; a line-buffered stream
 *    keeps what has no newline and writes at a newline, as glibc's; fflush of a wide stream and fflush(NULL)
 *    with another wide stream over a full pipe wait for its drainer;
 *  - input that comes in pieces, a multibyte character split between
 *    two writes included: fgetws gets the whole line, fwscanf its
 *    conversions, fgetwc and getwc the characters, then WEOF and the EOF
 *    flag at the end; after a character pushed back with ungetwc, the
 *    rest of the buffer without new input;
 *  - a write error (read end closed, SIGPIPE ignored): fputws EOF and
 *    fwprintf -1 with EPIPE, the error flag set; with SIGPIPE's default
 *    action the writer dies of SIGPIPE;
 *  - a signal (handler without SA_RESTART) ends a waiting fgetwc with
 *    WEOF, EINTR and the error flag; a thread cancelled in fgetws ends
 *    and the next reader of the stream gets its line;
 *  - a flockfile holder's wide output stays whole while it sleeps inside
 *    (another thread's fputws waits for its funlockfile);
 *  - six threads writing lines with fwprintf and fputws to one stream
 *    while a slow reader drains it: every line whole, each thread's in
 *    order. */
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <wchar.h>

#include "fork_util.h"
#include "io/pipe_drain.h"

static FILE *wide_pipe_stream(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    rfd = p[0];
    FILE *out = fdopen(p[1], "w");
    CHECK(out != NULL);
    CHECK_GT(fwide(out, 1), 0);
    return out;
}

/* ---- what should arrive ------------------------------------------------- */

/* The n wide characters at s, as UTF-8 bytes (a NUL as a 0 byte). */
static void expect_wide(const wchar_t *s, size_t n)
{
    mbstate_t st;
    memset(&st, 0, sizeof st);
    for (size_t i = 0; i < n; i++) {
        CHECK(expect_len + MB_LEN_MAX <= sizeof expect);
        size_t b = wcrtomb(expect + expect_len, s[i], &st);
        CHECK(b != (size_t)-1);
        expect_len += b;
    }
}

/* ---- output: half a megabyte through a full pipe ---------------------------- */

static void all_calls(FILE *out, int round)
{
    wchar_t line[128];
    int n = swprintf(line, 128, L"fwprintf %d %ls|%lc\n", round, L"ünïcödé", (wint_t)L'€');
    CHECK_GT(n, 0);
    CHECK_EQ(fwprintf(out, L"fwprintf %d %ls|%lc\n", round, L"ünïcödé", (wint_t)L'€'), n);
    expect_wide(line, (size_t)n);
    CHECK_EQ(fputws(L"fputws ✓ line\n", out), 1);
    expect_wide(L"fputws ✓ line\n", 14);
    CHECK_EQ(fputwc(L'é', out), (wint_t)L'é');
    CHECK_EQ(putwc(L'ß', out), (wint_t)L'ß');
    CHECK_EQ(fputwc_unlocked(L'∑', out), (wint_t)L'∑');
    expect_wide(L"éß∑", 3);
    if (round % 7 == 0) { /* longer than the first formatting buffer */
        static wchar_t longer[600];
        size_t len = 300 + (size_t)round % 200;
        for (size_t i = 0; i < len; i++)
            longer[i] = i % 3 == 0 ? L'ж' : L'a' + (wchar_t)(i % 26);
        longer[len] = L'\0';
        CHECK_EQ(fwprintf(out, L"<%ls>", longer), (int)len + 2);
        expect_wide(L"<", 1);
        expect_wide(longer, len);
        expect_wide(L">", 1);
    }
    if (round % 11 == 0) { /* a NUL inside the text */
        CHECK_EQ(fwprintf(out, L"[%lc]", (wint_t)L'\0'), 3);
        expect_wide(L"[\0]", 3);
    }
}

static void output_half_megabyte(void)
{
    FILE *out = wide_pipe_stream();
    expect_len = 0;
    struct drain d = { 0, NULL };
    cap_thread_t t = spawn(drainer, &d);
    for (int round = 0; expect_len < (1 << 19); round++)
        all_calls(out, round);
    CHECK_EQ(fclose(out), 0);
    join_and_check(t, &d);
}

static void on_stdout_and_unbuffered(void)
{
    int saved = fd_to_pipe(1);
    struct drain d = { 0, NULL };
    cap_thread_t t = spawn(drainer, &d);
    wchar_t line[64];
    for (int i = 0; expect_len < 200000; i++) {
        int n = swprintf(line, 64, L"wprintf %d ü\n", i);
        CHECK_EQ(wprintf(L"wprintf %d ü\n", i), n);
        expect_wide(line, (size_t)n);
        CHECK_EQ(putwchar(L'λ'), (wint_t)L'λ');
        expect_wide(L"λ", 1);
    }
    CHECK_EQ(fflush(stdout), 0);
    fd_back(1, saved);
    join_and_check(t, &d);

    /* An unbuffered stream (as stderr is; stderr itself stays a byte
     * stream for the checks' messages): each call writes, and waits. */
    FILE *out = wide_pipe_stream();
    CHECK_EQ(setvbuf(out, NULL, _IONBF, 0), 0);
    expect_len = 0;
    expect_zeros((size_t)fill_pipe(fileno(out)));
    d = (struct drain){ 0, NULL };
    t = spawn(drainer, &d);
    CHECK_EQ(fwprintf(out, L"unbuffered %ls\n", L"wäits"), 17);
    expect_wide(L"unbuffered wäits\n", 17);
    CHECK_EQ(fputwc(L'é', out), (wint_t)L'é');
    expect_wide(L"é", 1);
    CHECK_EQ(fclose(out), 0);
    join_and_check(t, &d);
}

/* Bytes waiting in the pipe. */
static int queued(void)
{
    int n = -1;
    CHECK_EQ(ioctl(rfd, FIONREAD, &n), 0);
    return n;
}

/* A line-buffered stream writes at each newline, as glibc's does:
 * characters and text without a newline stay buffered. */
static void line_buffered(void)
{
    FILE *out = wide_pipe_stream();
    CHECK_EQ(setvbuf(out, NULL, _IOLBF, 0), 0);
    CHECK_EQ(fputwc(L'a', out), (wint_t)L'a'); /* (the first sets up the buffer) */
    CHECK_EQ(queued(), 0);
    CHECK_EQ(putwc(L'é', out), (wint_t)L'é');
    CHECK_EQ(fputws(L"bc", out), 1);
    CHECK_EQ(fwprintf(out, L"%d", 42), 2);
    CHECK_EQ(queued(), 0);
    CHECK_EQ(putwc(L'\n', out), (wint_t)L'\n');
    CHECK_EQ(queued(), 8); /* aébc42\n: é is two bytes */
    CHECK_EQ(fputws(L"x\ny", out), 1); /* glibc's wide calls write through the tail too */
    CHECK_EQ(queued(), 11);
    CHECK_EQ(fclose(out), 0);
    CHECK_EQ(queued(), 11);
    char buf[16];
    read_exactly_n(rfd, buf, sizeof buf, 11);
    CHECK_EQ(memcmp(buf, "a\xc3\xa9" "bc42\nx\ny", 11), 0);
    CHECK_EQ(close(rfd), 0);
}

/* fflush of a wide stream over a full pipe, and fflush(NULL) with one. */
static void flushes_wait(void)
{
    for (int all = 0; all < 2; all++) {
        FILE *out = wide_pipe_stream();
        expect_len = 0;
        expect_zeros((size_t)fill_pipe(fileno(out)));
        CHECK_EQ(fputws(L"pending ✓\n", out), 1); /* buffered */
        expect_wide(L"pending ✓\n", 10);
        struct drain d = { 0, NULL };
        cap_thread_t t = spawn(drainer, &d);
        CHECK_EQ(fflush(all ? NULL : out), 0);
        CHECK_EQ(fclose(out), 0); /* nothing left to write */
        join_and_check(t, &d);
    }
}

/* ---- input in pieces ---------------------------------------------------- */

static int wfd_in;

static void put_bytes(const char *s, size_t n)
{
    CHECK_EQ(write(wfd_in, s, n), (ssize_t)n);
}

static void *piecewise_writer(void *arg)
{
    (void)arg;
    cap_usleep(10000); /* the reader waits first */
    put_bytes("h\xc3\xa9llo ", 7);
    cap_usleep(10000);
    put_bytes("w\xc3", 2); /* ö cut in two */
    cap_usleep(10000);
    put_bytes("\xb6rld\n", 5);
    cap_usleep(10000);
    put_bytes("42 ", 3);
    cap_usleep(10000);
    put_bytes("\xc3\xbcn\xc3\xaf\n", 6); /* ünï */
    cap_usleep(10000);
    put_bytes("xy", 2);
    CHECK_EQ(close(wfd_in), 0);
    return NULL;
}

static void input_in_pieces(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    wfd_in = p[1];
    FILE *in = fdopen(p[0], "r");
    CHECK(in != NULL);
    cap_thread_t t = spawn(piecewise_writer, NULL);
    wchar_t line[64];
    CHECK(fgetws(line, 64, in) == line);
    CHECK(wcscmp(line, L"héllo wörld\n") == 0);
    int number = 0;
    wchar_t word[16];
    CHECK_EQ(fwscanf(in, L"%d %15ls", &number, word), 2);
    CHECK_EQ(number, 42);
    CHECK(wcscmp(word, L"ünï") == 0);
    CHECK_EQ(fgetwc(in), (wint_t)L'\n');
    CHECK_EQ(getwc(in), (wint_t)L'x');
    CHECK_EQ(fgetwc_unlocked(in), (wint_t)L'y');
    errno = 0;
    CHECK_EQ(fgetwc(in), WEOF);
    CHECK(feof(in));
    CHECK(!ferror(in));
    CHECK_EQ(errno, 0);
    CHECK(fgetws(line, 64, in) == NULL);
    join(t);
    CHECK_EQ(fclose(in), 0);
}

/* A character pushed back that is not the one before goes to glibc's
 * push-back area; once it is read again, the rest of the buffer follows
 * without new input (the writer stays open and silent). */
static void pushed_back_then_buffered(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(write(p[1], "a\xc3\xa9" "b", 4), 4);
    FILE *in = fdopen(p[0], "r");
    CHECK(in != NULL);
    CHECK_EQ(fgetwc(in), (wint_t)L'a');
    CHECK_EQ(ungetwc(L'Q', in), (wint_t)L'Q');
    CHECK_EQ(fgetwc(in), (wint_t)L'Q');
    CHECK_EQ(fgetwc(in), (wint_t)L'é');
    CHECK_EQ(ungetwc(L'R', in), (wint_t)L'R');
    wchar_t line[8];
    CHECK(fgetws(line, 3, in) == line);
    CHECK(wcscmp(line, L"Rb") == 0);
    CHECK_EQ(fclose(in), 0);
    CHECK_EQ(close(p[1]), 0);
}

/* ---- errors, signals, cancellation ------------------------------------------ */

static void write_errors(void)
{
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    CHECK_EQ(sigaction(SIGPIPE, &ign, &old), 0);
    FILE *out = wide_pipe_stream();
    CHECK_EQ(close(rfd), 0);
    static wchar_t big[20000];
    wmemset(big, L'é', 19999);
    errno = 0;
    CHECK_EQ(fputws(big, out), EOF);
    CHECK_EQ(errno, EPIPE);
    CHECK(ferror(out));
    clearerr(out);
    errno = 0;
    CHECK_EQ(fwprintf(out, L"%ls", big), -1);
    CHECK_EQ(errno, EPIPE);
    CHECK(ferror(out));
    fclose(out);
    CHECK_EQ(sigaction(SIGPIPE, &old, NULL), 0);
}

/* With SIGPIPE's default action, the writer dies of it, as with glibc
 * (the write is made on a kernel thread of the offload pool). */
static int dies_of_sigpipe(void)
{
    FILE *out = wide_pipe_stream();
    CHECK_EQ(close(rfd), 0);
    fputws(L"nobody reads ✗\n", out);
    fflush(out);
    return 3;
}

static void sigpipe_kills(void)
{
    pid_t pid = fork_child(dies_of_sigpipe);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(WTERMSIG(status), SIGPIPE);
}

static atomic_int usr1_runs, reading;
static FILE *shared_in;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&usr1_runs, 1);
}

static void *interrupted_read(void *arg)
{
    (void)arg;
    atomic_store(&reading, 1);
    errno = 0;
    CHECK_EQ(fgetwc(shared_in), WEOF);
    CHECK_EQ(errno, EINTR);
    CHECK(ferror(shared_in));
    clearerr(shared_in);
    return NULL;
}

static void *cancelled_read(void *arg)
{
    (void)arg;
    wchar_t line[16];
    atomic_store(&reading, 1);
    fgetws(line, 16, shared_in); /* cancelled while it waits */
    CHECK(0);
    return NULL;
}

static void wait_reading(void)
{
    while (!atomic_load(&reading))
        cap_usleep(1000);
    cap_usleep(5000); /* parked in its wait by now */
}

static void signal_and_cancel(void)
{
    install_handler(SIGUSR1, on_usr1, 0);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    shared_in = fdopen(p[0], "r");
    CHECK(shared_in != NULL);
    CHECK_GT(fwide(shared_in, 1), 0);

    atomic_store(&reading, 0);
    cap_thread_t t = spawn(interrupted_read, NULL);
    wait_reading();
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    join(t);
    CHECK_EQ(atomic_load(&usr1_runs), 1);

    atomic_store(&reading, 0);
    t = spawn(cancelled_read, NULL);
    wait_reading();
    CHECK_EQ(cap_thread_cancel(t), 0);
    void *ret = NULL;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK(ret == CAP_CANCELED);

    CHECK_EQ(write(p[1], "after ✓\n", 10), 10); /* the stream works on */
    wchar_t line[16];
    CHECK(fgetws(line, 16, shared_in) == line);
    CHECK(wcscmp(line, L"after ✓\n") == 0);
    CHECK_EQ(close(p[1]), 0);
    CHECK_EQ(fclose(shared_in), 0);
}

/* ---- flockfile and many writers -------------------------------------------- */

static FILE *shared;

static void *locker(void *arg)
{
    (void)arg;
    flockfile(shared);
    CHECK_EQ(fputws(L"A1 ", shared), 1);
    cap_usleep(20000); /* the other thread tries meanwhile */
    CHECK_EQ(fputws(L"A2\n", shared), 1);
    funlockfile(shared);
    return NULL;
}

static void *intruder(void *arg)
{
    (void)arg;
    CHECK_EQ(fputws(L"B\n", shared), 1);
    return NULL;
}

static void flockfile_holds(void)
{
    shared = wide_pipe_stream();
    cap_thread_t a = spawn(locker, NULL);
    cap_usleep(5000); /* a holds the stream, asleep */
    cap_thread_t b = spawn(intruder, NULL);
    join(a);
    join(b);
    CHECK_EQ(fclose(shared), 0);
    char buf[32];
    read_exactly_n(rfd, buf, sizeof buf, 8);
    CHECK_EQ(memcmp(buf, "A1 A2\nB\n", 8), 0);
    CHECK_EQ(close(rfd), 0);
}

enum { WRITERS = 6, PER_WRITER = 150 };

static void *line_writer(void *arg)
{
    int id = (int)(intptr_t)arg;
    static wchar_t pad[WRITERS][400];
    for (int i = 0; i < PER_WRITER; i++) {
        size_t len = (size_t)(i * 37 + id * 101) % 380;
        wmemset(pad[id], L'ö', len);
        pad[id][len] = L'\0';
        if (i % 2 == 0) {
            CHECK_GT(fwprintf(shared, L"%d %d %ls\n", id, i, pad[id]), 0);
        } else {
            wchar_t line[420];
            swprintf(line, 420, L"%d %d %ls\n", id, i, pad[id]);
            CHECK_EQ(fputws(line, shared), 1);
        }
        if (i % 16 == 0)
            cap_yield();
    }
    return NULL;
}

static void *slow_reader(void *arg)
{
    int *lines = arg;
    FILE *in = fdopen(rfd, "r");
    CHECK(in != NULL);
    int next[WRITERS] = { 0 };
    wchar_t line[1024];
    for (int k = 0; fgetws(line, 1024, in) != NULL; k++) {
        int id = -1, i = -1, used = 0;
        CHECK_EQ(swscanf(line, L"%d %d%n", &id, &i, &used), 2);
        CHECK(id >= 0 && id < WRITERS);
        CHECK_EQ(i, next[id]); /* each writer's lines in order, none lost */
        next[id]++;
        size_t len = (size_t)(i * 37 + id * 101) % 380, at = (size_t)used + 1;
        CHECK_EQ(line[used], L' ');
        for (size_t j = 0; j < len; j++)
            CHECK_EQ(line[at + j], L'ö'); /* whole: no other line inside */
        CHECK_EQ(line[at + len], L'\n');
        CHECK_EQ(line[at + len + 1], L'\0');
        (*lines)++;
        if (k % 64 == 0)
            cap_usleep(2000); /* the writers fill the pipe meanwhile */
    }
    CHECK_EQ(fclose(in), 0);
    return NULL;
}

static void shared_stream_lines(void)
{
    shared = wide_pipe_stream();
    int lines = 0;
    cap_thread_t r = spawn(slow_reader, &lines);
    cap_thread_t w[WRITERS];
    for (int i = 0; i < WRITERS; i++)
        w[i] = spawn(line_writer, (void *)(intptr_t)i);
    for (int i = 0; i < WRITERS; i++)
        join(w[i]);
    CHECK_EQ(fclose(shared), 0);
    join(r);
    CHECK_EQ(lines, WRITERS * PER_WRITER);
}

int main(void)
{
    CHECK(setlocale(LC_ALL, "C.UTF-8") != NULL);
    output_half_megabyte();
    on_stdout_and_unbuffered();
    line_buffered();
    flushes_wait();
    input_in_pieces();
    pushed_back_then_buffered();
    write_errors();
    sigpipe_kills();
    signal_and_cancel();
    flockfile_holds();
    shared_stream_lines();
    return 0;
}
