/* SPDX-License-Identifier: MIT */
/*
 * stdio input on a user thread: fgets, getline/getdelim, fread, getw, fgetc,
 * getc, getchar (and their _unlocked and _FORTIFY_SOURCE names, and
 * __uflow, which the getc_unlocked macro calls when the buffer is empty),
 * on a stream over a pipe, FIFO, socket or terminal; and the refill the
 * scanf family (scanf.c) reads through.
 *
 * glibc refills a stream's buffer through its internal read, which no
 * interposition sees, so such a call blocked its worker (and every thread
 * queued there) until input came. Here the wrapper parks the thread until
 * the descriptor is readable, through the I/O layer like a read (signals
 * and cancellation as for read: a handler without SA_RESTART ends the
 * call with EINTR and the stream's error flag, as glibc's read would),
 * and only then lets glibc refill: one refill reads what is there and does
 * not block. fgets, getdelim and fread are made here from the stream's
 * buffer (its public read pointers) and __uflow, one refill at a time, so
 * a line or a block that arrives in pieces parks between the pieces. The
 * one-character calls wait before glibc's call.
 *
 * Invariants:
 *  - each call is atomic with respect to the other wrapped calls on the
 *    same stream, as POSIX wants of stdio (two threads reading lines of
 *    one stream never share a line): a call that may wait holds the
 *    stream's *turn* (stdio_turn.h) for its whole length, since glibc's
 *    lock cannot be held across a park;
 *  - never park holding the stream's lock. glibc's FILE lock is
 *    recursive and owned by the kernel thread, so while one user thread
 *    held it parked, another thread of the same worker would walk in.
 *    The wrappers release it around each wait. A caller's own flockfile
 *    is let go while it is switched away (stdio_turn.h, flockfile), so
 *    its calls wait like any other. If this kernel thread holds the lock
 *    for another reason when the call begins (another thread of this
 *    worker parked inside a call glibc made), the call is glibc's, as
 *    before. A lock held by a thread of another worker is waited for in
 *    glibc's lock, as in glibc: never for long, since no holder parks.
 *  - the stream's EOF flag is sticky (glibc 2.28 on): a stream at EOF is
 *    not waited on.
 *  - glibc flushes a line-buffered stdout before it refills a line-
 *    buffered or unbuffered input stream (a prompt); that flush is made
 *    here before the wait, since the refill comes only after it.
 * Where a condition does not hold (a regular file, a wide stream, a
 * descriptor the application made non-blocking, one the backend cannot
 * watch, a stream with no descriptor, a thread the runtime does not run)
 * the call is glibc's unchanged.
 *
 * glibc specifics (a FILE's buffer pointers and internal flag values) are
 * confined to the stdio wrappers (stdio_turn.h, stdout.c).
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"
#include "io/io.h"
#include "sched/worker.h"
#include "capriccio/cancel.h"

/* Macros in <stdio.h> with optimisation on: the functions are wanted. */
#undef fread_unlocked
#undef getc
#undef getc_unlocked
#undef getchar
#undef getchar_unlocked
#undef fgetc_unlocked

extern int __uflow(FILE *fp);

/* Whether fp holds unread input. After an ungetc that did not fit the
 * buffer, glibc reads from a backup area and keeps the main area's unread
 * part in _IO_save_base.._IO_save_end until it switches back. */
bool cap__stdio_buffered(const FILE *fp)
{
    if (fp->_IO_read_ptr < fp->_IO_read_end)
        return true;
    return (fp->_flags & CAP__IOF_IN_BACKUP) && fp->_IO_save_end > fp->_IO_save_base;
}

/* Whether fp's next refill may park the caller instead of blocking its
 * worker (see the top of the file). The caller holds no lock of fp. */
bool cap__stdio_may_read(FILE *fp)
{
    if (fp != NULL && (fp->_flags & (_IO_EOF_SEEN | CAP__IOF_NO_READS)))
        return false;
    return cap__stdio_may_park(fp);
}

static ssize_t input_ready(int fd, void *arg)
{
    (void)arg;
    return cap__ic_revents_now(fd, POLLIN) != 0 ? 1 : -EAGAIN;
}

/* glibc flushes a line-buffered stdout before it refills a line-buffered
 * or unbuffered stream (see the top). */
/* isatty, without its ENOTTY for a pipe or file: glibc's own first refill
 * asks without a trace in errno, and a read that succeeds leaves it. */
static bool tty_keeping_errno(int fd)
{
    int err = cap__ic_errno(); /* out of line: the caller may park after */
    bool tty = isatty(fd);
    cap__ic_set_errno(err);
    return tty;
}

static void flush_before_refill(FILE *fp)
{
    /* glibc's refill first switches a stream that was writing to reading,
     * which writes out its pending output (_IO_switch_to_get_mode): on a
     * "r+" socket the request must leave before the answer is waited for.
     * fflush(fp) parks for it here (stdout.c; stdio_wide.c for a wide one),
     * in the turn the caller holds. */
    if (fp->_flags & CAP__IOF_CURRENTLY_PUTTING)
        fflush(fp);
    if ((fp->_flags & (CAP__IOF_LINE_BUF | CAP__IOF_UNBUFFERED)) ||
        (fp->_IO_buf_base == NULL && tty_keeping_errno(fp->_fileno))) /* glibc's first
                                                                        refill makes a
                                                                        terminal's stream
                                                                        line-buffered */
        if (stdout != fp && (stdout->_flags & CAP__IOF_LINE_BUF))
            fflush(stdout);
}

/* Parks until fp's descriptor is readable (or hung up, or in error: the
 * refill then finds out). 0, or -1 with errno EINTR and fp's error flag
 * set, as a refill whose read a handler interrupted; a cancel acts here.
 * On a terminal, by its mode (ttyio.c): no wait where its read returns
 * at once, and for VMIN = 0 with VTIME, 1 with fp's EOF flag set when
 * VTIME passes without input, as a refill whose read returned 0.
 * The caller holds no lock of fp. */
int cap__stdio_wait_input(FILE *fp)
{
    flush_before_refill(fp);
    int fd = fp->_fileno;
    cap__fd *f = cap__fd_get(fd);
    if (f == NULL)
        return 0;
    uint64_t deadline = CAP__FOREVER;
    int tty = -1;
    if (cap__fd_classify(f, fd) == CAP__FD_STREAM && !cap__fd_has(f, CAP__FDF_OWNED) &&
        cap__ic_is_tty(f, fd)) {
        tty = cap__ic_tty_input_wait(fd, &deadline);
        if (tty == CAP__TTY_IN_NO_WAIT)
            return 0;
    }
    cap__intr in = cap__ic_intr_cancel(deadline);
    ssize_t r = cap__io_do(f, fd, CAP__IO_READ, input_ready, NULL, deadline, false, &in, 0);
    if (r == -ECANCELED)
        cap__cancel_point();
    if (r == -ETIMEDOUT) {
        fp->_flags |= _IO_EOF_SEEN;
        return 1;
    }
    if (tty == CAP__TTY_IN_WAIT_THEN_POOL && r >= 0)
        return CAP__STDIO_REFILL_ON_POOL;
    if (r == -EINTR) {
        fp->_flags |= _IO_ERR_SEEN;
        cap__ic_ret(r); /* errno, and a handler's jump into this thread */
        return -1;
    }
    return 0; /* else a refill will tell (EBADF after a close, say) */
}

struct uflow_call {
    FILE *fp;
    int result, err;
};

static void run_uflow(void *arg)
{
    struct uflow_call *c = arg;
    int saved = errno;
    errno = 0;
    c->result = CAP__REAL(__uflow)(c->fp);
    c->err = errno;
    errno = saved;
}

/* stdio_turn.h. Not interrupted while it runs (a gap is VTIME at most). */
int cap__stdio_uflow_on_pool(FILE *fp)
{
    struct uflow_call c = { .fp = fp };
    if (cap__offload_wait(run_uflow, &c) != 0)
        run_uflow(&c); /* no pool thread: here, as glibc would */
    if (c.result == EOF && c.err != 0)
        cap__ic_set_errno(c.err);
    return c.result;
}

/* Refills fp, waiting first if nothing is there; returns its next
 * character (consumed), or EOF. Called with fp locked (if locking). */
int cap__stdio_refill(FILE *fp, bool locking)
{
    if (!cap__stdio_buffered(fp)) {
        cap__stdio_unlock(fp, locking);
        int rc = cap__stdio_wait_input(fp);
        int c = rc == CAP__STDIO_REFILL_ON_POOL ? cap__stdio_uflow_on_pool(fp) : EOF;
        cap__stdio_lock(fp, locking);
        if (rc == CAP__STDIO_REFILL_ON_POOL)
            return c;
        if (rc != 0)
            return EOF;
    }
    if (fp->_IO_read_ptr < fp->_IO_read_end) /* another thread refilled it meanwhile */
        return (unsigned char)*fp->_IO_read_ptr++;
    return CAP__REAL(__uflow)(fp); /* reads what is there, or switches back to the main area */
}

/* ---- fgets -------------------------------------------------------------- */

static char *fgets_here(char *s, int n, FILE *fp, bool locking)
{
    cap__stdio_lock(fp, locking);
    int old_error = fp->_flags & _IO_ERR_SEEN; /* glibc reports this call's errors */
    fp->_flags &= ~_IO_ERR_SEEN;
    size_t got = 0, room = (size_t)n - 1;
    bool ended = false;
    while (got < room && !ended) {
        if (fp->_IO_read_ptr >= fp->_IO_read_end) {
            int c = cap__stdio_refill(fp, locking);
            if (c == EOF)
                break;
            s[got++] = (char)c;
            ended = c == '\n';
            continue;
        }
        size_t have = (size_t)(fp->_IO_read_end - fp->_IO_read_ptr);
        size_t take = have < room - got ? have : room - got;
        char *nl = memchr(fp->_IO_read_ptr, '\n', take);
        if (nl != NULL) {
            take = (size_t)(nl - fp->_IO_read_ptr) + 1;
            ended = true;
        }
        memcpy(s + got, fp->_IO_read_ptr, take);
        fp->_IO_read_ptr += take;
        got += take;
    }
    char *r = s;
    if (got == 0 || ((fp->_flags & _IO_ERR_SEEN) && errno != EAGAIN))
        r = NULL;
    else
        s[got] = '\0';
    fp->_flags |= old_error;
    cap__stdio_unlock(fp, locking);
    return r;
}

/* fgets when fp's buffer holds the whole answer: under fp's lock, no
 * turn (a call waiting mid-way leaves the buffer empty). False if it
 * would need a refill. */
static bool fgets_buffered(char *s, int n, FILE *fp, bool locking)
{
    cap__stdio_lock(fp, locking);
    size_t have = (size_t)(fp->_IO_read_end - fp->_IO_read_ptr), room = (size_t)n - 1;
    size_t take = have < room ? have : room;
    char *nl = fp->_IO_read_ptr < fp->_IO_read_end ? memchr(fp->_IO_read_ptr, '\n', take) : NULL;
    bool whole = (fp->_flags & CAP__IOF_IN_BACKUP) == 0 && take > 0 && (nl != NULL || take == room);
    if (whole) {
        if (nl != NULL)
            take = (size_t)(nl - fp->_IO_read_ptr) + 1;
        memcpy(s, fp->_IO_read_ptr, take);
        fp->_IO_read_ptr += take;
        s[take] = '\0';
    }
    cap__stdio_unlock(fp, locking);
    return whole;
}

char *fgets(char *s, int n, FILE *fp)
{
    if (n <= 1 || !cap__stdio_may_read(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        char *r = CAP__REAL(fgets)(s, n, fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    if (fgets_buffered(s, n, fp, !(fp->_flags & _IO_USER_LOCK)))
        return s;
    struct cap__stdio_hold h;
    cap__stdio_turn_begin(fp, &h);
    char *r = fgets_here(s, n, fp, !(fp->_flags & _IO_USER_LOCK));
    cap__stdio_turn_end(&h);
    return r;
}

char *fgets_unlocked(char *s, int n, FILE *fp)
{
    if (n <= 1 || !cap__stdio_may_read(fp))
        return CAP__REAL(fgets_unlocked)(s, n, fp);
    if (fgets_buffered(s, n, fp, false))
        return s;
    struct cap__stdio_hold h;
    cap__stdio_turn_begin(fp, &h);
    char *r = fgets_here(s, n, fp, false);
    cap__stdio_turn_end(&h);
    return r;
}

extern void __chk_fail(void) __attribute__((noreturn));

char *__fgets_chk(char *s, size_t size, int n, FILE *fp)
{
    if (n > 0 && (size_t)n > size)
        __chk_fail();
    return fgets(s, n, fp);
}

char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *fp)
{
    if (n > 0 && (size_t)n > size)
        __chk_fail();
    return fgets_unlocked(s, n, fp);
}

/* ---- getdelim, getline ------------------------------------------------- */

/* Makes room for want bytes in *line (size *cap); false with errno ENOMEM
 * or EOVERFLOW, as glibc. */
static bool grow(char **line, size_t *cap, size_t want)
{
    if (want <= *cap)
        return true;
    if (want > (size_t)SSIZE_MAX) {
        errno = EOVERFLOW;
        return false;
    }
    size_t n = *cap < 120 ? 120 : *cap;
    while (n < want)
        n = n > SIZE_MAX / 2 ? want : n * 2;
    char *p = realloc(*line, n);
    if (p == NULL) {
        errno = ENOMEM;
        return false;
    }
    *line = p;
    *cap = n;
    return true;
}

static ssize_t getdelim_here(char **line, size_t *cap, int delim, FILE *fp)
{
    bool locking = !(fp->_flags & _IO_USER_LOCK);
    cap__stdio_lock(fp, locking);
    if (*line == NULL)
        *cap = 0;
    size_t got = 0;
    ssize_t r = -1;
    bool ended = false, failed = false;
    while (!ended) {
        if (fp->_IO_read_ptr >= fp->_IO_read_end) {
            int c = cap__stdio_refill(fp, locking);
            if (c == EOF)
                break;
            if (!grow(line, cap, got + 2)) {
                failed = true;
                fp->_flags |= _IO_ERR_SEEN;
                break;
            }
            (*line)[got++] = (char)c;
            ended = (unsigned char)c == (unsigned char)delim;
            continue;
        }
        size_t have = (size_t)(fp->_IO_read_end - fp->_IO_read_ptr);
        char *d = memchr(fp->_IO_read_ptr, delim, have);
        if (d != NULL) {
            have = (size_t)(d - fp->_IO_read_ptr) + 1;
            ended = true;
        }
        if (!grow(line, cap, got + have + 1)) {
            failed = true;
            fp->_flags |= _IO_ERR_SEEN;
            break;
        }
        memcpy(*line + got, fp->_IO_read_ptr, have);
        fp->_IO_read_ptr += have;
        got += have;
    }
    if (!failed && got > 0) {
        (*line)[got] = '\0';
        r = (ssize_t)got;
    } else if (!failed && got == 0 && !grow(line, cap, 1)) {
        fp->_flags |= _IO_ERR_SEEN; /* glibc allocates even at EOF */
    } else if (!failed && *line != NULL) {
        (*line)[0] = '\0';
    }
    cap__stdio_unlock(fp, locking);
    return r;
}

/* getdelim when fp's buffer holds the whole line (see fgets_buffered):
 * its length, or -2 if it would need a refill (or memory ran out: the
 * slow path then says so). */
static ssize_t getdelim_buffered(char **line, size_t *cap, int delim, FILE *fp)
{
    bool locking = !(fp->_flags & _IO_USER_LOCK);
    cap__stdio_lock(fp, locking);
    ssize_t r = -2;
    char *d = NULL;
    if ((fp->_flags & CAP__IOF_IN_BACKUP) == 0 && fp->_IO_read_ptr < fp->_IO_read_end)
        d = memchr(fp->_IO_read_ptr, delim, (size_t)(fp->_IO_read_end - fp->_IO_read_ptr));
    if (d != NULL) {
        size_t len = (size_t)(d - fp->_IO_read_ptr) + 1;
        if (*line == NULL)
            *cap = 0;
        if (grow(line, cap, len + 1)) {
            memcpy(*line, fp->_IO_read_ptr, len);
            (*line)[len] = '\0';
            fp->_IO_read_ptr += len;
            r = (ssize_t)len;
        }
    }
    cap__stdio_unlock(fp, locking);
    return r;
}

ssize_t getdelim(char **line, size_t *cap, int delim, FILE *fp)
{
    if (line == NULL || cap == NULL || !cap__stdio_may_read(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        ssize_t r = CAP__REAL(getdelim)(line, cap, delim, fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    ssize_t r = getdelim_buffered(line, cap, delim, fp);
    if (r != -2)
        return r;
    struct cap__stdio_hold h;
    cap__stdio_turn_begin(fp, &h);
    r = getdelim_here(line, cap, delim, fp);
    cap__stdio_turn_end(&h);
    return r;
}

ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *fp)
    __attribute__((alias("getdelim")));

ssize_t getline(char **line, size_t *cap, FILE *fp)
{
    return getdelim(line, cap, '\n', fp);
}

/* ---- fread ------------------------------------------------------------- */

/* fread when fp's buffer holds all of it (see fgets_buffered). */
static bool fread_buffered(void *p, size_t want, FILE *fp, bool locking)
{
    cap__stdio_lock(fp, locking);
    bool whole = (fp->_flags & CAP__IOF_IN_BACKUP) == 0 && fp->_IO_read_ptr < fp->_IO_read_end &&
                 (size_t)(fp->_IO_read_end - fp->_IO_read_ptr) >= want;
    if (whole) {
        memcpy(p, fp->_IO_read_ptr, want);
        fp->_IO_read_ptr += want;
    }
    cap__stdio_unlock(fp, locking);
    return whole;
}

/* A read of at least a buffer's worth into the caller's memory, past the
 * stream's buffer, as glibc's fread makes it (fewer, larger system
 * calls): through the read wrapper, which parks, with fp's lock released
 * (its turn is held). Only on an unseekable stream (no file offset to
 * keep) that has nothing buffered. Returns the bytes read; sets fp's EOF
 * or error flag as glibc's refill would. */
static size_t read_past_buffer(FILE *fp, char *p, size_t n, bool locking)
{
    flush_before_refill(fp);
    cap__stdio_unlock(fp, locking);
    ssize_t r = read(fp->_fileno, p, n);
    cap__stdio_lock(fp, locking);
    if (r > 0)
        return (size_t)r;
    fp->_flags |= r == 0 ? _IO_EOF_SEEN : _IO_ERR_SEEN;
    return 0;
}

static size_t fread_here(void *p, size_t size, size_t n, FILE *fp, bool locking)
{
    size_t want = size * n, got = 0;
    cap__stdio_lock(fp, locking);
    while (got < want) {
        size_t bufsize = (size_t)(fp->_IO_buf_end - fp->_IO_buf_base);
        if (fp->_IO_read_ptr >= fp->_IO_read_end && !(fp->_flags & CAP__IOF_IN_BACKUP) &&
            fp->_offset == -1 && fp->_IO_buf_base != NULL && want - got >= bufsize) {
            size_t r = read_past_buffer(fp, (char *)p + got, want - got, locking);
            if (r == 0)
                break;
            got += r;
            continue;
        }
        if (fp->_IO_read_ptr >= fp->_IO_read_end) {
            int c = cap__stdio_refill(fp, locking);
            if (c == EOF)
                break;
            ((char *)p)[got++] = (char)c;
            continue;
        }
        size_t have = (size_t)(fp->_IO_read_end - fp->_IO_read_ptr);
        size_t take = have < want - got ? have : want - got;
        memcpy((char *)p + got, fp->_IO_read_ptr, take);
        fp->_IO_read_ptr += take;
        got += take;
    }
    cap__stdio_unlock(fp, locking);
    return got / size;
}

size_t fread(void *p, size_t size, size_t n, FILE *fp)
{
    if (size == 0 || n == 0 || cap__stdio_too_big(size, n) || !cap__stdio_may_read(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        size_t r = CAP__REAL(fread)(p, size, n, fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    if (fread_buffered(p, size * n, fp, !(fp->_flags & _IO_USER_LOCK)))
        return n;
    struct cap__stdio_hold h;
    cap__stdio_turn_begin(fp, &h);
    size_t r = fread_here(p, size, n, fp, !(fp->_flags & _IO_USER_LOCK));
    cap__stdio_turn_end(&h);
    return r;
}

size_t fread_unlocked(void *p, size_t size, size_t n, FILE *fp)
{
    if (size == 0 || n == 0 || cap__stdio_too_big(size, n) || !cap__stdio_may_read(fp))
        return CAP__REAL(fread_unlocked)(p, size, n, fp);
    if (fread_buffered(p, size * n, fp, false))
        return n;
    struct cap__stdio_hold h;
    cap__stdio_turn_begin(fp, &h);
    size_t r = fread_here(p, size, n, fp, false);
    cap__stdio_turn_end(&h);
    return r;
}

size_t __fread_chk(void *p, size_t room, size_t size, size_t n, FILE *fp)
{
    if (cap__stdio_too_big(size, n) || size * n > room)
        __chk_fail();
    return fread(p, size, n, fp);
}

size_t __fread_unlocked_chk(void *p, size_t room, size_t size, size_t n, FILE *fp)
{
    if (cap__stdio_too_big(size, n) || size * n > room)
        __chk_fail();
    return fread_unlocked(p, size, n, fp);
}

/* getw: an int's bytes, through fread above (glibc's reads through its
 * internal fread). EOF if they did not all come. */
int getw(FILE *fp)
{
    int w;
    return fread(&w, 1, sizeof w, fp) == sizeof w ? w : EOF;
}

/* ---- one character: a wait before the call ------------------------------ */

/* A one-character call (real: glibc's, on fp). A character in fp's buffer
 * is taken under fp's lock, without a turn (a call waiting mid-way leaves
 * the buffer empty, so none is); else, in fp's turn, the wait and then
 * glibc's call. */
static int char_call(FILE *fp, bool locking, int (*real)(FILE *))
{
    if (!cap__stdio_may_read(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, locking, &guard);
        int c = real(fp);
        cap__stdio_unguard(&guard);
        return c;
    }
    cap__stdio_lock(fp, locking);
    if (fp->_IO_read_ptr < fp->_IO_read_end) {
        int c = (unsigned char)*fp->_IO_read_ptr++;
        cap__stdio_unlock(fp, locking);
        return c;
    }
    cap__stdio_unlock(fp, locking);
    struct cap__stdio_hold h;
    cap__stdio_turn_begin(fp, &h);
    int rc = cap__stdio_buffered(fp) ? 0 : cap__stdio_wait_input(fp);
    int c = rc == 0                          ? real(fp)
            : rc == CAP__STDIO_REFILL_ON_POOL ? cap__stdio_uflow_on_pool(fp)
                                              : EOF;
    cap__stdio_turn_end(&h);
    return c;
}

int fgetc(FILE *fp)
{
    return char_call(fp, fp != NULL && !(fp->_flags & _IO_USER_LOCK), CAP__REAL(fgetc));
}

int getc(FILE *fp)
{
    return char_call(fp, fp != NULL && !(fp->_flags & _IO_USER_LOCK), CAP__REAL(getc));
}

int _IO_getc(FILE *fp) __attribute__((alias("getc")));

int getchar(void)
{
    return getc(stdin);
}

int fgetc_unlocked(FILE *fp)
{
    return char_call(fp, false, CAP__REAL(fgetc_unlocked));
}

int getc_unlocked(FILE *fp)
{
    return char_call(fp, false, CAP__REAL(getc_unlocked));
}

int getchar_unlocked(void)
{
    return getc_unlocked(stdin);
}

/* The getc_unlocked macro's call when fp's buffer is empty (glibc's own
 * refills use an internal name, never this one). */
int __uflow(FILE *fp)
{
    return char_call(fp, fp != NULL && !(fp->_flags & _IO_USER_LOCK), CAP__REAL(__uflow));
}
