/* SPDX-License-Identifier: MIT */
/*
 * stdio output on a user thread: fwrite, putw, fputs, puts, fputc, putc,
 * putchar (and their _unlocked names, and __overflow, which the
 * putc_unlocked macro calls when the buffer is full), the printf family
 * (printf, fprintf, vprintf, vfprintf and their _FORTIFY_SOURCE names),
 * and fflush (fclose's flush goes through it: stream.c), on a stream over
 * a pipe, FIFO, socket or terminal.
 *
 * glibc writes a stream's buffer out through its internal write, which
 * no interposition sees, so a write to a full pipe blocked the worker and
 * every thread queued there (a server logging to a pipe whose reader
 * lagged stopped serving). Here a call whose bytes fit in the stream's
 * buffer copies them in under the stream's lock, as glibc does (no system
 * call, no turn). A call that would write takes the stream's turn
 * (stdio_turn.h), moves the buffered bytes out and leaves the buffer
 * empty, then writes them and its own bytes with writev through the write
 * wrapper, which parks, with the lock released. Threads that meanwhile
 * fill the emptied buffer put their bytes after this call's; a call that
 * needs a write waits for the turn, so calls stay whole and in order of
 * their writes.
 *
 * Invariants:
 *  - never park holding the stream's lock (DESIGN.md, Hazard): the lock
 *    is released around the write, the turn kept;
 *  - the stream's state is glibc's own between calls: the buffer is left
 *    as glibc's flush leaves it (empty, read and write pointers at its
 *    base, the write end at the base for a line-buffered or unbuffered
 *    stream), and a line-buffered stream keeps what follows the call's
 *    last newline buffered, as glibc does;
 *  - a write error sets the stream's error flag, the call reports the
 *    bytes of its own that reached the descriptor, and the unwritten
 *    bytes are dropped, as glibc's failed flush drops them. A handler
 *    without SA_RESTART that interrupts a write before any byte moved is
 *    such an error (EINTR), as in glibc.
 * A call is glibc's unchanged where it may not park (stdio_turn.h) or the
 * stream is not plainly writing (unread input in its buffer, a put-back
 * area, a known file offset). A cancel that acts while the write waits
 * ends the call: its bytes and the ones it took out of the buffer are
 * lost (glibc would keep the buffered ones).
 * perror, psignal, the err/warn family and error(3) are in report.c.
 * fflush(NULL) writes stdout and stderr here, then the other streams
 * one by one as fflush(fp) does (flush_all_others), cookie streams too;
 * exit's writing of every stream takes their bytes out first
 * (flush_at_exit).
 * The wide-character calls are in stdio_wide.c (a wide stream's flush
 * too), psiginfo in report.c.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"
#include "io/io.h"

/* Macros in <stdio.h> with optimisation on: the functions are wanted. */
#undef putc
#undef putc_unlocked
#undef putchar
#undef putchar_unlocked
#undef fputc_unlocked
#undef fwrite_unlocked

extern int __overflow(FILE *fp, int ch);

enum { MAX_PIECES = 2 }; /* puts: the string and its newline */

/* Whether output on fp may park (stdio_turn.h). */
static bool may_park(FILE *fp)
{
    if (fp != NULL && (fp->_flags & CAP__IOF_NO_WRITES))
        return false;
    return cap__stdio_may_park(fp);
}

/* Whether fp is writing as glibc leaves a stream it writes: a buffer, no
 * input in it (a flush would seek back over that), no put-back area, and
 * no known file offset to keep. Called with fp locked. */
static bool putting(const FILE *fp)
{
    return (fp->_flags & CAP__IOF_CURRENTLY_PUTTING) && fp->_IO_write_base != NULL &&
           fp->_IO_read_end == fp->_IO_write_base && !(fp->_flags & CAP__IOF_IN_BACKUP) &&
           fp->_offset == -1;
}

/* Makes fp write as above if it can be done without a system call: a
 * fresh stream, or one whose input is all consumed, switches as glibc
 * switches it on its first write (its overflow with no character, which
 * writes nothing here since nothing is buffered for output). Called with
 * fp locked. */
static bool ready_to_put(FILE *fp)
{
    if (fp->_mode == 0)
        fp->_mode = -1; /* byte-oriented from its first write, as fwide(fp, -1) */
    if (putting(fp))
        return true;
    if ((fp->_flags & (CAP__IOF_CURRENTLY_PUTTING | CAP__IOF_IN_BACKUP)) ||
        fp->_IO_read_ptr < fp->_IO_read_end || fp->_offset != -1)
        return false;
    return CAP__REAL(__overflow)(fp, EOF) == 0 && putting(fp);
}

/* The buffer as glibc's flush leaves it. */
static void set_empty(FILE *fp)
{
    char *base = fp->_IO_buf_base;
    fp->_IO_read_base = fp->_IO_read_ptr = fp->_IO_read_end = base;
    fp->_IO_write_base = fp->_IO_write_ptr = base;
    fp->_IO_write_end =
        (fp->_flags & (CAP__IOF_LINE_BUF | CAP__IOF_UNBUFFERED)) ? base : fp->_IO_buf_end;
}

static bool has_newline(const struct iovec *v, int nv)
{
    for (int i = 0; i < nv; i++)
        if (v[i].iov_len > 0 && memchr(v[i].iov_base, '\n', v[i].iov_len) != NULL)
            return true;
    return false;
}

/* Whether total bytes go into fp's buffer without a write, as in glibc:
 * a fully buffered stream up to its write end, a line-buffered one up to
 * the buffer's end if no newline comes, an unbuffered one never. */
static bool fits(const FILE *fp, const struct iovec *v, int nv, size_t total)
{
    if (total == 0)
        return true;
    if (fp->_flags & CAP__IOF_UNBUFFERED)
        return false;
    if (fp->_flags & CAP__IOF_LINE_BUF)
        return total <= (size_t)(fp->_IO_buf_end - fp->_IO_write_ptr) && !has_newline(v, nv);
    return total <= (size_t)(fp->_IO_write_end - fp->_IO_write_ptr);
}

static void copy_in(FILE *fp, const struct iovec *v, int nv)
{
    for (int i = 0; i < nv; i++) {
        memcpy(fp->_IO_write_ptr, v[i].iov_base, v[i].iov_len);
        fp->_IO_write_ptr += v[i].iov_len;
    }
}

/* glibc's way, for a stream not writing as putting() wants. Called with
 * fp locked. */
static size_t put_glibc(FILE *fp, const struct iovec *v, int nv)
{
    size_t done = 0;
    for (int i = 0; i < nv; i++) {
        size_t r = CAP__REAL(fwrite_unlocked)(v[i].iov_base, 1, v[i].iov_len, fp);
        done += r;
        if (r < v[i].iov_len)
            break;
    }
    return done;
}

/* The bytes of a line-buffered call's pieces after its last newline, when
 * they fit in the buffer: glibc keeps them buffered. */
static size_t tail_kept(const FILE *fp, const struct iovec *v, int nv)
{
    if (!(fp->_flags & CAP__IOF_LINE_BUF) || (fp->_flags & CAP__IOF_UNBUFFERED))
        return 0;
    size_t tail = 0;
    for (int i = nv - 1; i >= 0; i--) {
        const char *p = v[i].iov_base;
        for (size_t k = v[i].iov_len; k > 0; k--) {
            if (p[k - 1] == '\n')
                return tail <= (size_t)(fp->_IO_buf_end - fp->_IO_buf_base) ? tail : 0;
            tail++;
        }
    }
    return 0; /* no newline: all of it goes */
}

/* Writes the n vectors, all of them, through the write wrapper (which
 * parks); the bytes written, and in *err the error that stopped it. */
static size_t write_all(int fd, struct iovec *v, int n, int *err)
{
    size_t done = 0;
    *err = 0;
    while (n > 0 && v[0].iov_len == 0) {
        v++;
        n--;
    }
    while (n > 0) {
        ssize_t r = writev(fd, v, n);
        if (r <= 0) {
            *err = r < 0 ? errno : EIO;
            break;
        }
        done += (size_t)r;
        size_t left = (size_t)r;
        while (n > 0 && left >= v[0].iov_len) {
            left -= v[0].iov_len;
            v++;
            n--;
        }
        if (n > 0) {
            v[0].iov_base = (char *)v[0].iov_base + left;
            v[0].iov_len -= left;
        }
    }
    return done;
}

/* In fp's turn, with fp locked (if locking) and writing: writes out what
 * fp buffers and then the call's pieces (if flush, even when they fit),
 * parking with the lock released. Returns the call's bytes accepted;
 * *failed tells whether a write failed (fp's error flag and errno set). */
static size_t put_in_turn(FILE *fp, const struct iovec *v, int nv, size_t total, bool locking,
                          bool flush, bool *failed)
{
    *failed = false;
    size_t pending = (size_t)(fp->_IO_write_ptr - fp->_IO_write_base);
    if (fits(fp, v, nv, total) && !(flush && pending > 0)) {
        copy_in(fp, v, nv); /* another call wrote the buffer out meanwhile */
        return total;
    }
    char *held = NULL;
    if (pending > 0) {
        held = malloc(pending);
        if (held == NULL) { /* no memory: glibc writes, blocking */
            if (flush) {
                *failed = CAP__REAL(fflush_unlocked)(fp) != 0;
                return 0;
            }
            size_t r = put_glibc(fp, v, nv);
            *failed = r < total;
            return r;
        }
        memcpy(held, fp->_IO_write_base, pending);
    }
    size_t keep = tail_kept(fp, v, nv);
    struct iovec all[1 + MAX_PIECES];
    int n = 0;
    all[n++] = (struct iovec){ held, pending };
    size_t to_write = total - keep;
    for (int i = 0; i < nv && to_write > 0; i++) {
        size_t len = v[i].iov_len < to_write ? v[i].iov_len : to_write;
        all[n++] = (struct iovec){ v[i].iov_base, len };
        to_write -= len;
    }
    set_empty(fp);
    /* The tail glibc keeps buffered goes in now, before the lock is let
     * go: a call that fits while this one waits in its write must put its
     * bytes after the tail, as it would after glibc's whole call. */
    if (keep > 0) {
        struct iovec rest[MAX_PIECES] = { { NULL, 0 } };
        int m = 0;
        size_t skip = total - keep;
        for (int i = 0; i < nv; i++) {
            if (skip >= v[i].iov_len) {
                skip -= v[i].iov_len;
                continue;
            }
            rest[m++] = (struct iovec){ (char *)v[i].iov_base + skip, v[i].iov_len - skip };
            skip = 0;
        }
        copy_in(fp, rest, m); /* fits: tail_kept checked it against the buffer's size */
    }
    int fd = fp->_fileno, err;
    cap_cleanup_frame_t frame; /* a cancel in the write frees what it took out */
    cap_cleanup_frame_push(&frame, free, held);
    cap__stdio_unlock(fp, locking);
    size_t wrote = write_all(fd, all, n, &err);
    cap__stdio_lock(fp, locking);
    cap_cleanup_frame_pop(&frame, 1);
    if (err != 0) {
        *failed = true;
        fp->_flags |= _IO_ERR_SEEN;
        cap__ic_set_errno(err); /* after a park (intercept.h) */
        if (keep > 0 && fp->_IO_write_ptr == fp->_IO_write_base + keep)
            fp->_IO_write_ptr = fp->_IO_write_base; /* glibc buffers no tail after a failed write */
        return wrote > pending ? wrote - pending : 0;
    }
    return total;
}

/* With fp locked: waits for fp's turn (never holding the lock while it
 * waits: the holder may be parked in its write), and locks fp again. */
static void turn_begin_locked(FILE *fp, struct cap__stdio_hold *h, bool locking)
{
    cap__stdio_unlock(fp, locking);
    cap__stdio_turn_begin(fp, h);
    cap__stdio_lock(fp, locking);
}

static void turn_end_locked(FILE *fp, struct cap__stdio_hold *h, bool locking)
{
    cap__stdio_unlock(fp, locking);
    cap__stdio_turn_end(h);
}

/* Puts the nv pieces (total bytes) on fp as one call: total, or on a
 * write error the bytes of the call that reached the descriptor (fp's
 * error flag then set, errno the write's). The caller has checked
 * may_park(fp). */
static size_t put(FILE *fp, const struct iovec *v, int nv, size_t total, bool locking)
{
    cap__stdio_lock(fp, locking);
    size_t r;
    if (!ready_to_put(fp)) {
        r = put_glibc(fp, v, nv);
    } else if (fits(fp, v, nv, total)) {
        copy_in(fp, v, nv);
        r = total;
    } else {
        struct cap__stdio_hold h;
        turn_begin_locked(fp, &h, locking);
        bool failed;
        r = ready_to_put(fp) ? put_in_turn(fp, v, nv, total, locking, false, &failed)
                             : put_glibc(fp, v, nv);
        turn_end_locked(fp, &h, locking);
        return r;
    }
    cap__stdio_unlock(fp, locking);
    return r;
}

static bool locks(const FILE *fp)
{
    return !(fp->_flags & _IO_USER_LOCK);
}

/* ---- fwrite, fputs, puts ------------------------------------------------ */

static size_t fwrite_here(const void *p, size_t size, size_t n, FILE *fp, bool locking)
{
    size_t total = size * n;
    struct iovec v = { (void *)p, total };
    size_t r = put(fp, &v, 1, total, locking);
    return r == total ? n : r / size;
}

size_t fwrite(const void *p, size_t size, size_t n, FILE *fp)
{
    if (size == 0 || n == 0 || cap__stdio_too_big(size, n) || !may_park(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        size_t r = CAP__REAL(fwrite)(p, size, n, fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    return fwrite_here(p, size, n, fp, locks(fp));
}

/* putw: an int's bytes, through fwrite above (glibc's writes through its
 * internal fwrite). 0, or EOF if they were not all written. */
int putw(int w, FILE *fp)
{
    return fwrite(&w, sizeof w, 1, fp) == 1 ? 0 : EOF;
}

size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *fp)
{
    if (size == 0 || n == 0 || cap__stdio_too_big(size, n) || !may_park(fp))
        return CAP__REAL(fwrite_unlocked)(p, size, n, fp);
    return fwrite_here(p, size, n, fp, false);
}

int fputs(const char *s, FILE *fp)
{
    if (!may_park(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        int r = CAP__REAL(fputs)(s, fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    size_t len = strlen(s);
    struct iovec v = { (void *)s, len };
    return put(fp, &v, 1, len, locks(fp)) == len ? 1 : EOF;
}

int fputs_unlocked(const char *s, FILE *fp)
{
    if (!may_park(fp))
        return CAP__REAL(fputs_unlocked)(s, fp);
    size_t len = strlen(s);
    struct iovec v = { (void *)s, len };
    return put(fp, &v, 1, len, false) == len ? 1 : EOF;
}

int puts(const char *s)
{
    FILE *fp = stdout;
    if (!may_park(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        int r = CAP__REAL(puts)(s);
        cap__stdio_unguard(&guard);
        return r;
    }
    size_t len = strlen(s);
    struct iovec v[2] = { { (void *)s, len }, { "\n", 1 } };
    if (put(fp, v, 2, len + 1, locks(fp)) != len + 1)
        return EOF;
    return len < INT_MAX ? (int)len + 1 : INT_MAX;
}

/* ---- one character ------------------------------------------------------ */

static int put_char(int c, FILE *fp, bool locking)
{
    unsigned char byte = (unsigned char)c;
    struct iovec v = { &byte, 1 };
    return put(fp, &v, 1, 1, locking) == 1 ? byte : EOF;
}

/* glibc's one-character call real, held off while another user thread
 * holds fp by flockfile (stdio_turn.h). */
static int guarded_char(int c, FILE *fp, int (*real)(int, FILE *))
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = real(c, fp);
    cap__stdio_unguard(&guard);
    return r;
}

int fputc(int c, FILE *fp)
{
    if (!may_park(fp))
        return guarded_char(c, fp, CAP__REAL(fputc));
    return put_char(c, fp, locks(fp));
}

int putc(int c, FILE *fp)
{
    if (!may_park(fp))
        return guarded_char(c, fp, CAP__REAL(putc));
    return put_char(c, fp, locks(fp));
}

int _IO_putc(int c, FILE *fp)
{
    return putc(c, fp);
}

int putchar(int c)
{
    return putc(c, stdout);
}

int fputc_unlocked(int c, FILE *fp)
{
    if (!may_park(fp))
        return CAP__REAL(fputc_unlocked)(c, fp);
    return put_char(c, fp, false);
}

int putc_unlocked(int c, FILE *fp)
{
    return fputc_unlocked(c, fp);
}

int putchar_unlocked(int c)
{
    return fputc_unlocked(c, stdout);
}

/* The putc_unlocked macro's call when fp's write pointer reached its end
 * (glibc's own calls use an internal name, never this one). With EOF it
 * only sets the stream up or flushes, as glibc's. */
int __overflow(FILE *fp, int c)
{
    if (c == EOF || !may_park(fp))
        return CAP__REAL(__overflow)(fp, c);
    return put_char(c, fp, locks(fp));
}

/* ---- the printf family --------------------------------------------------- */

extern int __vsnprintf_chk(char *s, size_t n, int flag, size_t room, const char *fmt, va_list ap);
extern int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);

/* Formats into memory (with the fortified checks when flag > 0, as
 * __vfprintf_chk) and puts the text on fp as one call. */
static int print(FILE *fp, int flag, const char *fmt, va_list ap)
{
    char small[512], *text = small;
    va_list again, failed;
    va_copy(again, ap);
    va_copy(failed, ap);
    int n = flag > 0 ? __vsnprintf_chk(small, sizeof small, flag, sizeof small, fmt, ap)
                     : vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        /* A conversion failed (EILSEQ, say): glibc's call puts the text
         * before it on fp and returns -1; its call does that (rare: it may
         * block the worker if that text fills the buffer). */
        va_end(again);
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        n = flag > 0 ? CAP__REAL(__vfprintf_chk)(fp, flag, fmt, failed)
                     : CAP__REAL(vfprintf)(fp, fmt, failed);
        cap__stdio_unguard(&guard);
        va_end(failed);
        return n;
    }
    va_end(failed);
    if (n >= (int)sizeof small) {
        text = malloc((size_t)n + 1);
        if (text == NULL) {
            va_end(again);
            errno = ENOMEM;
            return -1;
        }
        n = flag > 0 ? __vsnprintf_chk(text, (size_t)n + 1, flag, (size_t)n + 1, fmt, again)
                     : vsnprintf(text, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    if (n >= 0) {
        struct iovec v = { text, (size_t)n };
        if (put(fp, &v, 1, (size_t)n, locks(fp)) != (size_t)n)
            n = -1;
    }
    if (text != small)
        free(text);
    return n;
}

int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
    if (!may_park(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        int r = CAP__REAL(vfprintf)(fp, fmt, ap);
        cap__stdio_unguard(&guard);
        return r;
    }
    return print(fp, 0, fmt, ap);
}

int vprintf(const char *fmt, va_list ap)
{
    return vfprintf(stdout, fmt, ap);
}

int fprintf(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(fp, fmt, ap);
    va_end(ap);
    return n;
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stdout, fmt, ap);
    va_end(ap);
    return n;
}

int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
    if (!may_park(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        int r = CAP__REAL(__vfprintf_chk)(fp, flag, fmt, ap);
        cap__stdio_unguard(&guard);
        return r;
    }
    return print(fp, flag, fmt, ap);
}

int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
    return __vfprintf_chk(stdout, flag, fmt, ap);
}

int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = __vfprintf_chk(fp, flag, fmt, ap);
    va_end(ap);
    return n;
}

int __printf_chk(int flag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = __vfprintf_chk(stdout, flag, fmt, ap);
    va_end(ap);
    return n;
}

/* ---- for the error reporters (report.c) --------------------------------- */

bool cap__stdio_may_put(FILE *fp)
{
    return may_park(fp);
}

int cap__stdio_put(FILE *fp, const char *text, size_t n)
{
    struct iovec v = { (void *)text, n };
    return put(fp, &v, 1, n, locks(fp)) == n ? 0 : EOF;
}

/* ---- fflush ------------------------------------------------------------- */

/* glibc's fflush (real) of fp, held off while another user thread holds
 * fp by flockfile; nothing if real is NULL. */
static int flush_glibc(FILE *fp, bool locking, int (*real)(FILE *))
{
    if (real == NULL)
        return 0;
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, locking, &guard);
    int r = real(fp);
    cap__stdio_unguard(&guard);
    return r;
}

/* Writes out what fp buffers, parking; glibc's fflush (real) where fp is
 * not writing as putting() wants (an input stream's sync, say), or
 * nothing if real is NULL. */
static int flush(FILE *fp, bool locking, int (*real)(FILE *))
{
    if (fp != NULL && fp->_mode > 0)
        return cap__stdio_wide_flush(fp, locking, real);
    if (!may_park(fp))
        return flush_glibc(fp, locking, real);
    cap__stdio_lock(fp, locking);
    bool pending = putting(fp) && fp->_IO_write_ptr > fp->_IO_write_base;
    bool others = !putting(fp); /* an input stream's sync, say: glibc's */
    if (!pending) {
        cap__stdio_unlock(fp, locking);
        return others ? flush_glibc(fp, locking, real) : 0;
    }
    struct cap__stdio_hold h;
    turn_begin_locked(fp, &h, locking);
    int r = 0;
    if (putting(fp)) {
        bool failed;
        put_in_turn(fp, NULL, 0, 0, locking, true, &failed);
        r = failed ? EOF : 0;
    } else if (real != NULL) {
        r = CAP__REAL(fflush_unlocked)(fp); /* it stopped writing meanwhile */
    }
    turn_end_locked(fp, &h, locking);
    return r;
}

int cap__stdio_flush_before_close(FILE *fp)
{
    return fp != NULL ? flush(fp, locks(fp), NULL) : 0; /* else glibc's fclose flushes */
}

/* glibc's list of streams (libio), exported under these names. */
extern void _IO_list_lock(void);
extern void _IO_list_unlock(void);
extern FILE *_IO_iter_begin(void);
extern FILE *_IO_iter_end(void);
extern FILE *_IO_iter_next(FILE *iter);
extern FILE *_IO_iter_file(FILE *iter);

/* Whether fp has output buffered, as glibc's flush of every stream
 * looks at it. */
static bool output_pending(FILE *fp)
{
    return fp->_IO_write_ptr > fp->_IO_write_base || cap__stdio_wide_pending(fp);
}

/* Whether glibc's flush of every stream may have to wait for a pipe,
 * socket or terminal: some stream other than stdout and stderr has
 * output buffered for a descriptor that is not a regular file (or more
 * such streams than are looked at), or for no descriptor (a cookie's
 * write may park). The pointers are read under glibc's
 * list lock without the streams' own locks and the descriptors looked
 * at after it: a race only changes where the flush runs, not what it
 * does. */
static bool flush_all_may_wait(void)
{
    enum { LOOKED_MAX = 16 };
    int fds[LOOKED_MAX], n = 0;
    bool too_many = false;
    _IO_list_lock();
    for (FILE *it = _IO_iter_begin(); it != _IO_iter_end(); it = _IO_iter_next(it)) {
        FILE *fp = _IO_iter_file(it);
        if (fp == stdout || fp == stderr || !output_pending(fp))
            continue;
        if (fp->_fileno < 0) {
            /* A cookie or memory stream: glibc's flush of all would run
             * its write with glibc's locks held, which another user
             * thread of this worker would walk into if that write
             * parked, and could free it meanwhile. */
            too_many = true;
            break;
        }
        if (n == LOOKED_MAX) {
            too_many = true;
            break;
        }
        fds[n++] = fp->_fileno;
    }
    _IO_list_unlock();
    if (too_many)
        return true;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (syscall(SYS_fstat, fds[i], &st) != 0 || !S_ISREG(st.st_mode))
            return true;
    }
    return false;
}

/* The streams other than stdout and stderr with output buffered, named
 * under glibc's list lock; NULL with *n 0 if none, or if memory ran out
 * (*n then -1). */
static FILE **pending_streams(int *n)
{
    int cap = 16, count = 0;
    FILE **list = malloc(cap * sizeof *list);
    if (list == NULL) {
        *n = -1;
        return NULL;
    }
    _IO_list_lock();
    for (FILE *it = _IO_iter_begin(); it != _IO_iter_end(); it = _IO_iter_next(it)) {
        FILE *fp = _IO_iter_file(it);
        if (fp == stdout || fp == stderr || !output_pending(fp))
            continue;
        if (count == cap) {
            FILE **more = realloc(list, 2 * cap * sizeof *list);
            if (more == NULL) {
                _IO_list_unlock();
                free(list);
                *n = -1;
                return NULL;
            }
            list = more;
            cap *= 2;
        }
        list[count++] = fp;
    }
    _IO_list_unlock();
    *n = count;
    return list;
}

/* Whether fp is still in glibc's list (a walk's own call may have
 * closed it: intercept.h, cap__stream_end_begin). */
static bool still_listed(const FILE *fp)
{
    bool found = false;
    _IO_list_lock();
    for (FILE *it = _IO_iter_begin(); it != _IO_iter_end() && !found; it = _IO_iter_next(it))
        found = _IO_iter_file(it) == fp;
    _IO_list_unlock();
    return found;
}

struct walk {
    struct cap__stream_walker walker;
    FILE **list;
};

static void walk_end(void *arg)
{
    struct walk *w = arg;
    cap__streams_walk_end(&w->walker);
    free(w->list);
}

/* glibc's fflush(NULL) flushes every stream under glibc's list lock,
 * each under its own lock, with glibc's blocking write. On a user
 * thread, when one may wait (above), the streams are named under the
 * list lock and then each is flushed as fflush(fp) flushes it here,
 * parking, with the list lock free (a write that waited with it held
 * stopped every fopen and fclose, and blocked the worker of a user
 * thread that made one); the walk holds the streams gate (intercept.h),
 * given back if a cancel acts in one of its waits. The usual case,
 * nothing buffered or only for regular files, stays glibc's call. */
static int flush_all_others(void)
{
    if (!cap__ic_user() || !flush_all_may_wait())
        return CAP__REAL(fflush)(NULL);
    struct walk w = { .list = NULL };
    cap__streams_walk_begin(&w.walker);
    cap_cleanup_frame_t frame;
    cap_cleanup_frame_push(&frame, walk_end, &w);
    int n, r = 0, err = 0;
    w.list = pending_streams(&n);
    for (int i = 0; i < n; i++) {
        FILE *fp = w.list[i];
        if (still_listed(fp) && flush(fp, locks(fp), CAP__REAL(fflush)) != 0) {
            r = EOF;
            err = errno;
        }
    }
    cap_cleanup_frame_pop(&frame, 1);
    if (n < 0) /* no memory to name them: glibc's */
        return CAP__REAL(fflush)(NULL);
    if (r != 0)
        cap__ic_set_errno(err);
    return r;
}

/* At exit glibc writes out every stream after the atexit handlers and
 * the program's destructors, without the streams' locks (a thread
 * stopped in the middle of a call must not hold it up), with its
 * blocking write: on a user thread, a full pipe read by a user thread of
 * the same worker blocked that worker for good. The library's destructor
 * (runtime/init.c) calls cap__ic_stdout_exit_flush before that writing:
 * it takes the bytes of the byte streams over a pipe, socket or terminal
 * out of their buffers under glibc's list lock, as glibc's unlocked
 * writing would see them, and writes them through the write wrapper,
 * parking, in the list's order, with no lock held. What it
 * leaves (regular files, memory and cookie streams, whose writes run on
 * the calling thread in glibc, wide streams, and anything buffered after
 * it) glibc's exit writes as before. A write that finds a pipe's reader
 * gone raises SIGPIPE in the exiting thread, as glibc's does. */
struct exit_bytes {
    struct exit_bytes *next;
    int fd;
    size_t len;
    char bytes[];
};

static struct exit_bytes *take_for_exit(FILE *fp)
{
    if (fp->_fileno < 0 || fp->_mode > 0 || !putting(fp) ||
        fp->_IO_write_ptr <= fp->_IO_write_base)
        return NULL;
    struct stat st;
    if (syscall(SYS_fstat, fp->_fileno, &st) != 0 || S_ISREG(st.st_mode))
        return NULL; /* glibc's write there does not wait for a reader */
    size_t len = (size_t)(fp->_IO_write_ptr - fp->_IO_write_base);
    struct exit_bytes *b = malloc(sizeof *b + len);
    if (b == NULL)
        return NULL; /* glibc writes them */
    b->next = NULL;
    b->fd = fp->_fileno;
    b->len = len;
    memcpy(b->bytes, fp->_IO_write_base, len);
    set_empty(fp);
    return b;
}

void cap__ic_stdout_exit_flush(void)
{
    if (!cap__ic_user())
        return;
    int cancel_state; /* glibc's exit writes with calls no cancel acts in */
    cap_thread_setcancelstate(CAP_CANCEL_DISABLE, &cancel_state);
    struct exit_bytes *first = NULL, **tail = &first;
    struct cap__stream_walker walker;
    cap__streams_walk_begin(&walker); /* their descriptors stay theirs meanwhile */
    _IO_list_lock();
    for (FILE *it = _IO_iter_begin(); it != _IO_iter_end(); it = _IO_iter_next(it)) {
        struct exit_bytes *b = take_for_exit(_IO_iter_file(it));
        if (b != NULL) {
            *tail = b;
            tail = &b->next;
        }
    }
    _IO_list_unlock();
    while (first != NULL) {
        struct exit_bytes *b = first;
        first = b->next;
        struct iovec v = { b->bytes, b->len };
        int err;
        write_all(b->fd, &v, 1, &err); /* a failed one's bytes are dropped, as glibc's */
        free(b);
    }
    cap__streams_walk_end(&walker);
    cap_thread_setcancelstate(cancel_state, NULL);
}

int fflush(FILE *fp)
{
    if (fp == NULL) {
        /* Every stream: stdout's and stderr's output here (parking), then
         * glibc's for the rest (which finds those two written out). */
        int r = flush(stdout, locks(stdout), NULL);
        if (flush(stderr, locks(stderr), NULL) != 0)
            r = EOF;
        return flush_all_others() != 0 ? EOF : r;
    }
    return flush(fp, locks(fp), CAP__REAL(fflush));
}

int fflush_unlocked(FILE *fp)
{
    if (fp == NULL)
        return fflush(NULL);
    return flush(fp, false, CAP__REAL(fflush_unlocked));
}
