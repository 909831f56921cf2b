/* SPDX-License-Identifier: MIT */
/* Description: the handler of a signal sent to a thread may siglongjmp
 * out of the blocking call the thread waits in, as with a kernel signal
 * (the classic way to abandon a read). Each of THREADS threads, ROUNDS
 * times: sigsetjmp, then a blocking read (or poll, or sleep, or
 * semaphore wait) that main interrupts with pthread_kill; the handler
 * (SA_RESTART or not) jumps back. The call's records must be gone when
 * the jump lands: afterwards every thread still parks and wakes in reads
 * of its own pipe, and the runtime's lists are intact (a record left
 * linked on the abandoned stack crashes or hangs later calls, and trips
 * AddressSanitizer). */
#include <capriccio/sync.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "io/io_util.h"

enum { THREADS = 32, ROUNDS = 20 };

struct slot {
    _Atomic cap_thread_t t;
    int p[2];
    cap_sem_t sem;
    sigjmp_buf env;
    atomic_int round; /* rounds whose jump landed */
    atomic_int waiting;
};

static struct slot slots[THREADS];

static struct slot *mine(void)
{
    cap_thread_t self = cap_thread_self();
    for (int i = 0; i < THREADS; i++)
        if (slots[i].t == self)
            return &slots[i];
    _exit(5);
}

static void jump_back(int sig)
{
    (void)sig;
    siglongjmp(mine()->env, 1);
}

static void wait_kind(struct slot *s, int k)
{
    char c;
    switch (k) {
    case 0:
        (void)read(s->p[0], &c, 1);
        break;
    case 1: {
        struct pollfd pf = { .fd = s->p[0], .events = POLLIN };
        (void)poll(&pf, 1, -1);
        break;
    }
    case 2:
        sleep(100);
        break;
    default:
        (void)cap_sem_wait(&s->sem);
        break;
    }
    /* Only the jump ends these waits; the status says which returned. */
    _exit(10 + k);
}

static void *waiter(void *arg)
{
    struct slot *s = arg;
    while (s->t == 0)
        cap_yield();
    for (int r = 0; r < ROUNDS; r++) {
        if (sigsetjmp(s->env, 1) == 0) {
            atomic_store(&s->waiting, 1);
            wait_kind(s, (r + (int)(s - slots)) % 4);
        }
        atomic_store(&s->waiting, 0);
        atomic_fetch_add(&s->round, 1);
    }
    /* Parks and wakes normally afterwards. */
    char c = 0;
    CHECK_EQ(read(s->p[0], &c, 1), 1);
    CHECK_EQ(c, 'z');
    return NULL;
}

int main(void)
{
    install_handler(SIGUSR1, jump_back, 0);
    install_handler(SIGUSR2, jump_back, SA_RESTART);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(pipe(slots[i].p), 0);
        CHECK_EQ(cap_sem_init(&slots[i].sem, 0, 0), 0);
        slots[i].t = spawn(waiter, &slots[i]);
    }
    for (int r = 1; r <= ROUNDS; r++)
        for (int i = 0; i < THREADS; i++)
            while (atomic_load(&slots[i].round) < r) {
                /* Not SA_RESTART for a semaphore wait: held until it ends
                 * (docs/pthread-compat.md, Signals). */
                int kind = (r - 1 + i) % 4;
                int sig = kind == 3 || r % 2 ? SIGUSR1 : SIGUSR2;
                if (atomic_load(&slots[i].waiting))
                    CHECK_EQ(cap_thread_kill(slots[i].t, sig), 0);
                cap_usleep(1000);
            }
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ(write(slots[i].p[1], "z", 1), 1);
        join(slots[i].t);
    }
    return 0;
}
