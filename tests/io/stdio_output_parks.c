/* SPDX-License-Identifier: MIT */
/* Description: stdio output to a full pipe parks only the writing
 * thread: the thread that drains the pipe runs meanwhile, on the same
 * worker (CAP_WORKERS=1), so before (glibc's flush blocks the worker)
 * each of these hung:
 *  - fprintf, fputs, fwrite (blocks larger than the stream's buffer
 *    included), putw, fputc, putc and putc_unlocked, and on stdout printf, puts
 *    and putchar, arrive byte-exact and in order, a megabyte of them
 *    through a 64 KiB pipe;
 *  - perror, psignal, psiginfo, warn, warnx, error and error_at_line, each on
 *    stderr made a full pipe: glibc's text, errno kept; errx in a child:
 *    its text and exit status;
 *  - a line-buffered stream writes through a call's last newline and
 *    keeps what follows buffered; an unbuffered one writes every call at
 *    once (glibc's behaviour, kept);
 *  - a write error: the read end closed, SIGPIPE ignored: fflush gives
 *    EOF and EPIPE, fprintf -1, fwrite 0, the error flag set;
 *  - a signal sent to a writer parked in fflush, handler without
 *    SA_RESTART: fflush gives EOF and EINTR (as glibc's write would);
 *    with SA_RESTART the handler runs while the writer waits, and the
 *    bytes then arrive;
 *  - a thread cancelled while fflush waits ends, and the next writer of
 *    the stream gets through (its turn given back);
 *  - putw that must write its buffer out to a full pipe waits for the
 *    drainer;
 *  - fflush(NULL) with a stream (not stdout or stderr) over a full pipe
 *    waits for the drainer, which runs meanwhile (glibc's flush of all
 *    streams now runs on the offload pool);
 *  - eight threads writing lines of 1-3,000 bytes to one stream with
 *    fprintf, fputs and fwrite while a slow reader drains it: every line
 *    arrives whole, exactly once, each thread's in its order (each call
 *    is atomic, as POSIX wants of stdio, though it waits in between). */
#include <err.h>
#include <error.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "fork_util.h"
#include "io/pipe_drain.h"

static FILE *open_pipe_stream(void)
{
    int p[2];
    CHECK_EQ(pipe(p), 0);
    rfd = p[0];
    FILE *out = fdopen(p[1], "w");
    CHECK(out != NULL);
    return out;
}

/* Bytes waiting in the pipe. */
static int queued(void)
{
    int n = -1;
    CHECK_EQ(ioctl(rfd, FIONREAD, &n), 0);
    return n;
}

/* ---- a megabyte through a full pipe ---------------------------------------- */

static void all_calls(FILE *out, int round)
{
    char line[256];
    int n = snprintf(line, sizeof line, "fprintf %d %s|%08x\n", round, "text", round * 7919);
    CHECK_EQ(fprintf(out, "fprintf %d %s|%08x\n", round, "text", round * 7919), n);
    expect_add(line, (size_t)n);
    CHECK_EQ(fputs("fputs line\n", out), 1);
    expect_add("fputs line\n", 11);
    static char block[10000];
    size_t len = (size_t)(round * 37 % 9000) + 1;
    memset(block, 'a' + round % 26, len);
    CHECK_EQ(fwrite(block, 1, len, out), len);
    expect_add(block, len);
    CHECK_EQ(fputc('<', out), '<');
    CHECK_EQ(putc('>', out), '>');
    expect_add("<>", 2);
    CHECK_EQ(putw(round * 7919, out), 0);
    int w = round * 7919;
    expect_add((const char *)&w, sizeof w);
    for (int i = 0; i < 300; i++) /* the macro: __overflow when full */
        CHECK_EQ(putc_unlocked('0' + i % 10, out), '0' + i % 10);
    for (int i = 0; i < 300; i++)
        expect_add(&"0123456789"[i % 10], 1);
}

static void megabyte(void)
{
    FILE *out = open_pipe_stream();
    expect_len = 0;
    struct drain d = { 0, NULL };
    cap_thread_t t = spawn(drainer, &d);
    for (int round = 0; expect_len < (1 << 20); round++)
        all_calls(out, round);
    CHECK_EQ(fclose(out), 0);
    join_and_check(t, &d);
}

/* Puts saved back on fd (the pipe's last write end closes: EOF), waits
 * for the drainer t and checks that it read what was expected. */
static void fd_back_and_check(int fd, int saved, cap_thread_t t, struct drain *d)
{
    fd_back(fd, saved);
    join_and_check(t, d);
}

/* printf, puts and putchar on stdout, made a pipe for the while. */
static void on_stdout(void)
{
    CHECK_EQ(fflush(stdout), 0);
    int saved = fd_to_pipe(1);
    struct drain d = { 0, NULL };
    cap_thread_t t = spawn(drainer, &d);
    char line[64];
    for (int i = 0; expect_len < 300000; i++) {
        int n = snprintf(line, sizeof line, "printf %d\n", i);
        CHECK_EQ(printf("printf %d\n", i), n);
        expect_add(line, (size_t)n);
        CHECK_EQ(puts("puts"), 5);
        expect_add("puts\n", 5);
        CHECK_EQ(putchar('!'), '!');
        expect_add("!", 1);
    }
    CHECK_EQ(fflush(stdout), 0);
    fd_back_and_check(1, saved, t, &d);
}

/* ---- the error reporters, on stderr made a full pipe -------------------- */

static int errx_child(void)
{
    errx(3, "bye %d", 5);
}

/* Makes stderr a full pipe drained by another thread (after a while),
 * runs report, puts stderr back, and checks what came through: the
 * fill, then expected. */
static void report_on_full_pipe(void (*report)(void), const char *expected)
{
    int saved = fd_to_pipe(2);
    int size = fill_pipe(2); /* full: the report waits */
    expect_zeros((size_t)size);
    expect_add(expected, strlen(expected));
    struct drain d = { 0, NULL };
    cap_thread_t t = spawn(drainer, &d);
    report();
    fd_back_and_check(2, saved, t, &d);
}

static void call_perror(void)
{
    errno = ENOENT;
    perror("open x");
    CHECK_EQ(errno, ENOENT);
}

static void call_psignal(void)
{
    psignal(SIGUSR1, "got");
}

static void call_psiginfo(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGUSR1;
    si.si_code = SI_USER;
    si.si_pid = 1234;
    si.si_uid = 56;
    errno = EPERM;
    psiginfo(&si, "got");
    CHECK_EQ(errno, EPERM);
}

static void call_warn(void)
{
    errno = EACCES;
    warn("file %d", 7);
    CHECK_EQ(errno, EACCES);
}

static void call_warnx(void)
{
    warnx("plain %s", "text");
}

static void call_error(void)
{
    error(0, EACCES, "e %d", 1);
}

static void call_error_at_line(void)
{
    error_at_line(0, 0, "f.c", 12, "at %s", "line");
}

static void reporters(void)
{
    CHECK_EQ(fflush(stderr), 0);
    report_on_full_pipe(call_perror, "open x: No such file or directory\n");
    report_on_full_pipe(call_psignal, "got: User defined signal 1\n");
    report_on_full_pipe(call_psiginfo, "got: User defined signal 1 (Signal sent by kill() 1234 56)\n");
    report_on_full_pipe(call_warn, "stdio_output_parks: file 7: Permission denied\n");
    report_on_full_pipe(call_warnx, "stdio_output_parks: plain text\n");
    unsigned counted = error_message_count;
    char line[512];
    snprintf(line, sizeof line, "%s: e 1: Permission denied\n", program_invocation_name);
    report_on_full_pipe(call_error, line);
    snprintf(line, sizeof line, "%s: f.c:12: at line\n", program_invocation_name);
    report_on_full_pipe(call_error_at_line, line);
    CHECK_EQ(error_message_count, counted + 2);

    /* errx in a child, its stderr a pipe of its own: the text and the
     * status (a sanitizer may add lines of its own at the child's exit). */
    int saved = dup(2);
    CHECK_GE(saved, 0);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    CHECK_EQ(dup2(p[1], 2), 2);
    CHECK_EQ(close(p[1]), 0);
    pid_t pid = fork_child(errx_child);
    CHECK_EQ(dup2(saved, 2), 2);
    CHECK_EQ(close(saved), 0);
    static char out[4096];
    size_t got = 0;
    ssize_t r;
    while ((r = read(p[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = '\0';
    CHECK_EQ(child_exit_status(pid), 3);
    CHECK(strstr(out, "stdio_output_parks: bye 5\n") != NULL);
    CHECK_EQ(close(p[0]), 0);
}

/* ---- buffering modes ---------------------------------------------------- */

static void buffering_modes(void)
{
    FILE *out = open_pipe_stream();
    CHECK_EQ(setvbuf(out, NULL, _IOLBF, 0), 0);
    CHECK_EQ(fprintf(out, "abc"), 3);
    CHECK_EQ(queued(), 0);
    CHECK_EQ(fprintf(out, "de\nfg"), 5);
    CHECK_EQ(queued(), 6); /* "abcde\n"; "fg" stays buffered */
    CHECK_EQ(fflush(out), 0);
    CHECK_EQ(queued(), 8);
    CHECK_EQ(fclose(out), 0);
    char buf[16];
    CHECK_EQ(read(rfd, buf, sizeof buf), 8);
    CHECK_EQ(memcmp(buf, "abcde\nfg", 8), 0);
    CHECK_EQ(close(rfd), 0);

    out = open_pipe_stream();
    CHECK_EQ(setvbuf(out, NULL, _IONBF, 0), 0);
    CHECK_EQ(fputs("xy", out), 1);
    CHECK_EQ(queued(), 2);
    CHECK_EQ(fputc('z', out), 'z');
    CHECK_EQ(queued(), 3);
    CHECK_EQ(fclose(out), 0);
    CHECK_EQ(close(rfd), 0);

    /* Fully buffered: nothing until the buffer fills or a flush. */
    out = open_pipe_stream();
    CHECK_EQ(fputs("full\n", out), 1);
    CHECK_EQ(queued(), 0);
    CHECK_EQ(fflush(out), 0);
    CHECK_EQ(queued(), 5);
    CHECK_EQ(fclose(out), 0);
    CHECK_EQ(close(rfd), 0);
}

/* ---- errors ------------------------------------------------------------- */

static void write_errors(void)
{
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    CHECK_EQ(sigaction(SIGPIPE, &ign, &old), 0);
    FILE *out = open_pipe_stream();
    CHECK_EQ(close(rfd), 0);
    CHECK_EQ(fputs("buffered", out), 1); /* fits: no write yet */
    errno = 0;
    CHECK_EQ(fflush(out), EOF);
    CHECK_EQ(errno, EPIPE);
    CHECK(ferror(out));
    clearerr(out);
    static char block[20000];
    errno = 0;
    CHECK_LT(fwrite(block, 1, sizeof block, out), sizeof block); /* (glibc counts what its
                                                                    buffer took: 4096) */
    CHECK_EQ(errno, EPIPE);
    CHECK(ferror(out));
    clearerr(out);
    block[sizeof block - 1] = '\0';
    memset(block, 'b', sizeof block - 1);
    errno = 0;
    CHECK_EQ(fprintf(out, "%s", block), -1); /* more than the buffer holds */
    CHECK_EQ(errno, EPIPE);
    CHECK(ferror(out));
    CHECK_EQ(fclose(out), 0); /* nothing left to write */
    CHECK_EQ(sigaction(SIGPIPE, &old, NULL), 0);
}

/* ---- a full pipe: signals and cancellation --------------------------------- */

static atomic_int usr1_runs, usr2_runs, writing;
static FILE *full_out;

static int fill_size;

/* A stream over a pipe already full (fill_size bytes), with 100 bytes
 * buffered. */
static FILE *full_pipe_stream(void)
{
    FILE *out = open_pipe_stream();
    fill_size = fill_pipe(fileno(out));
    static char hundred[100];
    memset(hundred, 'h', sizeof hundred);
    CHECK_EQ(fwrite(hundred, 1, sizeof hundred, out), sizeof hundred);
    return out;
}

/* Reads the bytes that filled the pipe. */
static void drain_fill(void)
{
    char *buf = malloc((size_t)fill_size);
    CHECK(buf != NULL);
    read_exactly_n(rfd, buf, (size_t)fill_size, (size_t)fill_size);
    for (int i = 0; i < fill_size; i++)
        CHECK_EQ(buf[i], 0);
    free(buf);
}

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

static void *interrupted_flush(void *arg)
{
    (void)arg;
    atomic_store(&writing, 1);
    errno = 0;
    CHECK_EQ(fflush(full_out), EOF);
    CHECK_EQ(errno, EINTR);
    CHECK(ferror(full_out));
    clearerr(full_out);
    return NULL;
}

static void *restarted_flush(void *arg)
{
    (void)arg;
    atomic_store(&writing, 1);
    CHECK_EQ(fflush(full_out), 0);
    return NULL;
}

static void wait_writing(void)
{
    while (!atomic_load(&writing))
        cap_usleep(1000);
    cap_usleep(5000); /* parked in its write by now */
}

static void signals(void)
{
    install_handler(SIGUSR1, on_usr1, 0);
    install_handler(SIGUSR2, on_usr2, SA_RESTART);

    full_out = full_pipe_stream();
    atomic_store(&writing, 0);
    cap_thread_t t = spawn(interrupted_flush, NULL);
    wait_writing();
    CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
    join(t);
    CHECK_EQ(atomic_load(&usr1_runs), 1);
    drain_fill();
    CHECK_EQ(fputs("next\n", full_out), 1); /* the stream works after clearerr */
    CHECK_EQ(fflush(full_out), 0);
    char buf[16];
    CHECK_EQ(read(rfd, buf, sizeof buf), 5);
    CHECK_EQ(memcmp(buf, "next\n", 5), 0);
    CHECK_EQ(fclose(full_out), 0);
    CHECK_EQ(close(rfd), 0);

    full_out = full_pipe_stream();
    atomic_store(&writing, 0);
    t = spawn(restarted_flush, NULL);
    wait_writing();
    CHECK_EQ(cap_thread_kill(t, SIGUSR2), 0);
    while (atomic_load(&usr2_runs) == 0)
        cap_usleep(1000); /* the handler runs while the flush still waits */
    drain_fill();
    join(t);
    CHECK_EQ(queued(), 100);
    CHECK_EQ(fclose(full_out), 0);
    CHECK_EQ(close(rfd), 0);
}

static void *cancelled_flush(void *arg)
{
    (void)arg;
    atomic_store(&writing, 1);
    fflush(full_out); /* cancelled while it waits */
    CHECK(0);
    return NULL;
}

static void cancelled_wait(void)
{
    full_out = full_pipe_stream();
    atomic_store(&writing, 0);
    cap_thread_t t = spawn(cancelled_flush, NULL);
    wait_writing();
    CHECK_EQ(cap_thread_cancel(t), 0);
    void *ret = NULL;
    CHECK_EQ(cap_thread_join(t, &ret), 0);
    CHECK(ret == CAP_CANCELED);
    drain_fill();
    CHECK_EQ(fputs("after\n", full_out), 1);
    CHECK_EQ(fflush(full_out), 0);
    char buf[16];
    CHECK_EQ(read(rfd, buf, sizeof buf), 6);
    CHECK_EQ(memcmp(buf, "after\n", 6), 0);
    CHECK_EQ(fclose(full_out), 0);
    CHECK_EQ(close(rfd), 0);
}

/* ---- putw must write: the buffer full but 2 bytes, the pipe full ------------ */

static void putw_waits(void)
{
    FILE *out = open_pipe_stream();
    CHECK_EQ(setvbuf(out, NULL, _IOFBF, 4096), 0);
    expect_len = 0;
    expect_zeros((size_t)fill_pipe(fileno(out)));
    static char almost[4094];
    memset(almost, 'p', sizeof almost);
    CHECK_EQ(fwrite(almost, 1, sizeof almost, out), sizeof almost); /* buffered */
    expect_add(almost, sizeof almost);
    struct drain d = { 0, NULL };
    cap_thread_t t = spawn(drainer, &d);
    int w = 0x5a5a1234;
    CHECK_EQ(putw(w, out), 0); /* glibc's blocked the worker: the drainer never ran */
    expect_add((const char *)&w, sizeof w);
    CHECK_EQ(fclose(out), 0);
    join_and_check(t, &d);
}

/* ---- fflush(NULL) with a stream behind a full pipe ------------------------- */

static void flush_all_waits(void)
{
    full_out = full_pipe_stream(); /* the pipe full, 100 bytes buffered */
    struct drain d = { 0, NULL };
    cap_thread_t t = spawn(drainer, &d); /* drains after a while */
    CHECK_EQ(fflush(NULL), 0);
    CHECK_EQ(fclose(full_out), 0);
    join(t);
    CHECK_EQ(d.total, (size_t)fill_size + 100);
    for (int i = 0; i < fill_size; i++)
        CHECK_EQ(d.got[i], 0);
    CHECK_EQ(d.got[fill_size], 'h');
    free(d.got);
    CHECK_EQ(close(rfd), 0);
}

/* ---- one stream, many writers: whole lines each --------------------------- */

enum { WRITERS = 8, PER_WRITER = 400 };
static FILE *shared;

/* Line k of writer w: "w k len " and then len bytes of one letter. */
static size_t make_line(char *buf, int w, int k)
{
    int len = (w * 131 + k * 977) % 3000 + 1;
    int n = sprintf(buf, "%d %d %d ", w, k, len);
    memset(buf + n, 'a' + (w + k) % 26, (size_t)len);
    buf[n + len] = '\n';
    return (size_t)n + (size_t)len + 1;
}

static void *line_writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    char *buf = malloc(4096);
    CHECK(buf != NULL);
    for (int k = 0; k < PER_WRITER; k++) {
        size_t n = make_line(buf, w, k);
        switch (k % 3) {
        case 0:
            CHECK_EQ(fwrite(buf, 1, n, shared), n);
            break;
        case 1:
            buf[n] = '\0';
            CHECK_EQ(fputs(buf, shared), 1);
            break;
        default:
            CHECK_EQ(fprintf(shared, "%.*s", (int)n, buf), (int)n);
        }
    }
    free(buf);
    return NULL;
}

static void *slow_reader(void *arg)
{
    FILE *in = fdopen(rfd, "r");
    CHECK(in != NULL);
    int next[WRITERS] = { 0 };
    char *line = NULL, want[4096];
    size_t cap = 0;
    ssize_t n;
    int lines = 0;
    while ((n = getline(&line, &cap, in)) > 0) {
        int w, k;
        CHECK_EQ(sscanf(line, "%d %d", &w, &k), 2);
        CHECK(w >= 0 && w < WRITERS);
        CHECK_EQ(k, next[w]); /* each writer's lines in order, none lost */
        next[w]++;
        size_t m = make_line(want, w, k);
        CHECK_EQ((size_t)n, m);
        CHECK_EQ(memcmp(line, want, m), 0); /* whole: no other bytes inside */
        if (++lines % 50 == 0)
            cap_usleep(500); /* slow: the writers fill the pipe and park */
    }
    for (int w = 0; w < WRITERS; w++)
        CHECK_EQ(next[w], PER_WRITER);
    free(line);
    CHECK_EQ(fclose(in), 0);
    *(int *)arg = lines;
    return NULL;
}

static void shared_stream_lines(void)
{
    shared = open_pipe_stream();
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
    megabyte();
    on_stdout();
    reporters();
    buffering_modes();
    write_errors();
    signals();
    cancelled_wait();
    putw_waits();
    flush_all_waits();
    shared_stream_lines();
    return 0;
}
