/* SPDX-License-Identifier: MIT */
/* Description: a caught signal interrupts a parked call before its
 * handler's effects can reach that call, as Linux interrupts the call
 * before the handler runs. Main parks on an empty pipe (in read, then in
 * poll, then in epoll_wait); a signal comes (SIGUSR1 from a second
 * thread, or SIGALRM from a timer that thread arms); its handler,
 * installed without SA_RESTART, sets a flag; the second thread, polling
 * the flag, writes a byte to the pipe the moment it sees it. Under Linux
 * the call fails with EINTR every time (the handler ran on main, after
 * the call was interrupted), and the byte is still there for the next
 * read. Here the handler runs on whichever kernel thread the kernel
 * picked, and the byte's wake-up may reach main before the signal's
 * dispatch does: src/io/sigintr.h ("Ordering") says why main still fails
 * with EINTR. Every round is checked; the rounds that returned data are
 * counted and reported before the test fails.
 *
 * The signal must come while main is parked (a signal that comes before
 * the call interrupts nothing, under Linux too). With one worker that is
 * certain: the second thread runs only once main has parked. With two,
 * the second thread waits until the kernel thread main made the call on
 * is asleep in /proc (an idle worker waits in the kernel; one that runs
 * main, or was preempted while it did, shows R) or runs the second
 * thread itself. (It used to wait a fixed 3 ms, which a worker preempted
 * for a time slice on a loaded machine outlasted: 1 round in 200 once
 * returned data under ASan in CI.) Not under CAP_MIGRATE=1, where that
 * kernel thread may sleep while main goes on into its call on the other
 * worker (tests.cmake). */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "io/io_util.h"
#include "proc_util.h"

enum { ROUNDS = 200 };

enum kind { K_READ, K_POLL, K_EPOLL, NKINDS };
static const char *const names[] = { "read", "poll", "epoll_wait" };

static atomic_int flag;     /* set by the handler */
static atomic_int started;  /* round main is about to block in */
static atomic_int main_kthread; /* the kernel thread it blocks on */
static atomic_int written;  /* round whose byte the writer wrote */
static atomic_int quit;
static int p[2], epfd;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&flag, 1);
}

static void install(int sig)
{
    struct sigaction sa = { .sa_handler = on_signal, .sa_flags = 0 }; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(sig, &sa, NULL), 0);
}

/* Whether main, which announced its call, has parked: the kernel thread
 * it called on runs this thread, or sleeps. */
static bool main_parked(void)
{
    pid_t k = atomic_load(&main_kthread);
    return (pid_t)syscall(SYS_gettid) == k || task_state(k) == 'S';
}

/* Each round: once main is parked, a signal; once its handler has set
 * the flag, the byte. Polls the flag without sleeping so that it writes
 * as soon as the handler's effect is visible. */
static void *writer(void *arg)
{
    (void)arg;
    for (int round = 1;; round++) {
        while (atomic_load(&started) < round) {
            if (atomic_load(&quit))
                return NULL;
            cap_yield();
        }
        while (!main_parked())
            cap_sleep_ns(100000);
        if (round % 2 == 0) {
            CHECK_EQ(kill(getpid(), SIGUSR1), 0);
        } else {
            struct itimerval it = { .it_value = { .tv_usec = 100 } };
            CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
        }
        while (!atomic_load(&flag))
            cap_yield();
        CHECK_EQ(write(p[1], "x", 1), 1);
        atomic_store(&written, round);
    }
}

/* One blocking call of kind k on the empty pipe: -1 with errno, or what
 * the call returned. */
static long block_in(enum kind k)
{
    switch (k) {
    case K_READ: {
        char c;
        return read(p[0], &c, 1);
    }
    case K_POLL: {
        struct pollfd pf = { .fd = p[0], .events = POLLIN };
        return poll(&pf, 1, -1);
    }
    case K_EPOLL: {
        struct epoll_event ev;
        return epoll_wait(epfd, &ev, 1, -1);
    }
    default:
        return -2;
    }
}

int main(void)
{
    install(SIGUSR1);
    install(SIGALRM);
    CHECK_EQ(pipe(p), 0);
    epfd = epoll_create1(0);
    CHECK_GE(epfd, 0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = p[0] };
    CHECK_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, p[0], &ev), 0);
    cap_thread_t w = spawn(writer, NULL);

    int round = 0, failed = 0;
    for (int k = 0; k < NKINDS; k++) {
        int data = 0;
        for (int i = 0; i < ROUNDS; i++) {
            round++;
            atomic_store(&flag, 0);
            atomic_store(&main_kthread, (int)syscall(SYS_gettid));
            atomic_store(&started, round);
            errno = 0;
            long r = block_in((enum kind)k);
            int e = errno;
            while (atomic_load(&written) < round)
                cap_sleep_ns(100000);
            if (r == -1 && e == EINTR) {
                CHECK_EQ(atomic_load(&flag), 1); /* the handler ran before EINTR */
            } else {
                if (r != 1)
                    fprintf(stderr, "%s: r %ld errno %d\n", names[k], r, e);
                CHECK_EQ(r, 1); /* the byte (read) or its readiness (poll, epoll) */
                data++;
            }
            char c = 0;
            if (k == K_READ && r == 1)
                continue; /* the call took the byte */
            CHECK_EQ(read(p[0], &c, 1), 1); /* the interrupted call left it */
            CHECK_EQ(c, 'x');
        }
        if (data != 0)
            fprintf(stderr, "%s: %d of %d rounds returned data instead of EINTR\n", names[k],
                    data, ROUNDS);
        failed += data;
    }
    atomic_store(&quit, 1);
    join(w);
    CHECK_EQ(failed, 0);
    return 0;
}
