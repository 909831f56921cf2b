/* SPDX-License-Identifier: MIT */
/* Description: execveat (glibc 2.34's) starts the new program as execve
 * does: with the calling thread's signal mask, not its worker's (main
 * blocks SIGUSR1 while another thread, parked, accepts it, so the workers
 * do not block it), and with the O_NONBLOCK the application set on the
 * descriptors it inherits (a blocking socketpair end arrives blocking).
 * Before, execveat went straight to glibc: the new program started with
 * SIGUSR1 unblocked and the socket non-blocking. */
#include <signal.h>
#include <sys/syscall.h>

#include "io/io_util.h"

extern char **environ;

static atomic_int parked;

static void *accepts_usr1(void *arg)
{
    (void)arg;
    sigset_t none;
    sigemptyset(&none);
    CHECK_EQ(pthread_sigmask(SIG_SETMASK, &none, NULL), 0);
    atomic_store(&parked, 1);
    for (;;)
        pause();
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
}

int main(int argc, char **argv)
{
    if (argc == 2) { /* the new program */
        long fl = syscall(SYS_fcntl, atoi(argv[1]), F_GETFL);
        CHECK_GE(fl, 0);
        CHECK_EQ(fl & O_NONBLOCK, 0);
        sigset_t cur;
        CHECK_EQ(sigprocmask(SIG_BLOCK, NULL, &cur), 0);
        CHECK_EQ(sigismember(&cur, SIGUSR1), 1);
        return 0;
    }
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    spawn(accepts_usr1, NULL);
    while (!atomic_load(&parked))
        cap_usleep(1000);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char a[16];
    snprintf(a, sizeof a, "%d", sv[0]);
    char *av[] = { argv[0], a, NULL };
    execveat(AT_FDCWD, "/proc/self/exe", av, environ, 0);
    CHECK(0); /* not reached */
    return 1;
}
