/* SPDX-License-Identifier: MIT */
/* Description: the POSIX daemon pattern. main blocks SIGTERM and SIGUSR1
 * before it makes any thread (they all inherit the block), and one thread
 * takes them with sigwait while the others go on with their I/O: every
 * signal sent to the process is taken by the waiter (never by a default
 * action: SIGTERM would end the process), with sigwaitinfo and
 * sigtimedwait too (their siginfo names the sender), and a wait that
 * times out says EAGAIN. A waiting thread parks: the sender and a ticker
 * go on meanwhile, also on one worker (where a wait that blocked the
 * worker would hang the test). Before, sigwait
 * blocked its worker, and with two workers the other worker's kernel
 * thread did not block SIGTERM, which then killed the process. */
#include <signal.h>
#include <time.h>

#include "io/io_util.h"

enum { SIGNALS = 40 };

static atomic_int taken;
static struct ticker tk;
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    handled++;
}

static sigset_t the_set(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGUSR1);
    return s;
}

static int expected_sig(int i)
{
    return i % 2 ? SIGTERM : SIGUSR1;
}

static void *waiter(void *arg)
{
    (void)arg;
    sigset_t s = the_set();
    for (int i = 0; i < SIGNALS; i++) {
        int sig = 0;
        if (i % 3 == 0) {
            CHECK_EQ(sigwait(&s, &sig), 0);
        } else {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            if (i % 3 == 1) {
                sig = sigwaitinfo(&s, &si);
            } else {
                struct timespec ts = { 10, 0 };
                sig = sigtimedwait(&s, &si, &ts);
            }
            CHECK_EQ(si.si_signo, sig);
            CHECK_EQ(si.si_pid, getpid());
            CHECK_EQ(si.si_code, SI_USER);
        }
        CHECK_EQ(sig, expected_sig(i));
        atomic_fetch_add(&taken, 1);
    }
    /* Nobody sends more: a timed wait ends with EAGAIN, and on one worker
     * the ticker ran meanwhile (the park switches to it at once). With two
     * the ticker may be on the other worker, whose kernel thread a loaded
     * machine may not run within the 20 ms: no check there (it once
     * failed so in CI). */
    struct timespec ts = { 0, 20000000 };
    long ticks = atomic_load(&tk.ticks);
    errno = 0;
    CHECK_EQ(sigtimedwait(&s, NULL, &ts), -1);
    CHECK_EQ(errno, EAGAIN);
    if (cap_worker_count() == 1)
        CHECK_GT(atomic_load(&tk.ticks), ticks);
    return NULL;
}

static void *sender(void *arg)
{
    (void)arg;
    for (int i = 0; i < SIGNALS; i++) {
        CHECK_EQ(kill(getpid(), expected_sig(i)), 0);
        while (atomic_load(&taken) == i) /* one at a time: they do not queue */
            cap_sleep_ns(100000);
    }
    return NULL;
}

int main(void)
{
    sigset_t s = the_set();
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, NULL), 0);
    cap_thread_t t = spawn(ticker_run, &tk);
    cap_thread_t w = spawn(waiter, NULL);
    cap_thread_t snd = spawn(sender, NULL);
    join(snd);
    join(w);
    CHECK_EQ(atomic_load(&taken), SIGNALS);
    struct timespec zero = { 0, 0 };
    errno = 0;
    CHECK_EQ(sigtimedwait(&s, NULL, &zero), -1); /* nothing left pending */
    CHECK_EQ(errno, EAGAIN);
    atomic_store(&tk.stop, 1);
    join(t);

    /* Alone, main waits for a signal it does not block (Linux allows it):
     * the wait takes it, no handler runs. */
    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &s, NULL), 0);
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
    timer_t tm;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &ev, &tm), 0);
    struct itimerspec it = { .it_value = { .tv_nsec = 10000000 } };
    CHECK_EQ(timer_settime(tm, 0, &it, NULL), 0);
    sigset_t u = the_set();
    struct timespec five = { 5, 0 };
    CHECK_EQ(sigtimedwait(&u, NULL, &five), SIGUSR1);
    CHECK_EQ(handled, 0);
    CHECK_EQ(timer_delete(tm), 0);
    puts("ok");
    return 0;
}
