/* SPDX-License-Identifier: MIT */
/*
 * Connections accepted on a listener the program did not make through
 * the C library (one a service manager or a prefork parent hands over:
 * here made by raw system calls), which Capriccio may not switch to
 * non-blocking: its accept looks at readiness, then makes an io_uring
 * accept that does not wait (src/io/nowait_ring.h). Client processes
 * (raw system calls, blocking) each connect, send a byte, read the
 * answer and close, over and over; acceptor threads accept and answer.
 *
 *   acceptshared_<via> [connections per client] [clients] [acceptors] [raw|lib]
 *                      defaults 2000, 4, 4, raw
 *
 * lib makes the listener with socket(2) through the C library instead,
 * for comparison (Capriccio owns that one: non-blocking underneath).
 *
 * Not part of bench/runner.py's suite; run it directly, the builds side
 * by side. Output: one JSON object, as the other micro-benchmarks (ops:
 * connections; ns_per_op: elapsed time per connection).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static int listener;

static void *acceptor(void *arg)
{
    (void)arg;
    for (;;) {
        int s = accept(listener, NULL, NULL);
        if (s < 0)
            return NULL; /* the listener was shut down: done */
        char b;
        if (read(s, &b, 1) == 1)
            bench_check(write(s, "x", 1) == 1 ? 0 : errno, "write");
        close(s);
    }
}

/* A client process: raw system calls only (it is not measured). */
static _Noreturn void client(const struct sockaddr_in *a, long conns)
{
    for (long i = 0; i < conns; i++) {
        int s = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
        if (s < 0 || syscall(SYS_connect, s, a, sizeof *a) != 0)
            _exit(2);
        char b;
        if (syscall(SYS_write, s, "q", 1) != 1 || syscall(SYS_read, s, &b, 1) != 1)
            _exit(3);
        syscall(SYS_close, s);
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    long conns = bench_arg_long(argc, argv, 1, 2000);
    long clients = bench_arg_long(argc, argv, 2, 4);
    long acceptors = bench_arg_long(argc, argv, 3, 4);
    bool lib = argc > 4 && strcmp(argv[4], "lib") == 0;
    listener = lib ? socket(AF_INET, SOCK_STREAM, 0) : (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
    bench_check(listener < 0 ? errno : 0, "socket");
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    bench_check(syscall(SYS_bind, listener, &a, sizeof a) == 0 &&
                        syscall(SYS_listen, listener, 1024) == 0 &&
                        syscall(SYS_getsockname, listener, &a, &len) == 0
                    ? 0
                    : errno,
                "listen");

    pthread_t t[64];
    if (acceptors > 64)
        acceptors = 64;
    for (long i = 0; i < acceptors; i++)
        bench_check(pthread_create(&t[i], NULL, acceptor, NULL), "pthread_create");
    uint64_t cpu0 = bench_cpu_ns(), t0 = bench_now_ns();
    for (long k = 0; k < clients; k++) {
        pid_t pid = fork();
        bench_check(pid < 0 ? errno : 0, "fork");
        if (pid == 0)
            client(&a, conns);
    }
    for (long k = 0; k < clients; k++) {
        int st;
        bench_check(wait(&st) < 0 ? errno : 0, "wait");
        bench_check(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : EIO, "client");
    }
    uint64_t elapsed = bench_now_ns() - t0;
    bench_cpu_used = bench_cpu_ns() - cpu0;
    long ops = conns * clients;
    printf("{\"bench\":\"acceptshared\",\"via\":\"%s\",\"listener\":\"%s\",\"threads\":%ld,"
           "\"ops\":%ld,\"elapsed_ns\":%llu,\"ns_per_op\":%.1f,\"cpu_ns\":%llu}\n",
           BENCH_VIA, lib ? "lib" : "raw", acceptors, ops, (unsigned long long)elapsed,
           (double)elapsed / (double)ops, (unsigned long long)bench_cpu_used);
    fflush(stdout); /* printed before the shutdown (a build whose acceptors miss it hangs) */
    shutdown(listener, SHUT_RDWR); /* ends the acceptors' accept (EINVAL) */
    for (long i = 0; i < acceptors; i++)
        pthread_join(t[i], NULL);
    return 0;
}
