/* SPDX-License-Identifier: MIT */
/*
 * Kernel futex calls, used only where a *kernel* thread must sleep: an idle
 * worker, or a foreign kernel thread. User threads never call these; they
 * park (src/sched/park.h).
 */
#ifndef CAP_UTIL_FUTEX_H
#define CAP_UTIL_FUTEX_H

#include <stdint.h>

/* Sleeps while *word == expected, until woken or the absolute
 * CLOCK_MONOTONIC deadline (CAP__FOREVER: none). Spurious returns happen.
 * Returns 0 (woken: a futex wake took it off the queue, or spuriously),
 * ETIMEDOUT (the deadline, and no wake took it), EAGAIN (*word differed)
 * or EINTR (a signal). */
int cap__futex_wait(uint32_t *word, uint32_t expected, uint64_t deadline);
/* Returns how many kernel threads it woke. */
int cap__futex_wake(uint32_t *word, int count);

#endif /* CAP_UTIL_FUTEX_H */
