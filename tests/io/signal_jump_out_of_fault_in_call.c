/* SPDX-License-Identifier: MIT */
/* Description: the count of async-signal-safe calls a thread is inside
 * (io/sigsafe.h) must not outlive a jump out of one. A fault inside such
 * a call (sem_post of a semaphore that is not mapped) has its handler's
 * jump made at once (a fault's handler cannot return), out of the call
 * whose scope then never closes. The old code left the thread counted
 * inside a call for good: every later handler that interrupted plain code
 * of the thread and jumped had its jump handed over and the handler
 * returned into that code, the jump left for the thread's next call.
 *
 * After the fault's jump, a signal queued to this kernel thread (its
 * handler runs as the raw system call returns, in plain code) must jump
 * at once: the code after the system call never runs. */
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "io/io_util.h"

enum { ROUNDS = 50 };

static sigjmp_buf env;
static volatile sig_atomic_t faults, jumps;

static void on_fault(int sig)
{
    (void)sig;
    faults++;
    siglongjmp(env, 1);
}

static void on_alarm(int sig)
{
    (void)sig;
    jumps++;
    siglongjmp(env, 2);
}

int main(void)
{
    void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(none != MAP_FAILED);
    install_handler(SIGSEGV, on_fault, SA_NODEFER);
    install_handler(SIGALRM, on_alarm, SA_NODEFER);
    static volatile int round; /* kept across the jumps */
    for (round = 0; round < ROUNDS; round++) {
        if (sigsetjmp(env, 1) == 0) {
            (void)sem_post((sem_t *)none);
            CHECK(!"sem_post of an unmapped semaphore returned");
        }
        CHECK_EQ(faults, round + 1);
        if (sigsetjmp(env, 1) == 0) {
            queue_here(SIGALRM);
            /* Raw calls: a wrapper's return would make the jump left
             * pending, and hide that it was not made here. */
            static const char msg[] = "the handler returned into plain code, its jump not made\n";
            syscall(SYS_write, 2, msg, sizeof msg - 1);
            syscall(SYS_exit_group, 1);
        }
        CHECK_EQ(jumps, round + 1);
    }
    CHECK_EQ(munmap(none, 4096), 0);
    return 0;
}
