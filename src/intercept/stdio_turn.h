/* SPDX-License-Identifier: MIT */
/*
 * What the stdio wrappers share (input: stdin.c, output: stdout.c, wide
 * streams: stdio_wide.c): a stream's *turn*, and the test of whether a
 * call on a stream may park.
 *
 * A turn is a user-level mutex found by the FILE's address. glibc's own
 * FILE lock is recursive and owned by the kernel thread, so it cannot be
 * held across a park (another thread of the same worker would walk in):
 * a wrapped call that may park holds the stream's turn for its whole
 * length instead, and the FILE lock only between its waits. That keeps
 * each call atomic with respect to the other wrapped calls on the stream,
 * as POSIX wants of stdio.
 *
 * glibc specifics (the lock's layout, internal flag values) are confined
 * to the stdio wrappers; the lock layout is checked once at first use,
 * and if it is not what we expect no stdio call parks.
 */
#ifndef CAP_INTERCEPT_STDIO_TURN_H
#define CAP_INTERCEPT_STDIO_TURN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "capriccio/cancel.h"

/* glibc's internal flag values (libio.h), stable since the libio rewrite;
 * _IO_EOF_SEEN, _IO_ERR_SEEN and _IO_USER_LOCK are public. */
enum {
    CAP__IOF_UNBUFFERED = 0x0002,
    CAP__IOF_NO_READS = 0x0004,
    CAP__IOF_NO_WRITES = 0x0008,
    CAP__IOF_IN_BACKUP = 0x0100,
    CAP__IOF_LINE_BUF = 0x0200,
    CAP__IOF_CURRENTLY_PUTTING = 0x0800,
};

struct cap__stdio_turn;

/* A call's hold of a turn: the turn (NULL if memory ran out: the call
 * then goes without, only its waits are then not exclusive), and the
 * cleanup frame that gives it back if a cancel acts in one of its waits. */
struct cap__stdio_hold {
    struct cap__stdio_turn *t;
    cap_cleanup_frame_t frame;
    bool locked; /* cap__stdio_hold_begin: a flockfile level taken too */
    int depth;   /* [locked] glibc's lock levels once that one was taken */
};

/* Waits for fp's turn; give it back with cap__stdio_turn_end. */
void cap__stdio_turn_begin(FILE *fp, struct cap__stdio_hold *h);
void cap__stdio_turn_end(struct cap__stdio_hold *h);

/* Whether a call on fp, made now by the calling thread, may park instead
 * of blocking its worker in glibc: a user thread; a byte stream (not
 * wide) over a descriptor the I/O layer can watch (socket, pipe, FIFO,
 * terminal) that the application did not make non-blocking and that has
 * no close under way; and fp's lock not held by this kernel thread,
 * unless by the caller's flockfile (another thread of this worker parked
 * inside a call of glibc's: the call is then glibc's too). The caller
 * holds no lock of fp other than its flockfile. */
bool cap__stdio_may_park(FILE *fp);
/* The same for a wide-character call (stdio_wide.c): fp not byte-
 * oriented instead of not wide. */
bool cap__stdio_may_park_wide(FILE *fp);

/* Input (stdin.c), for the scanf family (scanf.c): whether a read of fp
 * may park (cap__stdio_may_park, and fp not at EOF or write-only);
 * whether fp holds unread input; and fp's refill, parking first if
 * nothing is there: the next character (consumed) or EOF (fp's EOF or
 * error flag set, errno EINTR after a handler without SA_RESTART), called
 * with fp locked (if locking) and released around the wait. */
bool cap__stdio_may_read(FILE *fp);
bool cap__stdio_buffered(const FILE *fp);
int cap__stdio_refill(FILE *fp, bool locking);
/* Parks until fp's descriptor is readable, flushing a line-buffered
 * stdout first as glibc's refill would: 0, or -1 with errno EINTR and
 * fp's error flag set (a handler without SA_RESTART); a cancel acts here.
 * On a terminal also 1: its VTIME passed without input, fp's EOF flag
 * set; and CAP__STDIO_REFILL_ON_POOL: ready, but the refill's read may
 * wait between bytes (VMIN and VTIME), so it must not run on the worker
 * (cap__stdio_uflow_on_pool). The caller holds no lock of fp but its own
 * flockfile. */
enum { CAP__STDIO_REFILL_ON_POOL = 2 };
int cap__stdio_wait_input(FILE *fp);
/* glibc's __uflow of fp (the refill of an empty buffer, its next
 * character consumed, or EOF), made on the offload pool in the caller's
 * turn while fp is unlocked, errno carried back. */
int cap__stdio_uflow_on_pool(FILE *fp);

/* Output (stdout.c), for the error reporters (report.c): whether output
 * on fp may park, and n bytes put on fp as one call (0, or EOF with fp's
 * error flag and errno set). */
bool cap__stdio_may_put(FILE *fp);
int cap__stdio_put(FILE *fp, const char *text, size_t n);

/* Wide streams (stdio_wide.c), for fflush and fclose (stdout.c): whether
 * fp is wide with output buffered (read under fp's lock, or as a hint);
 * and fp's flush, parking: a wide stream's pending output written by the
 * offload pool, else glibc's fflush (real; nothing if NULL). */
bool cap__stdio_wide_pending(const FILE *fp);
int cap__stdio_wide_flush(FILE *fp, bool locking, int (*real)(FILE *));

/* Whether fread's or fwrite's size * n overflows (those calls are then
 * left to glibc, whose check is the same multiplication). */
static inline bool cap__stdio_too_big(size_t size, size_t n)
{
    return n != 0 && size > SIZE_MAX / n;
}


/* ---- flockfile (stdio_turn.c) ------------------------------------------
 * flockfile, ftrylockfile and funlockfile on a user thread take fp's turn
 * (recursively: the holder's own calls go on in it) and then glibc's lock,
 * which the thread lets go whenever it switches away and takes back before
 * it goes on (sched/held.h). So the holder may park, in its own stdio
 * calls too, and every other user thread's call on fp waits for the
 * holder's last funlockfile: a wrapped call in its turn, or, taking the
 * lock, as soon as it finds fp held (cap__stdio_lock); a call left to
 * glibc holds the lock across glibc's call (cap__stdio_guard), since it
 * cannot be made to wait once inside. */

/* Streams held by flockfile of user threads just now: while none is, the
 * checks above cost this one load. */
extern __attribute__((visibility("hidden"))) _Atomic int cap__stdio_user_locks;

/* glibc's own lock calls, under the names glibc also exports them by:
 * the library defines flockfile and funlockfile (below), and these names
 * reach glibc's straight through its PLT. */
extern void _IO_flockfile(FILE *fp);
extern void _IO_funlockfile(FILE *fp);
extern int _IO_ftrylockfile(FILE *fp);

void cap__stdio_lock_slow(FILE *fp);

/* A hold of fp for calls of glibc's that a kernel thread of the offload
 * pool makes on it for the caller (stdio_wide.c): fp's turn and, for a
 * stream with glibc's lock, a flockfile level of the caller, so that
 * every other user thread's call on fp waits as for flockfile while the
 * caller is parked and glibc's lock is free. False (nothing held) if no
 * turn could be made (no memory). A cancel acting in a wait inside gives
 * it back. */
bool cap__stdio_hold_begin(FILE *fp, struct cap__stdio_hold *h);
void cap__stdio_hold_end(struct cap__stdio_hold *h);

/* fp's lock, if it uses one (locking: not _IO_USER_LOCK and not an
 * _unlocked call): glibc's, taken once no other user thread holds fp by
 * flockfile or a hold (waiting for that in fp's turn, parked, before
 * glibc's lock is touched: a pool thread working for a holder may have
 * it, cap__stdio_lock_slow). */
static inline void cap__stdio_lock(FILE *fp, bool locking)
{
    if (!locking)
        return;
    if (__builtin_expect(atomic_load_explicit(&cap__stdio_user_locks, memory_order_relaxed) != 0, 0))
        cap__stdio_lock_slow(fp);
    else
        _IO_flockfile(fp);
}

static inline void cap__stdio_unlock(FILE *fp, bool locking)
{
    if (locking)
        _IO_funlockfile(fp);
}

/* What a call left to glibc on fp took before glibc's call
 * (cap__stdio_guard), given back by cap__stdio_unguard after it. */
struct cap__stdio_guard {
    FILE *fp;
    bool locked; /* fp locked (cap__stdio_lock) */
    bool held;   /* fp held (cap__stdio_hold_begin) */
    struct cap__stdio_hold h;
};

void cap__stdio_guard_slow(FILE *fp, struct cap__stdio_guard *g);

/* Before a call left to glibc on fp (locking: a call that takes fp's
 * lock, not an _unlocked one). A stream with no descriptor (fopencookie,
 * fmemopen, open_memstream) called on a user thread is held for the
 * call, as by cap__stdio_hold_begin: a cookie's function may park inside
 * glibc's call, with glibc's lock held, which the worker's other user
 * threads would walk into; held, they wait for the stream's turn instead,
 * and a cancel acting in the function gives the turn and glibc's lock
 * back. Any other stream is locked (cap__stdio_lock) while a user thread
 * holds some stream by flockfile or a hold; otherwise nothing, for two
 * loads. */
static inline void cap__stdio_guard(FILE *fp, bool locking, struct cap__stdio_guard *g)
{
    g->fp = fp;
    g->locked = false;
    g->held = false;
    if (!locking || fp == NULL)
        return;
    if (__builtin_expect(fp->_fileno >= 0 &&
                             atomic_load_explicit(&cap__stdio_user_locks, memory_order_relaxed) == 0,
                         1))
        return;
    cap__stdio_guard_slow(fp, g);
}

static inline void cap__stdio_unguard(struct cap__stdio_guard *g)
{
    if (g->held)
        cap__stdio_hold_end(&g->h);
    else if (g->locked)
        cap__stdio_unlock(g->fp, true);
}

#endif /* CAP_INTERCEPT_STDIO_TURN_H */
