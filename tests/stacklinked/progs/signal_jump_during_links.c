/* SPDX-License-Identifier: MIT */
/* Description: under linked stacks, a handler that siglongjmps out of a
 * thread that spends its time linking and unlinking chunks (a 200-frame
 * dive with 1 KiB frames, over and over, and a longjmp of its own from
 * the bottom every other time), so that the signal lands inside
 * __morestack, inside the link and unlink code, and inside the unwinding
 * of a longjmp (the program's, or a handler's jump made later). Two
 * timers aimed at the thread's kernel thread, SIGALRM and SIGUSR1, each
 * every 50 us and each handler blocking only its own signal, so that
 * one handler also lands inside the other and inside its jump. Every
 * landing finds the first chunk's limit; in the end there are as many
 * unlinks as links, and every chunk ever carved is back on a free list.
 * Before the fixes: a jump made in the middle of a link cut a free list
 * (a crash in spill), unlinked a chunk twice or lost one; a handler
 * nested as the outer one began handed its jump through a record with
 * no way back yet (a jump to address 0); and signals pending as each
 * jump restored the mask nested deeper and deeper on the 64 KiB
 * alternate signal stack until it overflowed. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "linked_util.h"

enum { DEPTH = 200, LANDINGS = 3000 };

static sigjmp_buf env;
static jmp_buf inner;
static volatile sig_atomic_t armed;
static volatile long landed, inner_jumps, dives;

static void jump_back(int sig)
{
    (void)sig;
    if (armed)
        siglongjmp(env, 1);
}

/* The bottom: back up by a return, or by the program's own longjmp. */
static long bottom(long n)
{
    if (n & 1)
        longjmp(inner, 1);
    return 0;
}

static void *diver(void *arg)
{
    (void)arg;
    uintptr_t limit0 = stack_limit();
    static timer_t alrm, usr1;
    static volatile int started;
    if (sigsetjmp(env, 1) != 0) {
        landed++;
        CHECK_EQ(stack_limit(), limit0);
    }
    if (!started) {
        started = 1;
        alrm = timer_on_this_kthread(SIGALRM, 50000);
        usr1 = timer_on_this_kthread(SIGUSR1, 50000);
    }
    while (landed < LANDINGS) {
        armed = 1;
        if (setjmp(inner) != 0) {
            inner_jumps++;
            CHECK_EQ(stack_limit(), limit0);
        }
        dives++;
        CHECK_EQ(dive(DEPTH, bottom, dives), 0);
        CHECK_EQ(stack_limit(), limit0);
    }
    armed = 0;
    CHECK_EQ(timer_delete(alrm), 0);
    CHECK_EQ(timer_delete(usr1), 0);
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = jump_back;
    CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
    cap_thread_t t;
    /* Only the diver takes the timer's signals: the handler jumps into its
     * frames, and a signal that finds its worker with no thread running is
     * kept for a thread that accepts it (io/sigroute.h), which would
     * otherwise be main, waiting in the join. */
    sigset_t only_diver, open_mask;
    sigemptyset(&only_diver);
    sigaddset(&only_diver, SIGALRM);
    sigaddset(&only_diver, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &only_diver, &open_mask), 0);
    cap_thread_attr_t da;
    CHECK_EQ(cap_thread_attr_init(&da), 0);
    CHECK_EQ(cap_thread_attr_setsigmask(&da, &open_mask), 0);
    CHECK_EQ(cap_thread_create(&t, &da, diver, NULL), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);

    cap_stack_stats_t st = stats();
    fprintf(stderr, "%ld landings, %ld dives, %ld inner jumps; %llu links, %llu unlinks, "
            "%llu chunks carved, %llu free\n", landed, dives, inner_jumps,
            (unsigned long long)st.chunks_linked, (unsigned long long)st.chunks_unlinked,
            (unsigned long long)st.chunks_mapped, (unsigned long long)st.chunks_free);
    CHECK_GE(st.chunks_linked, LANDINGS);
    CHECK_EQ(st.chunks_linked, st.chunks_unlinked);
    /* No user thread is left: every chunk is free, none lost. */
    CHECK_EQ(st.chunks_free, st.chunks_mapped);
    return 0;
}
