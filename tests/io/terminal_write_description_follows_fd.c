/* SPDX-License-Identifier: MIT */
/* Description: blocking writes to a pseudo-terminal's slave go through a
 * private non-blocking description of the same terminal (io/ttyfile.h),
 * which must act as the program's own descriptor would:
 *  - bytes reach the master whole and in each writer's order, from four
 *    writers at once while the master's reader drains it in small reads
 *    (on one worker a write that held the worker would hang);
 *  - one private descriptor per terminal descriptor, not one per write;
 *  - a descriptor of the slave opened read-only still refuses writes
 *    (EBADF), as the kernel's does;
 *  - the program's closefrom() above the slave leaves it (writes go on);
 *  - closing the slave closes it: the master then reads EIO, as with no
 *    library (a private description left open would keep the slave open
 *    and the master's poll would time out); with a dup of the slave
 *    still open the terminal stays writable through the dup;
 *  - a write waiting for room on a full terminal ends at a signal with
 *    the count it wrote, 20 times in a row (a wake-up the write itself
 *    caused once let the signal pass the call by, and it waited on);
 *  - more terminals than the library keeps descriptions for (8): the
 *    writes to all of them arrive (the others use the offload pool). */
#include <termios.h>

#include "io/io_util.h"

enum { WRITERS = 4, LINES = 300, LINE = 24, TERMINALS = 10 };

struct pty {
    int master, slave;
};

static struct pty open_pty(void)
{
    struct pty p;
    p.master = posix_openpt(O_RDWR | O_NOCTTY);
    CHECK_GE(p.master, 0);
    CHECK_EQ(grantpt(p.master), 0);
    CHECK_EQ(unlockpt(p.master), 0);
    p.slave = open(ptsname(p.master), O_RDWR | O_NOCTTY);
    CHECK_GE(p.slave, 0);
    struct termios t;
    CHECK_EQ(tcgetattr(p.slave, &t), 0);
    cfmakeraw(&t); /* no output processing: bytes arrive as written */
    CHECK_EQ(tcsetattr(p.slave, TCSANOW, &t), 0);
    return p;
}

static int open_descriptors(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

/* Reads exactly n bytes from the master, at most 100 at a time. */
static void drain(int master, char *buf, size_t n)
{
    for (size_t have = 0; have < n;) {
        size_t want = n - have < 100 ? n - have : 100;
        ssize_t r = read(master, buf + have, want);
        CHECK_GT(r, 0);
        have += (size_t)r;
    }
}

static int slave_fd;

static void *writer(void *arg)
{
    char line[LINE];
    for (int i = 0; i < LINES; i++) {
        /* "<writer letter><line number, 5 digits>" then padding */
        memset(line, '.', sizeof line);
        snprintf(line, sizeof line, "%c%05d", (char)(intptr_t)arg, i);
        line[6] = '.';
        CHECK_EQ(write(slave_fd, line, sizeof line), (ssize_t)sizeof line);
    }
    return NULL;
}

static void many_writers_in_order(struct pty p)
{
    slave_fd = p.slave;
    cap_thread_t t[WRITERS];
    for (int i = 0; i < WRITERS; i++)
        t[i] = spawn(writer, (void *)(intptr_t)('A' + i));
    static char got[WRITERS * LINES * LINE];
    drain(p.master, got, sizeof got);
    for (int i = 0; i < WRITERS; i++)
        join(t[i]);
    /* Each write is one piece of a terminal write (raw mode): lines are
     * whole, and each writer's are in order. */
    int next[WRITERS] = { 0 };
    for (size_t off = 0; off < sizeof got; off += LINE) {
        int w = got[off] - 'A';
        CHECK(w >= 0 && w < WRITERS);
        CHECK_EQ(atoi(got + off + 1), next[w]);
        next[w]++;
    }
    for (int i = 0; i < WRITERS; i++)
        CHECK_EQ(next[i], LINES);
}

static void write_and_read(struct pty p, int via, char token)
{
    char got;
    CHECK_EQ(write(via, &token, 1), 1);
    CHECK_EQ(read(p.master, &got, 1), 1);
    CHECK_EQ(got, token);
}

/* The master sees the slave closed: poll reports it and the read says
 * EIO. */
static void master_sees_close(int master)
{
    struct pollfd pf = { .fd = master, .events = POLLIN };
    CHECK_EQ(poll(&pf, 1, 5000), 1);
    char c;
    errno = 0;
    CHECK_EQ(read(master, &c, 1), -1);
    CHECK_EQ(errno, EIO);
}

static char big[256 * 1024];
static volatile int writing;
static ssize_t big_result;

static void on_usr1(int sig)
{
    (void)sig;
}

static void *big_writer(void *arg)
{
    (void)arg;
    writing = 1;
    big_result = write(slave_fd, big, sizeof big); /* nobody reads the master */
    return NULL;
}

static void interrupted_writes(struct pty p)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1; /* no SA_RESTART */
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    memset(big, 'z', sizeof big);
    slave_fd = p.slave;
    for (int round = 0; round < 20; round++) {
        writing = 0;
        cap_thread_t t = spawn(big_writer, NULL);
        while (!writing)
            CHECK_EQ(cap_usleep(1000), 0);
        CHECK_EQ(cap_usleep(20000), 0);
        CHECK_EQ(cap_thread_kill(t, SIGUSR1), 0);
        join(t);
        CHECK_GT(big_result, 0);
        CHECK_LT(big_result, (ssize_t)sizeof big);
        /* What fitted is there, and nothing more. */
        int flags = fcntl(p.master, F_GETFL);
        CHECK_EQ(fcntl(p.master, F_SETFL, flags | O_NONBLOCK), 0);
        static char sink[4096];
        ssize_t drained = 0, r;
        while ((r = read(p.master, sink, sizeof sink)) > 0)
            drained += r;
        CHECK_EQ(drained, big_result);
        CHECK_EQ(fcntl(p.master, F_SETFL, flags), 0);
    }
}

int main(void)
{
    int before = open_descriptors();
    struct pty p = open_pty();
    CHECK_EQ(open_descriptors(), before + 2);

    many_writers_in_order(p);
    /* The terminal's private description, and no more. */
    int with_private = open_descriptors();
    CHECK_LE(with_private, before + 3);
    write_and_read(p, p.slave, 'a');
    CHECK_EQ(open_descriptors(), with_private);

    interrupted_writes(p);

    /* Read-only: the write is refused, whatever the library opens. */
    int ro = open(ptsname(p.master), O_RDONLY | O_NOCTTY);
    CHECK_GE(ro, 0);
    errno = 0;
    CHECK_EQ(write(ro, "x", 1), -1);
    CHECK_EQ(errno, EBADF);
    CHECK_EQ(close(ro), 0);

    /* closefrom above the slave: the runtime's descriptors stay. */
    closefrom(p.slave + 1);
    write_and_read(p, p.slave, 'b');
    many_writers_in_order(p);

    /* A dup keeps the terminal: the original's close does not end it. */
    int dup_fd = dup(p.slave);
    CHECK_GE(dup_fd, 0);
    write_and_read(p, dup_fd, 'c');
    CHECK_EQ(close(p.slave), 0);
    write_and_read(p, dup_fd, 'd');
    CHECK_EQ(close(dup_fd), 0);
    master_sees_close(p.master);
    CHECK_EQ(close(p.master), 0);
    /* Open now (closefrom took what the test inherited): no terminal. */
    int idle = open_descriptors();

    /* A plain close after writes. */
    p = open_pty();
    write_and_read(p, p.slave, 'e');
    CHECK_EQ(open_descriptors(), idle + 3);
    CHECK_EQ(close(p.slave), 0);
    master_sees_close(p.master);
    CHECK_EQ(close(p.master), 0);
    CHECK_EQ(open_descriptors(), idle);

    /* More terminals than private descriptions. */
    struct pty many[TERMINALS];
    for (int i = 0; i < TERMINALS; i++)
        many[i] = open_pty();
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < TERMINALS; i++)
            write_and_read(many[i], many[i].slave, (char)('f' + i));
    for (int i = 0; i < TERMINALS; i++) {
        many_writers_in_order(many[i]);
        CHECK_EQ(close(many[i].slave), 0);
        master_sees_close(many[i].master);
        CHECK_EQ(close(many[i].master), 0);
    }
    /* Every private description closed with its terminal. */
    CHECK_EQ(open_descriptors(), idle);
    puts("terminal_write_description_follows_fd: ok");
    return 0;
}
