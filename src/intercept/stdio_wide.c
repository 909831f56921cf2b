/* SPDX-License-Identifier: MIT */
/*
 * Wide-character stdio on a user thread: fgetwc, getwc, getwchar, fgetws,
 * fputwc, putwc, putwchar, fputws (and their _unlocked and
 * _FORTIFY_SOURCE names), the wprintf and wscanf families, and the flush
 * of a wide stream (fflush, fclose: stdout.c), on a stream over a pipe,
 * FIFO, socket or terminal.
 *
 * glibc reads and writes a wide stream through its internal calls, after
 * converting between its wide buffer and its byte buffer, so a call that
 * reached the descriptor blocked the worker. The byte-stream wrappers
 * move bytes themselves (stdin.c, stdout.c); for a wide stream the
 * conversion state is glibc's own, so here glibc's call still does the
 * work, but one that may reach the descriptor runs on a kernel thread of
 * the offload pool while only the caller parks:
 *  - a call that glibc would finish in the wide buffer (a character to
 *    take, text that fits and needs no flush) is done here, under the
 *    stream's lock, as glibc's inline paths do: no system call, no pool;
 *  - any other call holds the stream (cap__stdio_hold_begin: its turn
 *    and a flockfile level of the caller, so every other user thread's
 *    call on it waits) and has glibc's _unlocked call made by the pool:
 *    glibc's lock is free meanwhile (the caller's level is let go while
 *    it is parked), which is why the pool makes no locking call;
 *  - input parks first, through the I/O layer, until the descriptor is
 *    readable when neither buffer holds anything (signals and cancels
 *    as for read); the pool's refill then reads what is there. fgetws is
 *    made here from the wide buffer and one-character refills, so a line
 *    that arrives in pieces parks between them;
 *  - the wprintf family formats into memory first, then puts the text;
 *  - the wscanf family waits for input and then has glibc's locking call
 *    made by the pool: glibc has no _unlocked scanf, so glibc's lock is
 *    held on the pool while that call waits for more input than the
 *    first arrival held. Other user threads' calls on the stream wait
 *    for the hold, parked, before they take that lock (cap__stdio_lock);
 *    a kernel thread the library does not run waits in it.
 * Where a call may not park (stdio_turn.h: a regular file, a byte
 * stream, a descriptor made non-blocking, a thread the runtime does not
 * run), or the layout check below fails, the call is glibc's as before.
 * A pool refill that finds only part of a multibyte character waits
 * there for the rest (the caller is parked, not its worker, but a signal
 * or cancel does not end that wait).
 *
 * glibc specifics: the head of struct _IO_wide_data (its buffer
 * pointers, libio.h, as the old public getwc/putwc macros used them),
 * checked once at first use on a private wide memory stream.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"
#include "io/io.h"

/* The head of glibc's struct _IO_wide_data: the get, put and reserve
 * areas, in wide characters. */
struct wide_areas {
    wchar_t *read_ptr, *read_end, *read_base;
    wchar_t *write_base, *write_ptr, *write_end;
    wchar_t *buf_base, *buf_end;
};

static struct wide_areas *areas(const FILE *fp)
{
    return (struct wide_areas *)fp->_wide_data;
}

static int layout_state; /* 0 unchecked, 1 as expected, 2 not: glibc's calls */

/* Once: a character put on a wide memory stream sits where the put area
 * says, and the get area is empty at the buffer's start, as glibc leaves
 * a stream that writes. (glibc's byte memory streams have no wide areas.) */
static bool layout_ok(void)
{
    int s = __atomic_load_n(&layout_state, __ATOMIC_RELAXED);
    if (s != 0)
        return s == 1;
    bool ok = false;
    wchar_t *text = NULL;
    size_t len = 0;
    FILE *w = open_wmemstream(&text, &len);
    if (w != NULL && w->_wide_data != NULL && CAP__REAL(fputwc)(L'x', w) == L'x') {
        const struct wide_areas *a = areas(w);
        ok = a->write_ptr == a->write_base + 1 && a->write_base[0] == L'x' &&
             a->buf_base <= a->write_base && a->write_ptr <= a->write_end &&
             a->write_end <= a->buf_end && a->read_ptr == a->buf_base &&
             a->read_end == a->buf_base && a->read_base == a->buf_base;
    }
    if (w != NULL)
        CAP__REAL(fclose)(w);
    free(text);
    __atomic_store_n(&layout_state, ok ? 1 : 2, __ATOMIC_RELAXED);
    return ok;
}

static bool may_park(FILE *fp)
{
    return cap__stdio_may_park_wide(fp) && layout_ok();
}

static bool may_put(FILE *fp)
{
    return fp != NULL && !(fp->_flags & CAP__IOF_NO_WRITES) && may_park(fp);
}

/* At EOF (sticky since glibc 2.28) or write-only, glibc's call reads
 * nothing. */
static bool may_read(FILE *fp)
{
    return fp != NULL && !(fp->_flags & (_IO_EOF_SEEN | CAP__IOF_NO_READS)) && may_park(fp);
}

static bool locks(const FILE *fp)
{
    return fp != NULL && !(fp->_flags & _IO_USER_LOCK);
}

/* Whether fp may hold unread input, wide or not yet converted: also
 * while it reads from its push-back area, whose end glibc's refill
 * leaves for the main area's unread part. */
static bool buffered(const FILE *fp)
{
    const struct wide_areas *a = areas(fp);
    return a->read_ptr < a->read_end || fp->_IO_read_ptr < fp->_IO_read_end ||
           (fp->_flags & CAP__IOF_IN_BACKUP);
}

/* Whether glibc would put the n characters at s into fp's wide buffer
 * without a flush (its xsputn: no line-buffered newline, room enough).
 * Called with fp locked. */
static bool fits(const FILE *fp, const wchar_t *s, size_t n)
{
    const struct wide_areas *a = areas(fp);
    if (fp->_mode <= 0 || (fp->_flags & CAP__IOF_UNBUFFERED) || a->write_ptr == NULL)
        return false;
    if (fp->_flags & CAP__IOF_LINE_BUF)
        return (fp->_flags & CAP__IOF_CURRENTLY_PUTTING) &&
               (size_t)(a->buf_end - a->write_ptr) >= n && wmemchr(s, L'\n', n) == NULL;
    return (size_t)(a->write_end - a->write_ptr) >= n;
}

/* ---- calls made by the offload pool ---------------------------------------- */

enum wide_op { OP_GET, OP_PUTC, OP_PUT, OP_FLUSH, OP_SCAN };

typedef int (*wide_scanner)(FILE *, const wchar_t *, va_list);

struct wide_call {
    enum wide_op op;
    FILE *fp;
    wint_t wc;             /* OP_PUTC */
    const wchar_t *s;      /* OP_PUT: n characters */
    size_t n;
    wide_scanner scan;     /* OP_SCAN */
    const wchar_t *fmt;
    va_list ap;
    long result;           /* OP_GET/OP_PUTC: the character or WEOF; else 0/-1, or OP_SCAN's */
    int err;               /* errno after the call */
};

/* The n characters at s, a NUL at s[n], NULs inside included, put with
 * glibc's unlocked calls: 0, or -1 (errno set). */
static int put_unlocked(FILE *fp, const wchar_t *s, size_t n)
{
    const wchar_t *end = s + n;
    for (;;) {
        if (CAP__REAL(fputws_unlocked)(s, fp) < 0)
            return -1;
        s += wcslen(s);
        if (s == end)
            return 0;
        if (CAP__REAL(fputwc_unlocked)(L'\0', fp) == WEOF)
            return -1;
        s++;
    }
}

/* c's call, its errno in c->err (0 if it set none); errno as it was (run
 * inline, on the worker, a call that succeeds leaves the caller's). */
static void run(void *arg)
{
    struct wide_call *c = arg;
    int saved = errno;
    errno = 0;
    switch (c->op) {
    case OP_GET:
        c->result = CAP__REAL(fgetwc_unlocked)(c->fp);
        break;
    case OP_PUTC:
        c->result = CAP__REAL(fputwc_unlocked)((wchar_t)c->wc, c->fp);
        break;
    case OP_PUT:
        c->result = put_unlocked(c->fp, c->s, c->n);
        break;
    case OP_FLUSH:
        c->result = CAP__REAL(fflush_unlocked)(c->fp);
        break;
    case OP_SCAN:
        c->result = c->scan(c->fp, c->fmt, c->ap);
        break;
    }
    c->err = errno;
    errno = saved;
}

/* c made by the pool (inline if no pool thread can start); the caller
 * holds fp's hold. c->result, with errno set from the call if failed says
 * it failed. A write that found the pipe's reader gone raised SIGPIPE on
 * the pool thread, which blocks it: the caller gets it instead, as the
 * kernel would have sent it to the writer. */
static long in_pool(struct wide_call *c, bool failed_if_negative)
{
    bool pooled = cap__offload_wait(run, c) == 0; /* a pipe or tty: may wait for good */
    if (!pooled)
        run(c);
    bool failed = failed_if_negative ? c->result < 0 : c->result == (long)WEOF;
    if (failed && c->err == EPIPE && pooled && c->op != OP_GET && c->op != OP_SCAN)
        cap_thread_kill(cap_thread_self(), SIGPIPE);
    if (failed && c->err != 0) /* (glibc's call leaves errno alone at EOF) */
        cap__ic_set_errno(c->err); /* after a park (intercept.h) */
    return c->result;
}

/* ---- input ----------------------------------------------------------------- */

/* fp's next character, consumed, in fp's hold: waiting for input first if
 * neither buffer holds any, then glibc's refill on the pool. WEOF with
 * fp's EOF or error flag set, errno and *err the call's (EINTR after a
 * handler without SA_RESTART). */
static wint_t refill(FILE *fp, int *err)
{
    struct wide_areas *a = areas(fp);
    if (fp->_mode > 0 && a->read_ptr < a->read_end) /* another call refilled it */
        return (wint_t)*a->read_ptr++;
    int waited = buffered(fp) ? 0 : cap__stdio_wait_input(fp);
    if (waited != 0 && waited != CAP__STDIO_REFILL_ON_POOL) { /* the call below is pooled */
        *err = waited < 0 ? EINTR : 0; /* 1: a terminal's VTIME passed (end of input) */
        return WEOF;
    }
    struct wide_call c = { .op = OP_GET, .fp = fp };
    wint_t r = (wint_t)in_pool(&c, false);
    *err = c.err;
    return r;
}

static wint_t getwc_here(FILE *fp, bool locking, wint_t (*real)(FILE *))
{
    if (!may_read(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, locking, &guard);
        wint_t c = real(fp);
        cap__stdio_unguard(&guard);
        return c;
    }
    cap__stdio_lock(fp, locking);
    struct wide_areas *a = areas(fp);
    if (fp->_mode > 0 && a->read_ptr < a->read_end) {
        wint_t c = (wint_t)*a->read_ptr++;
        cap__stdio_unlock(fp, locking);
        return c;
    }
    cap__stdio_unlock(fp, locking);
    struct cap__stdio_hold h;
    if (!cap__stdio_hold_begin(fp, &h))
        return real(fp); /* no memory for a turn: glibc's, as before */
    int err;
    wint_t c = refill(fp, &err);
    cap__stdio_hold_end(&h);
    return c;
}

wint_t fgetwc(FILE *fp)
{
    return getwc_here(fp, locks(fp), CAP__REAL(fgetwc));
}

wint_t getwc(FILE *fp)
{
    return getwc_here(fp, locks(fp), CAP__REAL(getwc));
}

wint_t getwchar(void)
{
    return getwc(stdin);
}

wint_t fgetwc_unlocked(FILE *fp)
{
    return getwc_here(fp, false, CAP__REAL(fgetwc_unlocked));
}

wint_t getwc_unlocked(FILE *fp)
{
    return getwc_here(fp, false, CAP__REAL(getwc_unlocked));
}

wint_t getwchar_unlocked(void)
{
    return getwc_unlocked(stdin);
}

/* Up to room characters of a line from fp's wide buffer into s (+ *got),
 * the newline included; true if a newline ended them. */
static bool take_line(FILE *fp, wchar_t *s, size_t room, size_t *got)
{
    struct wide_areas *a = areas(fp);
    size_t have = (size_t)(a->read_end - a->read_ptr);
    size_t take = have < room - *got ? have : room - *got;
    wchar_t *nl = wmemchr(a->read_ptr, L'\n', take);
    if (nl != NULL)
        take = (size_t)(nl - a->read_ptr) + 1;
    wmemcpy(s + *got, a->read_ptr, take);
    a->read_ptr += take;
    *got += take;
    return nl != NULL;
}

/* fgetws (glibc's result rules: NULL if nothing was read or this call
 * saw an error other than EAGAIN; fp's older error flag kept). */
static wchar_t *getws_here(wchar_t *s, int n, FILE *fp, bool locking,
                           wchar_t *(*real)(wchar_t *, int, FILE *))
{
    if (n <= 0)
        return NULL;
    if (n == 1) {
        s[0] = L'\0';
        return s;
    }
    if (!may_read(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, locking, &guard);
        wchar_t *r = real(s, n, fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    size_t room = (size_t)n - 1, got = 0;
    cap__stdio_lock(fp, locking);
    struct wide_areas *a = areas(fp);
    if (fp->_mode > 0 && a->read_ptr < a->read_end &&
        ((size_t)(a->read_end - a->read_ptr) >= room ||
         wmemchr(a->read_ptr, L'\n', (size_t)(a->read_end - a->read_ptr)) != NULL)) {
        take_line(fp, s, room, &got); /* all of it in the buffer */
        s[got] = L'\0';
        cap__stdio_unlock(fp, locking);
        return s;
    }
    cap__stdio_unlock(fp, locking);
    struct cap__stdio_hold h;
    if (!cap__stdio_hold_begin(fp, &h))
        return real(s, n, fp);
    int old_error = fp->_flags & _IO_ERR_SEEN;
    fp->_flags &= ~_IO_ERR_SEEN;
    bool ended = false;
    int err = 0;
    while (got < room && !ended) {
        if (fp->_mode > 0 && a->read_ptr < a->read_end) {
            ended = take_line(fp, s, room, &got);
            continue;
        }
        wint_t c = refill(fp, &err);
        if (c == WEOF)
            break;
        s[got++] = (wchar_t)c;
        ended = c == L'\n';
    }
    wchar_t *r = s;
    if (got == 0 || ((fp->_flags & _IO_ERR_SEEN) && err != EAGAIN))
        r = NULL;
    else
        s[got] = L'\0';
    fp->_flags |= old_error;
    cap__stdio_hold_end(&h);
    return r;
}

wchar_t *fgetws(wchar_t *s, int n, FILE *fp)
{
    return getws_here(s, n, fp, locks(fp), CAP__REAL(fgetws));
}

wchar_t *fgetws_unlocked(wchar_t *s, int n, FILE *fp)
{
    return getws_here(s, n, fp, false, CAP__REAL(fgetws_unlocked));
}

_Noreturn void __chk_fail(void);

wchar_t *__fgetws_chk(wchar_t *s, size_t size, int n, FILE *fp)
{
    if (n > 0 && (size_t)n > size)
        __chk_fail();
    return fgetws(s, n, fp);
}

wchar_t *__fgetws_unlocked_chk(wchar_t *s, size_t size, int n, FILE *fp)
{
    if (n > 0 && (size_t)n > size)
        __chk_fail();
    return fgetws_unlocked(s, n, fp);
}

/* ---- output ---------------------------------------------------------------- */

/* wc put into fp's wide buffer if glibc would put it there without a
 * flush: its putwc's inline path (room before the put area's end), or,
 * on a line-buffered stream (whose put area glibc keeps empty, so every
 * character goes through its overflow), what that overflow does with a
 * character other than a newline while the buffer has room. Called with
 * fp locked. */
static bool put_in_place(FILE *fp, wchar_t wc)
{
    struct wide_areas *a = areas(fp);
    if (fp->_mode <= 0)
        return false;
    if (a->write_ptr < a->write_end) {
        *a->write_ptr++ = wc;
        return true;
    }
    if ((fp->_flags & (CAP__IOF_LINE_BUF | CAP__IOF_UNBUFFERED)) == CAP__IOF_LINE_BUF &&
        (fp->_flags & CAP__IOF_CURRENTLY_PUTTING) && a->write_base != NULL &&
        a->write_ptr < a->buf_end && wc != L'\n') {
        *a->write_ptr++ = wc;
        return true;
    }
    return false;
}

static wint_t putwc_here(wchar_t wc, FILE *fp, bool locking, wint_t (*real)(wchar_t, FILE *))
{
    if (!may_put(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, locking, &guard);
        wint_t r = real(wc, fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    cap__stdio_lock(fp, locking);
    if (put_in_place(fp, wc)) {
        cap__stdio_unlock(fp, locking);
        return (wint_t)wc;
    }
    cap__stdio_unlock(fp, locking);
    struct cap__stdio_hold h;
    if (!cap__stdio_hold_begin(fp, &h))
        return real(wc, fp);
    struct wide_call c = { .op = OP_PUTC, .fp = fp, .wc = (wint_t)wc };
    wint_t r = (wint_t)in_pool(&c, false);
    cap__stdio_hold_end(&h);
    return r;
}

wint_t fputwc(wchar_t wc, FILE *fp)
{
    return putwc_here(wc, fp, locks(fp), CAP__REAL(fputwc));
}

wint_t putwc(wchar_t wc, FILE *fp)
{
    return putwc_here(wc, fp, locks(fp), CAP__REAL(putwc));
}

wint_t putwchar(wchar_t wc)
{
    return putwc(wc, stdout);
}

wint_t fputwc_unlocked(wchar_t wc, FILE *fp)
{
    return putwc_here(wc, fp, false, CAP__REAL(fputwc_unlocked));
}

wint_t putwc_unlocked(wchar_t wc, FILE *fp)
{
    return putwc_here(wc, fp, false, CAP__REAL(putwc_unlocked));
}

wint_t putwchar_unlocked(wchar_t wc)
{
    return putwc_unlocked(wc, stdout);
}

/* The n characters at s (s[n] a NUL) on fp, which may park (may_put): copied
 * into the wide buffer if they fit, else put by the pool in fp's hold. 0,
 * or the error (errno set too: callers that read errno themselves after
 * a park would read another kernel thread's, intercept.h). */
static int put_text(FILE *fp, const wchar_t *s, size_t n, bool locking)
{
    cap__stdio_lock(fp, locking);
    if (fits(fp, s, n)) {
        struct wide_areas *a = areas(fp);
        a->write_ptr = wmempcpy(a->write_ptr, s, n);
        cap__stdio_unlock(fp, locking);
        return 0;
    }
    cap__stdio_unlock(fp, locking);
    struct cap__stdio_hold h;
    struct wide_call c = { .op = OP_PUT, .fp = fp, .s = s, .n = n };
    if (cap__stdio_hold_begin(fp, &h)) {
        in_pool(&c, true);
        cap__stdio_hold_end(&h);
    } else { /* no memory for a turn: glibc's, as before */
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, locking, &guard);
        run(&c);
        cap__stdio_unguard(&guard);
        if (c.result < 0)
            cap__ic_set_errno(c.err);
    }
    return c.result < 0 ? (c.err != 0 ? c.err : EIO) : 0;
}

static int putws_here(const wchar_t *s, FILE *fp, bool locking,
                      int (*real)(const wchar_t *, FILE *))
{
    if (!may_put(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, locking, &guard);
        int r = real(s, fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    return put_text(fp, s, wcslen(s), locking) == 0 ? 1 : EOF;
}

int fputws(const wchar_t *s, FILE *fp)
{
    return putws_here(s, fp, locks(fp), CAP__REAL(fputws));
}

int fputws_unlocked(const wchar_t *s, FILE *fp)
{
    return putws_here(s, fp, false, CAP__REAL(fputws_unlocked));
}

/* ---- the wprintf family ---------------------------------------------------- */

extern int __vswprintf_chk(wchar_t *s, size_t n, int flag, size_t slen, const wchar_t *fmt,
                           va_list ap);
extern int __vfwprintf_chk(FILE *fp, int flag, const wchar_t *fmt, va_list ap);

enum { SMALL_TEXT = 256, NO_CHECKS = -1 };

/* What fmt makes, formatted as glibc's vfwprintf would (flag: the
 * _FORTIFY_SOURCE level's, or NO_CHECKS), into small if it fits, else
 * into *big (malloc'd), NUL-terminated. Its length, or -1 with errno set (*len then the
 * part made before the error: glibc's call would have put that out). */
static int format(wchar_t *small, wchar_t **big, size_t *len, int flag, const wchar_t *fmt,
                  va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = flag == NO_CHECKS ? vswprintf(small, SMALL_TEXT, fmt, copy)
                              : __vswprintf_chk(small, SMALL_TEXT, flag, SMALL_TEXT, fmt, copy);
    va_end(copy);
    if (n >= 0) {
        *len = (size_t)n;
        return n;
    }
    /* Too long for small, or an error: a wide memory stream tells which. */
    FILE *m = open_wmemstream(big, len);
    if (m == NULL)
        return -1;
    n = flag == NO_CHECKS ? CAP__REAL(vfwprintf)(m, fmt, ap)
                          : CAP__REAL(__vfwprintf_chk)(m, flag, fmt, ap);
    int err = errno;
    if (CAP__REAL(fclose)(m) != 0 && n >= 0) {
        n = -1;
        err = errno;
    }
    if (n >= 0 && *len > (size_t)INT_MAX) {
        n = -1;
        err = EOVERFLOW;
    }
    errno = err;
    return n;
}

static int print(FILE *fp, int flag, const wchar_t *fmt, va_list ap)
{
    if (!may_put(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, locks(fp), &guard);
        int r = flag == NO_CHECKS ? CAP__REAL(vfwprintf)(fp, fmt, ap)
                                  : CAP__REAL(__vfwprintf_chk)(fp, flag, fmt, ap);
        cap__stdio_unguard(&guard);
        return r;
    }
    wchar_t small[SMALL_TEXT], *big = NULL;
    size_t len = 0;
    int n = format(small, &big, &len, flag, fmt, ap);
    int err = errno; /* (read before any park) */
    const wchar_t *text = big != NULL ? big : small;
    int put_err = len > 0 ? put_text(fp, text, len, locks(fp)) : 0;
    if (put_err != 0) {
        n = -1;
        err = put_err;
    }
    free(big);
    if (n < 0)
        cap__ic_set_errno(err);
    return n;
}

int vfwprintf(FILE *fp, const wchar_t *fmt, va_list ap)
{
    return print(fp, NO_CHECKS, fmt, ap);
}

int vwprintf(const wchar_t *fmt, va_list ap)
{
    return print(stdout, NO_CHECKS, fmt, ap);
}

int fwprintf(FILE *fp, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = print(fp, NO_CHECKS, fmt, ap);
    va_end(ap);
    return r;
}

int wprintf(const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = print(stdout, NO_CHECKS, fmt, ap);
    va_end(ap);
    return r;
}

int __vfwprintf_chk(FILE *fp, int flag, const wchar_t *fmt, va_list ap)
{
    return print(fp, flag, fmt, ap);
}

int __vwprintf_chk(int flag, const wchar_t *fmt, va_list ap)
{
    return print(stdout, flag, fmt, ap);
}

int __fwprintf_chk(FILE *fp, int flag, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = print(fp, flag, fmt, ap);
    va_end(ap);
    return r;
}

int __wprintf_chk(int flag, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = print(stdout, flag, fmt, ap);
    va_end(ap);
    return r;
}

/* ---- the wscanf family ----------------------------------------------------- */

/* <wchar.h> maps the C names to the C99 ones (__isoc99_*); the plain
 * names, what older binaries call, are defined under labels of their own
 * (as scanf.c does). */
int plain_vfwscanf(FILE *fp, const wchar_t *fmt, va_list ap) __asm__("vfwscanf");
int plain_vwscanf(const wchar_t *fmt, va_list ap) __asm__("vwscanf");
int plain_fwscanf(FILE *fp, const wchar_t *fmt, ...) __asm__("fwscanf");
int plain_wscanf(const wchar_t *fmt, ...) __asm__("wscanf");
extern int __isoc99_vfwscanf(FILE *fp, const wchar_t *fmt, va_list ap);
extern int __isoc99_vwscanf(const wchar_t *fmt, va_list ap);
extern int __isoc99_fwscanf(FILE *fp, const wchar_t *fmt, ...);
extern int __isoc99_wscanf(const wchar_t *fmt, ...);

static wide_scanner glibc_scanner(bool c99)
{
    static wide_scanner real[2];
    wide_scanner f = __atomic_load_n(&real[c99], __ATOMIC_RELAXED);
    if (f == NULL) {
        f = (wide_scanner)cap__real_sym(c99 ? "__isoc99_vfwscanf" : "vfwscanf");
        __atomic_store_n(&real[c99], f, __ATOMIC_RELAXED);
    }
    return f;
}

static int scan(bool c99, FILE *fp, const wchar_t *fmt, va_list ap)
{
    wide_scanner f = glibc_scanner(c99);
    struct cap__stdio_hold h;
    if (!may_read(fp) || !cap__stdio_hold_begin(fp, &h)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        int r = f(fp, fmt, ap);
        cap__stdio_unguard(&guard);
        return r;
    }
    int r;
    int waited = buffered(fp) ? 0 : cap__stdio_wait_input(fp);
    if (waited != 0 && waited != CAP__STDIO_REFILL_ON_POOL) {
        r = EOF;
    } else {
        struct wide_call c = { .op = OP_SCAN, .fp = fp, .scan = f, .fmt = fmt };
        va_copy(c.ap, ap);
        r = (int)in_pool(&c, true);
        va_end(c.ap);
    }
    cap__stdio_hold_end(&h);
    return r;
}

int plain_vfwscanf(FILE *fp, const wchar_t *fmt, va_list ap)
{
    return scan(false, fp, fmt, ap);
}

int plain_vwscanf(const wchar_t *fmt, va_list ap)
{
    return scan(false, stdin, fmt, ap);
}

int plain_fwscanf(FILE *fp, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = scan(false, fp, fmt, ap);
    va_end(ap);
    return r;
}

int plain_wscanf(const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = scan(false, stdin, fmt, ap);
    va_end(ap);
    return r;
}

int __isoc99_vfwscanf(FILE *fp, const wchar_t *fmt, va_list ap)
{
    return scan(true, fp, fmt, ap);
}

int __isoc99_vwscanf(const wchar_t *fmt, va_list ap)
{
    return scan(true, stdin, fmt, ap);
}

int __isoc99_fwscanf(FILE *fp, const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = scan(true, fp, fmt, ap);
    va_end(ap);
    return r;
}

int __isoc99_wscanf(const wchar_t *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = scan(true, stdin, fmt, ap);
    va_end(ap);
    return r;
}

/* ---- flush (stdout.c) ------------------------------------------------------ */

bool cap__stdio_wide_pending(const FILE *fp)
{
    if (fp->_mode <= 0 || !layout_ok())
        return false;
    const struct wide_areas *a = areas(fp);
    return a->write_ptr > a->write_base || fp->_IO_write_ptr > fp->_IO_write_base;
}

int cap__stdio_wide_flush(FILE *fp, bool locking, int (*real)(FILE *))
{
    bool pending = false;
    if (may_put(fp)) {
        cap__stdio_lock(fp, locking);
        pending = cap__stdio_wide_pending(fp);
        cap__stdio_unlock(fp, locking);
    }
    struct cap__stdio_hold h;
    if (!pending || !cap__stdio_hold_begin(fp, &h)) {
        if (real == NULL)
            return 0; /* (fclose's own flush) */
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, locking, &guard);
        int r = real(fp);
        cap__stdio_unguard(&guard);
        return r;
    }
    struct wide_call c = { .op = OP_FLUSH, .fp = fp };
    int r = (int)in_pool(&c, true);
    cap__stdio_hold_end(&h);
    return r;
}
