/* SPDX-License-Identifier: MIT */
/*
 * Robust mutexes: which user thread holds which, and how a holder's end is
 * found (mutex.c owns the lock protocol; this file owns the records).
 *
 * A robust mutex whose holder ends while holding it is made "owner died"
 * for the next locker (POSIX, pthread_mutexattr_setrobust): its owner
 * word gets CAP__ROBUST_OWNER_DIED and its lock word is freed, so one
 * waiter takes it and is told EOWNERDEAD. Two ways a holder ends:
 *
 *  - a user thread of this process exits (returns, pthread_exit, a
 *    cancellation): each robust mutex it locks is noted in one table for
 *    the process, from just before its lock word is taken until it is
 *    released, and cap__robust_exit frees those it still holds so. The
 *    kernel's robust list cannot serve: it is one list per kernel thread
 *    (glibc's), whose entries sit at a fixed offset from the lock word
 *    that cap_mutex_t lacks, and the kernel knows nothing of user threads;
 *  - the process of a process-shared mutex's holder dies (a crash, a
 *    kill, exit with the mutex held): the holder's id carries its process
 *    id (sync/wait.c, cap__sync_shared_self_id), and a waiter looks
 *    whether that process has ended (cap__robust_process_gone) after
 *    CAP__ROBUST_CHECK_NS of waiting, then less often (sync.h).
 *
 * The table is static (ROBUST_MAX entries, open addressing by the mutex's
 * address, under one spin lock): the lock path allocates nothing, which
 * keeps it within the stack a runtime call may use on linked stacks
 * (stack/runtime_calls.h), and a full table is an error the lock returns
 * (EAGAIN), not a crash. Invariants: an entry names a mutex its thread
 * holds or is about to take or fail to take; a thread's `robust_noted`
 * counts its entries.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched/worker.h"
#include "sync/sync.h"
#include "thread/thread.h"
#include "util/spin.h"

enum { ROBUST_MAX = 4096 }; /* a power of two */

struct note {
    cap_mutex_t *m;      /* NULL: free */
    cap__thread *holder;
};

static cap__spin table_lock = CAP__SPIN_INIT;
static struct note table[ROBUST_MAX];   /* [table_lock] */
static unsigned table_used;             /* [table_lock] */

static unsigned home_of(const cap_mutex_t *m)
{
    uintptr_t a = (uintptr_t)m >> 3;
    return (unsigned)((a * UINT64_C(0x9E3779B97F4A7C15)) >> 52) & (ROBUST_MAX - 1);
}

int cap__robust_note(cap_mutex_t *m)
{
    cap__thread *self = cap__current();
    if (self == NULL)
        return 0; /* not a user thread: not noted (see sync.h) */
    cap__spin_lock(&table_lock);
    if (table_used == ROBUST_MAX) {
        cap__spin_unlock(&table_lock);
        return EAGAIN;
    }
    unsigned i = home_of(m);
    while (table[i].m != NULL)
        i = (i + 1) & (ROBUST_MAX - 1);
    table[i] = (struct note){ m, self };
    table_used++;
    cap__spin_unlock(&table_lock);
    self->robust_noted++;
    return 0;
}

/* Takes out the entry at i, moving later ones of its run back so that
 * every lookup still finds them (open addressing without tombstones). */
static void take_out(unsigned i)
{
    table[i].m = NULL;
    table_used--;
    for (unsigned j = (i + 1) & (ROBUST_MAX - 1); table[j].m != NULL;
         j = (j + 1) & (ROBUST_MAX - 1)) {
        unsigned h = home_of(table[j].m);
        /* j's entry may move to the hole at i if its home is not in (i, j] */
        bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            table[i] = table[j];
            table[j].m = NULL;
            i = j;
        }
    }
}

void cap__robust_forget(cap_mutex_t *m)
{
    cap__thread *self = cap__current();
    if (self == NULL || self->robust_noted == 0)
        return;
    cap__spin_lock(&table_lock);
    for (unsigned i = home_of(m); table[i].m != NULL; i = (i + 1) & (ROBUST_MAX - 1)) {
        if (table[i].m == m && table[i].holder == self) {
            take_out(i);
            self->robust_noted--;
            break;
        }
    }
    cap__spin_unlock(&table_lock);
}

void cap__robust_exit(cap__thread *self)
{
    /* One pass: take_out moves later entries back into the hole, so the
     * slot just emptied is looked at again, and no entry of ours moves
     * to a slot already passed. */
    cap__spin_lock(&table_lock);
    for (unsigned i = 0; i < ROBUST_MAX && self->robust_noted > 0;) {
        cap_mutex_t *m = table[i].m;
        if (m == NULL || table[i].holder != self) {
            i++;
            continue;
        }
        take_out(i);
        self->robust_noted--;
        cap__spin_unlock(&table_lock);
        cap__mutex_owner_died(m); /* wakes a waiter: outside the lock */
        cap__spin_lock(&table_lock);
    }
    cap__spin_unlock(&table_lock);
    self->robust_noted = 0;
}

void cap__robust_forked(void)
{
    /* A lost thread may have held the lock. Its entries stay, never
     * acted on: the mutexes they name stay held in the child, as glibc
     * leaves them, and its control block, never freed there
     * (thread/table.c), is no new thread's. */
    table_lock = (cap__spin)CAP__SPIN_INIT;
}

bool cap__robust_process_gone(pid_t pid)
{
    if (pid <= 0 || pid == getpid())
        return false;
    /* A pidfd of a process that has ended polls readable, also while it
     * is not yet reaped (kill(pid, 0) finds such a zombie alive). */
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) { /* gone and reaped; or a kernel before 5.3: kill says */
        if (errno == ENOSYS)
            return syscall(SYS_kill, pid, 0) != 0 && errno == ESRCH;
        return errno == ESRCH;
    }
    struct pollfd p = { .fd = fd, .events = POLLIN };
    struct timespec zero = { 0, 0 };
    long ready = syscall(SYS_ppoll, &p, 1, &zero, NULL, 0);
    syscall(SYS_close, fd);
    return ready == 1 && (p.revents & POLLIN);
}
