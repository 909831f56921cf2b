/* SPDX-License-Identifier: MIT */
/* Description: the signal mask given to ppoll, pselect, epoll_pwait and
 * sigsuspend decides which signals may interrupt the call: SIGUSR1, in the
 * mask, is handled (by the process) but never interrupts it, and goes to
 * another parked call instead; SIGUSR2, not in the mask, makes it fail
 * with EINTR. */
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "io/io_util.h"

static volatile sig_atomic_t usr1, usr2;
static void on_sig(int sig)
{
    if (sig == SIGUSR1)
        usr1++;
    else
        usr2++;
}

enum kind { PPOLL, PSELECT, EPOLL_PWAIT, SIGSUSPEND, NKINDS };
static const char *const names[] = { "ppoll", "pselect", "epoll_pwait", "sigsuspend" };

static int rd, epfd;
static sigset_t mask; /* { SIGUSR1 } */
static atomic_int masked_in, masked_done, witness_done;
static long masked_result, witness_result;
static int masked_err, witness_err;

static void *masked(void *arg)
{
    long r = -2;
    atomic_store(&masked_in, 1);
    switch ((enum kind)(long)arg) {
    case PPOLL: {
        struct pollfd p = { .fd = rd, .events = POLLIN };
        r = ppoll(&p, 1, NULL, &mask);
        break;
    }
    case PSELECT: {
        fd_set s;
        FD_ZERO(&s);
        FD_SET(rd, &s);
        r = pselect(rd + 1, &s, NULL, NULL, NULL, &mask);
        break;
    }
    case EPOLL_PWAIT: {
        struct epoll_event ev;
        r = epoll_pwait(epfd, &ev, 1, -1, &mask);
        break;
    }
    case SIGSUSPEND: r = sigsuspend(&mask); break;
    default: break;
    }
    masked_err = errno;
    masked_result = r;
    atomic_store(&masked_done, 1);
    return NULL;
}

static void *witness(void *arg)
{
    (void)arg;
    witness_result = pause();
    witness_err = errno;
    atomic_store(&witness_done, 1);
    return NULL;
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_sig };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    rd = p[0];
    epfd = epoll_create1(0);
    CHECK_GE(epfd, 0);
    struct epoll_event ev = { .events = EPOLLIN };
    CHECK_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, rd, &ev), 0);

    for (long k = 0; k < NKINDS; k++) {
        atomic_store(&masked_in, 0);
        atomic_store(&masked_done, 0);
        atomic_store(&witness_done, 0);
        /* The masked call parks first (the longest waiter): were SIGUSR1
         * allowed to interrupt it, it would be chosen over the witness. */
        cap_thread_t m = spawn(masked, (void *)k);
        while (!atomic_load(&masked_in))
            cap_yield();
        cap_sleep_ns(20000000); /* let it reach its wait (either order is correct) */
        cap_thread_t w = spawn(witness, NULL);
        while (!atomic_load(&witness_done)) {
            CHECK_EQ(kill(getpid(), SIGUSR1), 0);
            cap_sleep_ns(1000000);
        }
        join(w);
        CHECK_EQ(witness_result, -1);
        CHECK_EQ(witness_err, EINTR);
        CHECK_EQ(atomic_load(&masked_done), 0);
        while (!atomic_load(&masked_done)) {
            CHECK_EQ(kill(getpid(), SIGUSR2), 0);
            cap_sleep_ns(1000000);
        }
        join(m);
        fprintf(stderr, "%s: %ld, errno %d\n", names[k], masked_result, masked_err);
        CHECK_EQ(masked_result, -1);
        CHECK_EQ(masked_err, EINTR);
    }
    CHECK_GT(usr1, 0);
    CHECK_GT(usr2, 0);
    return 0;
}
