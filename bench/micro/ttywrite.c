/* SPDX-License-Identifier: MIT */
/*
 * Cost of a blocking write to a terminal: a thread writes 40-byte lines
 * to a pseudo-terminal's slave (raw mode) while another thread drains its
 * master, the way a program's output reaches a terminal emulator.
 *
 *   ttywrite_<via> [writes]      default 50000
 *
 * On Capriccio a terminal write waits for the terminal to take a byte
 * and then runs on the offload pool (src/intercept/ttyio.c: the plain
 * call could hold the worker until the reader made room); this measures
 * that price against NPTL's plain blocking write. Not part of
 * bench/runner.py's suite; run it directly, the builds side by side.
 *
 * Output: one JSON object, as the other micro-benchmarks.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include "common.h"

enum { LINE = 40 };

static int master, slave;
static long writes;

static void *drain(void *arg)
{
    (void)arg;
    char buf[65536];
    for (long left = writes * LINE; left > 0;) {
        ssize_t r = read(master, buf, sizeof buf);
        if (r <= 0)
            bench_check(r < 0 ? errno : EIO, "read");
        left -= r;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    writes = bench_arg_long(argc, argv, 1, 50000);
    master = posix_openpt(O_RDWR | O_NOCTTY);
    bench_check(master < 0 ? errno : 0, "posix_openpt");
    bench_check(grantpt(master) == 0 && unlockpt(master) == 0 ? 0 : errno, "unlockpt");
    slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    bench_check(slave < 0 ? errno : 0, "open");
    struct termios t;
    bench_check(tcgetattr(slave, &t) == 0 ? 0 : errno, "tcgetattr");
    cfmakeraw(&t);
    bench_check(tcsetattr(slave, TCSANOW, &t) == 0 ? 0 : errno, "tcsetattr");

    pthread_t reader;
    bench_check(pthread_create(&reader, NULL, drain, NULL), "pthread_create");
    char line[LINE];
    memset(line, 'y', sizeof line);
    uint64_t cpu0 = bench_cpu_ns(), t0 = bench_now_ns();
    for (long i = 0; i < writes; i++)
        if (write(slave, line, sizeof line) != (ssize_t)sizeof line)
            bench_check(errno ? errno : EIO, "write");
    pthread_join(reader, NULL);
    uint64_t elapsed = bench_now_ns() - t0;
    bench_cpu_used = bench_cpu_ns() - cpu0;
    printf("{\"bench\":\"ttywrite\",\"via\":\"%s\",\"threads\":2,\"ops\":%ld,"
           "\"elapsed_ns\":%llu,\"ns_per_op\":%.1f,\"cpu_ns\":%llu}\n",
           BENCH_VIA, writes, (unsigned long long)elapsed, (double)elapsed / (double)writes,
           (unsigned long long)bench_cpu_used);
    return 0;
}
