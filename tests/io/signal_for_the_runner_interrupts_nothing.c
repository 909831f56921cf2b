/* SPDX-License-Identifier: MIT */
/* Description: a signal the kernel aims at the thread that caused it, or
 * that a thread raises for itself, interrupts no other thread's parked
 * call, as under Linux, where it goes to that running thread: with main
 * parked in a pipe read (its handlers installed without SA_RESTART),
 * another thread's write to a pipe with no reader (SIGPIPE, then EPIPE),
 * its raise(SIGUSR1) and a fault it recovers from in a SIGSEGV handler
 * each run their handler, and main still gets its byte, not EINTR. A
 * kill() of the process still interrupts main (the control). With one
 * worker main is parked before the other thread runs, so the old code's
 * EINTR was certain there. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "io/io_util.h"

static volatile sig_atomic_t pipes, usr1s, segvs;
static char *page;
static long page_size;
static int p[2];

static void on_pipe(int sig)
{
    (void)sig;
    pipes++;
}

static void on_usr1(int sig)
{
    (void)sig;
    usr1s++;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if ((char *)si->si_addr < page || (char *)si->si_addr >= page + page_size)
        abort(); /* not ours */
    mprotect(page, (size_t)page_size, PROT_READ | PROT_WRITE); /* the access then succeeds */
    segvs++;
}

enum { ROUNDS = 20 };

static void *runner(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int b[2];
        CHECK_EQ(pipe(b), 0);
        CHECK_EQ(close(b[0]), 0);
        errno = 0;
        CHECK_EQ(write(b[1], "x", 1), -1);
        CHECK_EQ(errno, EPIPE);
        CHECK_EQ(close(b[1]), 0);
        CHECK_EQ(raise(SIGUSR1), 0);
        CHECK_EQ(mprotect(page, (size_t)page_size, PROT_NONE), 0);
        page[i] = 1; /* faults once: the handler opens the page */
        CHECK_EQ(write(p[1], "p", 1), 1); /* main's byte */
        cap_yield();
    }
    return NULL;
}

static atomic_int main_done;

int main(void)
{
    page_size = sysconf(_SC_PAGESIZE);
    page = mmap(NULL, (size_t)page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_pipe;
    CHECK_EQ(sigaction(SIGPIPE, &sa, NULL), 0);
    sa.sa_handler = on_usr1;
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    CHECK_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
    CHECK_EQ(pipe(p), 0);

    cap_thread_t t = spawn(runner, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        char c = 0;
        ssize_t n = read(p[0], &c, 1);
        if (n != 1)
            fprintf(stderr, "round %d: read %zd, errno %d\n", i, n, errno);
        CHECK_EQ(n, 1);
        CHECK_EQ(c, 'p');
    }
    join(t);
    CHECK_EQ(pipes, ROUNDS);
    CHECK_EQ(usr1s, ROUNDS);
    CHECK_EQ(segvs, ROUNDS);

    /* The control: a signal to the process interrupts main's read. */
    struct signal_until until = { SIGUSR1, &main_done };
    cap_thread_t k = spawn(signal_until_done, &until);
    char c = 0;
    errno = 0;
    CHECK_EQ(read(p[0], &c, 1), -1);
    CHECK_EQ(errno, EINTR);
    atomic_store(&main_done, 1);
    join(k);
    printf("ok\n");
    return 0;
}
