/* SPDX-License-Identifier: MIT */
/* Kernel futex wrappers; see futex.h. Raw system calls: the library's
 * syscall() (intercept/syscall.c) would park a user thread's futex wait. */
#include "util/futex.h"
#include "arch/syscall.h"
#include "util/clock.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

int cap__futex_wait(uint32_t *word, uint32_t expected, uint64_t deadline)
{
    struct timespec ts, *tsp = NULL;
    if (deadline != CAP__FOREVER) {
        ts = cap__ns_to_timespec(deadline);
        tsp = &ts;
    }
    /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so a
     * spurious wake-up never stretches the total wait. */
    long r = cap__sys6(SYS_futex, (long)word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected,
                       (long)tsp, 0, FUTEX_BITSET_MATCH_ANY);
    return r == 0 ? 0 : (int)-r;
}

int cap__futex_wake(uint32_t *word, int count)
{
    long r = cap__sys6(SYS_futex, (long)word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, count, 0, 0, 0);
    return r > 0 ? (int)r : 0;
}
