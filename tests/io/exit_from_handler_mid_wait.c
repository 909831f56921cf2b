/* SPDX-License-Identifier: MIT */
/* Description: a signal handler that calls exit() ends the process even
 * when the signal lands in the middle of the runtime's own work on a
 * wait (a descriptor being armed or disarmed in the descriptor backend),
 * as it does on NPTL in practice (exit is not async-signal-safe, but
 * "exit on SIGINT" handlers are everywhere). Under CAP_NETIO=uring the
 * exit cancels the ring's polls under the lock of its submission queue;
 * a handler that had interrupted a submission on its own kernel thread
 * waited there for ever for a lock its own frame held (the exit now
 * gives up after a bound). Each child waits in a loop on new sockets
 * (each wait armed, each close disarmed) until a 1-2 ms timer's handler
 * calls exit(3); the parent checks every child exited with 3. A hang is
 * the failure (the test's timeout). */
#include <sys/time.h>

#include "io/io_util.h"

enum { CHILDREN = 40 };

static void on_alarm(int sig)
{
    (void)sig;
    exit(3);
}

static int child(int k)
{
    install_handler(SIGALRM, on_alarm, 0);
    struct itimerval it = { .it_value = { 0, 1000 + 25 * k } };
    CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
    for (;;) {
        int sv[2];
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        struct timeval tv = { 0, 1 };
        CHECK_EQ(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
        char c;
        ssize_t r = recv(sv[0], &c, 1, 0); /* armed, then timed out */
        CHECK(r == -1 && (errno == EAGAIN || errno == EINTR));
        CHECK_EQ(close(sv[0]), 0);
        CHECK_EQ(close(sv[1]), 0);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child(atoi(argv[2]));
    /* Under AddressSanitizer the timer may interrupt its allocator with
     * its lock held, and LeakSanitizer's check at exit waits for that
     * lock for ever: the hazard of exit() in a handler that is not ours
     * to test. The children make no leak check. */
    CHECK_EQ(setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1", 1), 0);
    extern char **environ;
    for (int k = 0; k < CHILDREN; k++) {
        char num[16];
        snprintf(num, sizeof num, "%d", k);
        char *args[] = { argv[0], "child", num, NULL };
        pid_t pid;
        CHECK_EQ(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ), 0);
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 3)
            fprintf(stderr, "child %d: status %#x\n", k, status);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 3);
    }
    return 0;
}
