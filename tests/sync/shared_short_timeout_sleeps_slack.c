/* SPDX-License-Identifier: MIT */
/* Description: a timed wait on a process-shared mutex, condition variable
 * or semaphore whose deadline has just come times out no earlier than
 * that deadline plus the kernel thread's timer slack (inherited by every
 * worker from the process: 50 us by default), as late as glibc's wait,
 * asleep in the kernel, could. Before, a deadline that passed while the
 * wait yielded its worker first (a microsecond away) returned ETIMEDOUT
 * at once: a program retrying 1 us timed locks on an object another
 * process held (APR's testprocmutex) spun where it sleeps under glibc.
 * The deadlines are the present, not a microsecond ahead: a wait that
 * reaches the kernel before its deadline ends when the kernel's timer
 * fires, which may be anywhere in the slack (earlier when other timers
 * expire on that CPU: a CI run under load saw it), and the library adds
 * nothing after it. Deadlines long past (more than the slack) still time
 * out at once. */
#include <sys/prctl.h>

#include "proc_util.h"
#include "util.h"

struct shared {
    cap_mutex_t m;
    cap_cond_t c;
    cap_sem_t s;
};

static struct shared *sh;
static uint64_t slack_ns;

static uint64_t mono_ns(void)
{
    struct timespec ts = ts_now(CLOCK_MONOTONIC);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct timespec at_ns(uint64_t ns)
{
    return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000u),
                              .tv_nsec = (long)(ns % 1000000000u) };
}

/* Runs while main holds the mutex. */
static void *timed_waits(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        uint64_t deadline = mono_ns();
        struct timespec abs = at_ns(deadline);
        CHECK_EQ(cap_mutex_clocklock(&sh->m, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
        CHECK(mono_ns() >= deadline + slack_ns);

        deadline = mono_ns();
        abs = at_ns(deadline);
        CHECK_EQ(cap_sem_clockwait(&sh->s, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
        CHECK(mono_ns() >= deadline + slack_ns);
    }
    return NULL;
}

int main(void)
{
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    CHECK(slack >= 0);
    slack_ns = (uint64_t)slack;
    sh = shared_map(sizeof *sh);
    shared_mutex_init(&sh->m, CAP_MUTEX_NORMAL);
    shared_cond_init(&sh->c);
    CHECK_EQ(cap_sem_init(&sh->s, 1, 0), 0);

    CHECK_EQ(cap_mutex_lock(&sh->m), 0);
    join(spawn(timed_waits, NULL));
    /* A condition wait re-takes the mutex: main holds it. */
    for (int i = 0; i < 20; i++) {
        uint64_t deadline = mono_ns();
        struct timespec abs = at_ns(deadline);
        CHECK_EQ(cap_cond_clockwait(&sh->c, &sh->m, CLOCK_MONOTONIC, &abs), ETIMEDOUT);
        CHECK(mono_ns() >= deadline + slack_ns);
    }
    /* Long past: at once, and on this thread (no pool thread started). */
    int tasks = process_tasks();
    struct timespec past = ts_after(CLOCK_MONOTONIC, -10);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(cap_sem_clockwait(&sh->s, CLOCK_MONOTONIC, &past), ETIMEDOUT);
    CHECK_EQ(process_tasks(), tasks);
    CHECK_EQ(cap_mutex_unlock(&sh->m), 0);
    return 0;
}
