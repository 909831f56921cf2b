/* SPDX-License-Identifier: MIT */
/* Description: blocking reads and writes of a terminal (a pseudo-terminal
 * pair made here), from threads, answer as on glibc and Linux:
 *  - canonical mode: a read waits for the whole line, typed in two parts;
 *  - non-canonical mode, by VMIN and VTIME: VMIN = 0, VTIME = 0 returns 0
 *    at once; VMIN = 0, VTIME = 2 returns 0 once the 0.2 s pass without
 *    input, and the bytes when they come first; VMIN = 4 waits for four
 *    bytes written in two parts, or fills a smaller buffer; VMIN = 4 with
 *    VTIME = 10 waits for the first byte without bound, then for four
 *    (the second part comes within the gap), or returns the two there are
 *    once a 0.1 s gap (VTIME = 1) passes;
 *  - a write of 256 KiB, far more than the terminal holds, completes
 *    while the main thread reads the other side (all of it, in order);
 *    four threads writing at once lose nothing;
 *  - a caught signal (no SA_RESTART) ends a read waiting for input with
 *    EINTR, and a write blocked on a full terminal with the count it had
 *    queued;
 *  - a cancel ends a thread blocked in a read;
 *  - the master's close ends a read blocked on the slave with EIO;
 *  - with O_NONBLOCK a read of nothing is EAGAIN; preadv2 with RWF_NOWAIT
 *    is refused (EOPNOTSUPP);
 *  - tcsetattr with TCSADRAIN and TCSAFLUSH (which drops unread input),
 *    tcsendbreak and tcdrain answer as glibc's, with EINVAL, ENOTTY and
 *    EBADF where they fail;
 *  - fgets on a stream over the terminal gets its line; getc with VMIN = 0
 *    finds end of input at once (VTIME = 0) or after VTIME, and the
 *    byte typed within VTIME; with VMIN = 4 and a gap timer its refill
 *    waits for the four bytes while the other threads run.
 * Every wait here depends on another thread, so a call that held up the
 * threads beside it never ends (the alarm fails the program). Exits 77
 * (skipped) where no pseudo-terminal can be made. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static int master, slave;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void open_pair(void)
{
    master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0) {
        perror("posix_openpt");
        exit(77);
    }
    EXPECT_EQ(grantpt(master), 0);
    EXPECT_EQ(unlockpt(master), 0);
    slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    EXPECT(slave >= 0);
}

static void set_mode(int canonical, int vmin, int vtime)
{
    struct termios t;
    EXPECT_EQ(tcgetattr(slave, &t), 0);
    cfmakeraw(&t);
    if (canonical)
        t.c_lflag |= ICANON;
    t.c_cc[VMIN] = (cc_t)vmin;
    t.c_cc[VTIME] = (cc_t)vtime;
    EXPECT_EQ(tcsetattr(slave, TCSANOW, &t), 0);
    EXPECT_EQ(tcflush(slave, TCIOFLUSH), 0);
}

/* Types `first` into the terminal, then `second` after a pause. */
struct typing {
    const char *first, *second;
    long pause_ms;
};

static void *typist(void *arg)
{
    struct typing *t = arg;
    sleep_ms(20);
    EXPECT_EQ(write(master, t->first, strlen(t->first)), (long)strlen(t->first));
    if (t->second != NULL) {
        sleep_ms(t->pause_ms);
        EXPECT_EQ(write(master, t->second, strlen(t->second)), (long)strlen(t->second));
    }
    return NULL;
}

/* Reads the slave while a typist types; returns the count, buf filled. */
static long read_while_typing(char *buf, size_t n, struct typing *t)
{
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, typist, t), 0);
    long r = read(slave, buf, n);
    EXPECT_EQ(pthread_join(th, NULL), 0);
    return r;
}

static void canonical_line(void)
{
    set_mode(1, 1, 0);
    char buf[32] = { 0 };
    struct typing t = { "hel", "lo\n", 50 };
    EXPECT_EQ(read_while_typing(buf, sizeof buf, &t), 6);
    EXPECT_EQ(memcmp(buf, "hello\n", 6), 0);
}

static void vmin_zero(void)
{
    char buf[16];
    set_mode(0, 0, 0);
    long long t0 = now_ms();
    EXPECT_EQ(read(slave, buf, sizeof buf), 0); /* nothing there: at once */
    EXPECT_EQ(write(master, "xy", 2), 2);
    sleep_ms(20);
    EXPECT_EQ(read(slave, buf, sizeof buf), 2);

    set_mode(0, 0, 2);
    t0 = now_ms();
    EXPECT_EQ(read(slave, buf, sizeof buf), 0); /* 0.2 s without input */
    EXPECT(now_ms() - t0 >= 150);

    set_mode(0, 0, 50); /* 5 s, but the bytes come first */
    struct typing t = { "abc", NULL, 0 };
    long r = read_while_typing(buf, sizeof buf, &t);
    EXPECT(r >= 1 && r <= 3);
    EXPECT_EQ(memcmp(buf, "abc", (size_t)r), 0);
    EXPECT_EQ(tcflush(slave, TCIFLUSH), 0);
}

static void vmin_four(void)
{
    char buf[16] = { 0 };
    set_mode(0, 4, 0);
    struct typing t = { "ab", "cd", 50 };
    EXPECT_EQ(read_while_typing(buf, sizeof buf, &t), 4);
    EXPECT_EQ(memcmp(buf, "abcd", 4), 0);

    memset(buf, 0, sizeof buf); /* a buffer of two: full after the first part */
    struct typing t2 = { "ef", "gh", 50 };
    EXPECT_EQ(read_while_typing(buf, 2, &t2), 2);
    EXPECT_EQ(memcmp(buf, "ef", 2), 0);
    EXPECT_EQ(read(slave, buf, 2), 2); /* "gh" came meanwhile */
    EXPECT_EQ(memcmp(buf, "gh", 2), 0);
}

static void vmin_four_with_gap(void)
{
    char buf[16] = { 0 };
    set_mode(0, 4, 10); /* gaps of up to 1 s */
    struct typing t = { "ab", "cd", 50 };
    EXPECT_EQ(read_while_typing(buf, sizeof buf, &t), 4);
    EXPECT_EQ(memcmp(buf, "abcd", 4), 0);

    set_mode(0, 4, 1); /* a 0.1 s gap ends it with what came */
    struct typing t2 = { "ij", NULL, 0 };
    memset(buf, 0, sizeof buf);
    EXPECT_EQ(read_while_typing(buf, sizeof buf, &t2), 2);
    EXPECT_EQ(memcmp(buf, "ij", 2), 0);
}

enum { BIG = 256 * 1024, WRITERS = 4, EACH = 20000 };
static char big[BIG];

static void *big_writer(void *arg)
{
    (void)arg;
    EXPECT_EQ(write(slave, big, BIG), BIG);
    return NULL;
}

static void big_write(void)
{
    set_mode(0, 1, 0); /* raw: no output processing */
    for (size_t i = 0; i < BIG; i++)
        big[i] = (char)('a' + i % 26);
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, big_writer, NULL), 0);
    static char got[BIG];
    size_t have = 0;
    while (have < BIG) {
        long r = read(master, got + have, BIG - have);
        EXPECT(r > 0);
        have += (size_t)r;
    }
    EXPECT_EQ(memcmp(got, big, BIG), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);
}

static void *small_writer(void *arg)
{
    char line[20];
    memset(line, (char)(long)arg, sizeof line);
    for (int i = 0; i < EACH / (int)sizeof line; i++)
        EXPECT_EQ(write(slave, line, sizeof line), (long)sizeof line);
    return NULL;
}

static void many_writers(void)
{
    pthread_t th[WRITERS];
    for (long i = 0; i < WRITERS; i++)
        EXPECT_EQ(pthread_create(&th[i], NULL, small_writer, (void *)('A' + i)), 0);
    long count[WRITERS] = { 0 };
    char buf[4096];
    for (long have = 0; have < WRITERS * EACH;) {
        long r = read(master, buf, sizeof buf);
        EXPECT(r > 0);
        for (long i = 0; i < r; i++) {
            EXPECT(buf[i] >= 'A' && buf[i] < 'A' + WRITERS);
            count[buf[i] - 'A']++;
        }
        have += r;
    }
    for (int i = 0; i < WRITERS; i++) {
        EXPECT_EQ(pthread_join(th[i], NULL), 0);
        EXPECT_EQ(count[i], EACH);
    }
}

static void on_signal(int sig)
{
    (void)sig;
}

struct interrupted {
    pthread_t thread;
    volatile int waiting;
    long result;
    int err;
};

static void *blocked_reader(void *arg)
{
    struct interrupted *in = arg;
    char buf[8];
    in->waiting = 1;
    in->result = read(slave, buf, sizeof buf);
    in->err = errno;
    return NULL;
}

static void *blocked_writer(void *arg)
{
    struct interrupted *in = arg;
    in->waiting = 1;
    in->result = write(slave, big, BIG); /* nobody reads the master */
    in->err = errno;
    return NULL;
}

/* Starts fn, lets it block, then signals it until it returns. */
static void interrupt(void *(*fn)(void *), struct interrupted *in)
{
    memset(in, 0, sizeof *in);
    EXPECT_EQ(pthread_create(&in->thread, NULL, fn, in), 0);
    while (!in->waiting)
        sleep_ms(1);
    sleep_ms(100);
    EXPECT_EQ(pthread_kill(in->thread, SIGUSR1), 0);
    EXPECT_EQ(pthread_join(in->thread, NULL), 0);
}

static void signals(void)
{
    install_handler(SIGUSR1, on_signal, 0);
    set_mode(1, 1, 0);
    struct interrupted in;
    interrupt(blocked_reader, &in);
    EXPECT_EQ(in.result, -1);
    EXPECT_EQ(in.err, EINTR);

    set_mode(0, 1, 0);
    interrupt(blocked_writer, &in);
    EXPECT(in.result > 0 && in.result < BIG); /* what fitted */
    char buf[4096];
    int flags = fcntl(master, F_GETFL);
    EXPECT_EQ(fcntl(master, F_SETFL, flags | O_NONBLOCK), 0);
    long drained = 0, r;
    while ((r = read(master, buf, sizeof buf)) > 0)
        drained += r;
    EXPECT_EQ(drained, in.result);
    EXPECT_EQ(fcntl(master, F_SETFL, flags), 0);
}

static void *cancelled_reader(void *arg)
{
    char buf[8];
    *(volatile int *)arg = 1;
    read(slave, buf, sizeof buf);
    return (void *)1; /* not reached */
}

static void cancel(void)
{
    set_mode(1, 1, 0);
    volatile int waiting = 0;
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, cancelled_reader, (void *)&waiting), 0);
    while (!waiting)
        sleep_ms(1);
    sleep_ms(50);
    EXPECT_EQ(pthread_cancel(th), 0);
    void *ret = NULL;
    EXPECT_EQ(pthread_join(th, &ret), 0);
    EXPECT(ret == PTHREAD_CANCELED);
}

static volatile int ticking, typed_second;
static volatile long ticks, second_after;

static void *tick(void *arg)
{
    (void)arg;
    while (ticking) {
        ticks++;
        sleep_ms(1);
    }
    return NULL;
}

static void *type_after_ticks(void *arg)
{
    (void)arg;
    EXPECT_EQ(write(master, "ab", 2), 2);
    long until = ticks + 5;
    while (ticks < until)
        sleep_ms(1);
    second_after = until;
    typed_second = 1;
    EXPECT_EQ(write(master, "cd", 2), 2);
    return NULL;
}

static void edges(void)
{
    char buf[8];
    set_mode(1, 1, 0);
    int flags = fcntl(slave, F_GETFL);
    EXPECT_EQ(fcntl(slave, F_SETFL, flags | O_NONBLOCK), 0);
    errno = 0;
    expect_fail(read(slave, buf, sizeof buf), EAGAIN);
    EXPECT_EQ(fcntl(slave, F_SETFL, flags), 0);
    struct iovec v = { buf, sizeof buf };
    errno = 0;
    expect_fail(preadv2(slave, &v, 1, -1, RWF_NOWAIT), EOPNOTSUPP);

    FILE *in = fdopen(dup(slave), "r");
    EXPECT(in != NULL);
    struct typing t = { "a line", "\n", 30 };
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, typist, &t), 0);
    char line[32];
    EXPECT(fgets(line, sizeof line, in) != NULL);
    EXPECT_EQ(strcmp(line, "a line\n"), 0);
    EXPECT_EQ(pthread_join(th, NULL), 0);

    set_mode(0, 0, 0); /* a refill of nothing: end of input at once */
    EXPECT_EQ(getc(in), EOF);
    EXPECT(feof(in) && !ferror(in));
    clearerr(in);
    set_mode(0, 0, 2); /* and after 0.2 s without input */
    EXPECT_EQ(getc(in), EOF);
    EXPECT(feof(in) && !ferror(in));
    clearerr(in);
    struct typing t2 = { "z", NULL, 0 }; /* input within VTIME */
    set_mode(0, 0, 50);
    EXPECT_EQ(pthread_create(&th, NULL, typist, &t2), 0);
    EXPECT_EQ(getc(in), 'z');
    EXPECT_EQ(pthread_join(th, NULL), 0);

    /* VMIN = 4 with a gap timer: the refill waits for four bytes while
     * the other threads run: the second half is typed only after a
     * ticker thread has moved on, which it could not if the refill held
     * its kernel thread until the gap (25.5 s) ran out. */
    set_mode(0, 4, 255);
    ticking = 1;
    pthread_t ticker, two_halves;
    EXPECT_EQ(pthread_create(&ticker, NULL, tick, NULL), 0);
    EXPECT_EQ(pthread_create(&two_halves, NULL, type_after_ticks, NULL), 0);
    EXPECT_EQ(getc(in), 'a');
    long at_return = ticks;
    EXPECT(typed_second);
    EXPECT(at_return >= second_after);
    EXPECT_EQ(getc(in), 'b');
    EXPECT_EQ(getc(in), 'c');
    EXPECT_EQ(getc(in), 'd');
    ticking = 0;
    EXPECT_EQ(pthread_join(two_halves, NULL), 0);
    EXPECT_EQ(pthread_join(ticker, NULL), 0);
    EXPECT_EQ(fclose(in), 0);
}

/* The calls that wait for the line (none waits on a pseudo-terminal, but
 * each must answer as glibc's): tcsetattr by action, tcsendbreak,
 * tcdrain. */
static void line_calls(void)
{
    struct termios t;
    set_mode(1, 1, 0);
    EXPECT_EQ(tcgetattr(slave, &t), 0);
    t.c_cc[VEOF] = 1; /* ^A */
    EXPECT_EQ(tcsetattr(slave, TCSADRAIN, &t), 0);
    struct termios back;
    EXPECT_EQ(tcgetattr(slave, &back), 0);
    EXPECT_EQ(back.c_cc[VEOF], 1);
    EXPECT_EQ(write(master, "gone\n", 5), 5);
    sleep_ms(20);
    EXPECT_EQ(tcsetattr(slave, TCSAFLUSH, &t), 0); /* drops the unread line */
    int queued = -1;
    EXPECT_EQ(ioctl(slave, FIONREAD, &queued), 0);
    EXPECT_EQ(queued, 0);
    errno = 0;
    expect_fail(tcsetattr(slave, 12345, &t), EINVAL);
    EXPECT_EQ(tcsendbreak(slave, 0), 0);
    EXPECT_EQ(tcdrain(slave), 0);
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    errno = 0;
    expect_fail(tcsetattr(p[1], TCSADRAIN, &t), ENOTTY);
    errno = 0;
    expect_fail(tcsendbreak(p[1], 0), ENOTTY);
    errno = 0;
    expect_fail(tcdrain(p[1]), ENOTTY);
    close(p[0]);
    close(p[1]);
    errno = 0;
    expect_fail(tcsetattr(-1, TCSAFLUSH, &t), EBADF);
}

static void hang_up(void)
{
    set_mode(1, 1, 0);
    struct interrupted in = { 0 };
    EXPECT_EQ(pthread_create(&in.thread, NULL, blocked_reader, &in), 0);
    while (!in.waiting)
        sleep_ms(1);
    sleep_ms(50);
    EXPECT_EQ(close(master), 0);
    EXPECT_EQ(pthread_join(in.thread, NULL), 0);
    EXPECT_EQ(in.result, -1);
    EXPECT_EQ(in.err, EIO);
    EXPECT_EQ(close(slave), 0);
}

int main(void)
{
    alarm(50);
    signal(SIGTTOU, SIG_IGN);
    open_pair();
    canonical_line();
    vmin_zero();
    vmin_four();
    vmin_four_with_gap();
    big_write();
    many_writers();
    signals();
    cancel();
    edges();
    line_calls();
    hang_up();
    puts("terminal_as_glibc: ok");
    return 0;
}
