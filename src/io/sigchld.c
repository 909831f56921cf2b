/* SPDX-License-Identifier: MIT */
/*
 * The table of children whose end the program has seen (io/sigchld.h):
 * SEEN slots written round-robin, each a pid and the ticket at which it
 * was seen. The ticket is written first and the pid published after it;
 * a reader that finds the pid reads the ticket after it. Two writers on
 * one slot (SEEN reaps apart, at the same moment) may leave one's pid
 * with the other's ticket: a ticket of a reap either way.
 *
 * A record outlives its use when the SIGCHLD came before the reap was
 * recorded, or never comes: a later child given the same pid (after the
 * kernel's pids wrapped) would find it, and its SIGCHLD would then pass
 * by calls it should interrupt (a pause() waiting for it). fork forgets
 * the pid of each new child; for children made elsewhere (posix_spawn,
 * popen) a record is believed only for STALE_NS, far longer than a
 * SIGCHLD waits for its handler's kernel thread to run, and far shorter
 * than the pids take to wrap.
 */
#include "io/sigchld.h"

#include <stdatomic.h>

#include "io/sigintr.h"
#include "util/clock.h"

enum { SEEN = 64 };
#define STALE_NS 10000000000ull /* 10 s */

static struct {
    _Atomic pid_t pid;
    _Atomic uint64_t ticket;
    _Atomic uint64_t at; /* cap__now() */
} seen[SEEN];
static atomic_uint next;

void cap__sigchld_seen(pid_t pid)
{
    if (pid <= 0)
        return;
    unsigned i = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) % SEEN;
    atomic_store_explicit(&seen[i].pid, 0, memory_order_relaxed);
    atomic_store_explicit(&seen[i].ticket, cap__sig_ticket(), memory_order_relaxed);
    atomic_store_explicit(&seen[i].at, cap__now(), memory_order_relaxed);
    atomic_store_explicit(&seen[i].pid, pid, memory_order_release);
}

uint64_t cap__sigchld_seen_at(pid_t pid)
{
    uint64_t now = cap__now();
    for (unsigned i = 0; i < SEEN; i++)
        if (atomic_load_explicit(&seen[i].pid, memory_order_acquire) == pid &&
            now - atomic_load_explicit(&seen[i].at, memory_order_relaxed) < STALE_NS)
            return atomic_load_explicit(&seen[i].ticket, memory_order_relaxed);
    return 0;
}

void cap__sigchld_forget(pid_t pid)
{
    for (unsigned i = 0; i < SEEN; i++) {
        pid_t p = pid; /* a locked exchange only where the pid is */
        if (atomic_load_explicit(&seen[i].pid, memory_order_relaxed) == pid)
            atomic_compare_exchange_strong(&seen[i].pid, &p, 0);
    }
}
