/* SPDX-License-Identifier: MIT */
/* Description: a caught signal whose handler was installed without
 * SA_RESTART interrupts a user thread parked in a blocking call, which
 * fails with EINTR after the handler ran (the "SIGINT sets a flag, the
 * blocking loop sees it" idiom), for every kind of intercepted call:
 * read, write, accept, recv, poll, select, epoll_wait, nanosleep (with
 * the time left in rem), sleep (returns the seconds left), usleep, pause
 * and sigsuspend. The sender repeats the signal until the call returns:
 * a delivery before the thread parked interrupts nothing, as in POSIX. */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

#include "io/io_util.h"

static volatile sig_atomic_t got;
static void on_usr1(int sig)
{
    got = sig;
}

enum kind { READ, WRITE, ACCEPT, RECV, POLL, SELECT, EPOLL, NANOSLEEP, SLEEP, USLEEP,
            PAUSE, SIGSUSPEND, NKINDS };
static const char *const names[] = { "read", "write", "accept", "recv", "poll", "select",
                                     "epoll_wait", "nanosleep", "sleep", "usleep", "pause",
                                     "sigsuspend" };

static int rd, wr_full, listener, sock, epfd;
static atomic_int done;
static long result;
static int err;
static sig_atomic_t seen_in_thread;
static struct timespec rem;

static void *blocker(void *arg)
{
    char buf[16] = { 0 };
    long r = 0;
    switch ((enum kind)(long)arg) {
    case READ: r = read(rd, buf, sizeof buf); break;
    case WRITE: r = write(wr_full, buf, 1); break;
    case ACCEPT: r = accept(listener, NULL, NULL); break;
    case RECV: r = recv(sock, buf, sizeof buf, 0); break;
    case POLL: {
        struct pollfd p = { .fd = rd, .events = POLLIN };
        r = poll(&p, 1, -1);
        break;
    }
    case SELECT: {
        fd_set s;
        FD_ZERO(&s);
        FD_SET(rd, &s);
        r = select(rd + 1, &s, NULL, NULL, NULL);
        break;
    }
    case EPOLL: {
        struct epoll_event ev;
        r = epoll_wait(epfd, &ev, 1, -1);
        break;
    }
    case NANOSLEEP: {
        struct timespec ts = { .tv_sec = 1000 };
        r = nanosleep(&ts, &rem);
        break;
    }
    case SLEEP: r = (long)sleep(1000); break;
    case USLEEP: r = usleep(999999); break;
    case PAUSE: r = pause(); break;
    case SIGSUSPEND: {
        sigset_t none;
        sigemptyset(&none);
        r = sigsuspend(&none);
        break;
    }
    default: break;
    }
    err = errno;
    seen_in_thread = got;
    result = r;
    atomic_store(&done, 1);
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);

    int pr[2], pw[2], sv[2], port;
    CHECK_EQ(pipe(pr), 0);
    CHECK_EQ(pipe(pw), 0);
    rd = pr[0];
    wr_full = pw[1];
    CHECK_EQ(fcntl(wr_full, F_SETFL, O_NONBLOCK), 0);
    static char chunk[4096];
    while (write(wr_full, chunk, sizeof chunk) > 0)
        ;
    CHECK_EQ(errno, EAGAIN);
    CHECK_EQ(fcntl(wr_full, F_SETFL, 0), 0);
    listener = tcp_listener(SOCK_STREAM, 8, &port);
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    sock = sv[0];
    epfd = epoll_create1(0);
    CHECK_GE(epfd, 0);
    struct epoll_event ev = { .events = EPOLLIN };
    CHECK_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, rd, &ev), 0);

    for (long k = 0; k < NKINDS; k++) {
        atomic_store(&done, 0);
        got = 0;
        cap_thread_t t = spawn(blocker, (void *)k);
        while (!atomic_load(&done)) {
            CHECK_EQ(kill(getpid(), SIGUSR1), 0);
            cap_sleep_ns(1000000); /* not an intercepted call: never interrupted */
        }
        join(t);
        fprintf(stderr, "%s: %ld, errno %d\n", names[k], result, err);
        CHECK_EQ(seen_in_thread, SIGUSR1); /* the handler ran before the call returned */
        if (k == SLEEP) {
            CHECK_GT(result, 0);
            CHECK_LE(result, 1000);
            continue;
        }
        CHECK_EQ(result, -1);
        CHECK_EQ(err, EINTR);
        if (k == NANOSLEEP) {
            CHECK_LE(rem.tv_sec, 1000);
            CHECK(rem.tv_sec > 0 || rem.tv_nsec > 0);
        }
    }
    return 0;
}
