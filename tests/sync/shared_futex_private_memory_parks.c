/* SPDX-License-Identifier: MIT */
/* Description: a shared futex wait (no FUTEX_PRIVATE_FLAG: every wait of
 * libstdc++ 12's std::atomic::wait, std::latch and std::counting_semaphore)
 * made through syscall(2) on a user thread parks it when the word is in
 * private memory, where only this process can wake it, and waits in the
 * kernel when another process may map the word (sync/futex_key.c):
 *  - WAITERS user threads wait on words of the heap and of their own
 *    stacks; while they wait the process has no more kernel threads than
 *    before (each wait held an offload-pool thread before), and the wakes
 *    count exactly the waits that returned 0;
 *  - a user thread waits on a MAP_SHARED word that a forked child sets
 *    and wakes: the kernel's wait hears the other process;
 *  - a fork's child that maps shared memory where the parent has private
 *    memory waits there for a grandchild's wake: the child judges its own
 *    pages, not the parent's.
 * A wait that missed its wake would hang: alarm() ends the process then. */
#include <capriccio.h>
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "proc_util.h"

int *cap_errno_location(void); /* errno after a park: see io/io_util.h */
#undef errno
#define errno (*cap_errno_location())

enum { WAITERS = 200, ALARM_S = 20 };

/* A shared futex call, as libstdc++ makes it. */
static long wait_shared(atomic_uint *word, uint32_t val)
{
    return syscall(SYS_futex, word, FUTEX_WAIT, val, NULL, NULL, 0);
}

static long wake_shared(atomic_uint *word, int n)
{
    return syscall(SYS_futex, word, FUTEX_WAKE, n, NULL, NULL, 0);
}

/* Waits until *word is no longer 0; how many waits returned 0. */
static int wait_for_change(atomic_uint *word)
{
    int zeros = 0;
    while (atomic_load(word) == 0) {
        long r = wait_shared(word, 0);
        CHECK(r == 0 || (r == -1 && errno == EAGAIN));
        zeros += r == 0;
    }
    return zeros;
}

static void nap(long ns)
{
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
}

/* ---- many waiters on private memory ---------------------------------- */

static atomic_uint *heap_words;
static _Atomic(atomic_uint *) words[WAITERS];
static atomic_int arrived, zeros;

static void *waiter(void *arg)
{
    int i = (int)(intptr_t)arg;
    atomic_uint on_stack = 0;
    atomic_uint *word = i % 2 == 0 ? &heap_words[i] : &on_stack;
    atomic_store(&words[i], word);
    atomic_fetch_add(&arrived, 1);
    atomic_fetch_add(&zeros, wait_for_change(word));
    return NULL;
}

static void many_waiters_hold_no_kernel_threads(void)
{
    heap_words = calloc(WAITERS, sizeof *heap_words);
    CHECK(heap_words != NULL);
    int before = process_tasks();
    cap_thread_t t[WAITERS];
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, waiter, (void *)(intptr_t)i), 0);
    while (atomic_load(&arrived) < WAITERS)
        nap(1000000);
    nap(20000000); /* the waiters go on into their waits meanwhile */
    int during = process_tasks();
    if (during >= before + WAITERS / 4) {
        print_tasks("while the waiters wait");
        CHECK_LT(during, before + WAITERS / 4);
    }
    long woken = 0;
    for (int i = 0; i < WAITERS; i++) {
        atomic_uint *word = atomic_load(&words[i]);
        atomic_store(word, 1);
        long r = wake_shared(word, 1);
        CHECK(r == 0 || r == 1);
        woken += r;
    }
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
    CHECK_EQ(woken, atomic_load(&zeros));
    free(heap_words);
}

/* ---- memory another process maps ------------------------------------- */

/* shared[0]: the word; shared[1]: the waiter is about to wait. The other
 * process waits for shared[1], lets the waiter go to sleep, then sets the
 * word and wakes it with the kernel's call. */
static void other_process_wakes(atomic_uint *shared)
{
    while (atomic_load(&shared[1]) == 0)
        nap(1000000);
    nap(20000000);
    atomic_store(&shared[0], 1);
    CHECK_GE(wake_shared(&shared[0], 1), 0);
}

static void waits_for_other_process(atomic_uint *shared)
{
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        other_process_wakes(shared);
        _exit(0);
    }
    atomic_store(&shared[1], 1);
    wait_for_change(&shared[0]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void shared_mapping_hears_other_process(void)
{
    atomic_uint *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                               -1, 0);
    CHECK(shared != MAP_FAILED);
    waits_for_other_process(shared);
    CHECK_EQ(munmap(shared, 4096), 0);
}

/* The parent's page is private at the address where the child maps
 * shared memory. */
static void child_judges_its_own_pages(void)
{
    atomic_uint *region = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED);
    atomic_store(&region[0], 0); /* written: a present private page */
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        alarm(ALARM_S);
        void *at = mmap(region, 4096, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        CHECK(at == region);
        waits_for_other_process(region);
        _exit(0);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(munmap(region, 4096), 0);
}

int main(void)
{
    alarm(ALARM_S);
    many_waiters_hold_no_kernel_threads();
    shared_mapping_hears_other_process();
    child_judges_its_own_pages();
    return 0;
}
