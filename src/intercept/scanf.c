/* SPDX-License-Identifier: MIT */
/*
 * The scanf family on a user thread (vfscanf, vscanf, fscanf, scanf and
 * their C99 names __isoc99_*), on a stream over a pipe, FIFO, socket or
 * terminal: the thread parks for input instead of blocking its worker,
 * also for input a conversion needs after it started.
 *
 * glibc's vfscanf refills the stream through its internal calls, which
 * no wrapper sees. So glibc's call first runs on the stream itself with
 * its refills made to read nothing (scan_buffered): what scanf mostly
 * reads is in the buffer already, and this is fast. If it tried a refill,
 * it wanted more: the stream is put back as it was and
 * glibc's vfscanf runs again, on a private cookie stream (fopencookie)
 * whose reads take the bytes of the real stream's buffer and refill it
 * through the parking refill (stdin.c). When it ends, the bytes the
 * private stream holds unread (its read-ahead, and the character scanf
 * pushed back) are given back to the real stream, so the next call sees
 * them as glibc would have left them. A format that allocates (%m) goes
 * to the private stream at once.
 *
 * Invariants:
 *  - every call holds the stream's turn (stdio_turn.h), so a call is
 *    atomic among the wrapped calls on the stream, though it waits;
 *  - the real stream's lock is held only inside the private stream's
 *    read, never across a park (the private stream takes no lock);
 *  - the bytes the private stream holds are a suffix of the bytes its
 *    reads took, all from the real stream's current buffer area, which
 *    still holds them in place: giving them back moves the read pointer
 *    back (else, as a fallback, glibc's ungetc).
 * A conversion the first attempt completed is assigned again by the
 * second (the same bytes, then more): an argument beyond the count the
 * call returns may have been written by the first.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"

extern int __uflow(FILE *fp);

/* <stdio.h> maps the C names to the C99 ones (__isoc99_*, what a
 * program built in C99 mode or later calls); the plain names, what older
 * binaries call, are defined under labels of their own. */
int plain_vfscanf(FILE *fp, const char *fmt, va_list ap) __asm__("vfscanf");
int plain_vscanf(const char *fmt, va_list ap) __asm__("vscanf");
int plain_fscanf(FILE *fp, const char *fmt, ...) __asm__("fscanf");
int plain_scanf(const char *fmt, ...) __asm__("scanf");
extern int __isoc99_vfscanf(FILE *fp, const char *fmt, va_list ap);
extern int __isoc99_vscanf(const char *fmt, va_list ap);
extern int __isoc99_fscanf(FILE *fp, const char *fmt, ...);
extern int __isoc99_scanf(const char *fmt, ...);

enum { SOURCE_BUF = 256 }; /* the private stream's buffer: what may be given back */

/* glibc's vfscanf under its plain name or its C99 one, looked up once. */
typedef int (*scanner)(FILE *, const char *, va_list);

static scanner glibc_scanner(bool c99)
{
    static scanner real[2];
    scanner f = __atomic_load_n(&real[c99], __ATOMIC_RELAXED);
    if (f == NULL) {
        f = (scanner)cap__real_sym(c99 ? "__isoc99_vfscanf" : "vfscanf");
        __atomic_store_n(&real[c99], f, __ATOMIC_RELAXED);
    }
    return f;
}

/* Whether fmt may allocate (%m, and glibc's old %as, %aS, %a[): made a
 * second time, a call would lose what its first attempt allocated. */
static bool allocates(const char *fmt)
{
    return strchr(fmt, 'm') != NULL || strstr(fmt, "%a") != NULL;
}

/* glibc's vfscanf on fp itself, from what fp's buffer holds, with its
 * refills made to read nothing: the buffer's end is put at its start for
 * the while, so glibc's refill asks for 0 bytes, which a pipe, socket or
 * terminal answers at once with 0 (EOF to glibc; no byte is lost). Its
 * result, or -2 if the call tried a refill and so wanted more than the
 * buffer held: fp is then put back as it was (a failed refill leaves the
 * bytes in place), for the parking path to read again, and what the
 * attempt assigned is assigned again. Called in fp's turn, fp locked
 * throughout (glibc's call never waits). */
static int scan_buffered(scanner f, FILE *fp, bool locking, const char *fmt, va_list ap)
{
    cap__stdio_lock(fp, locking);
    if ((fp->_flags & (CAP__IOF_IN_BACKUP | _IO_EOF_SEEN)) || fp->_IO_read_ptr >= fp->_IO_read_end ||
        fp->_IO_buf_base == NULL) {
        cap__stdio_unlock(fp, locking);
        return -2;
    }
    char *read_base = fp->_IO_read_base, *read_ptr = fp->_IO_read_ptr;
    char *read_end = fp->_IO_read_end, *buf_end = fp->_IO_buf_end;
    int err = errno, flags = fp->_flags;
    fp->_IO_buf_end = fp->_IO_buf_base;
    int r = f(fp, fmt, ap);
    fp->_IO_buf_end = buf_end;
    int refilled = fp->_flags & ~flags & (_IO_EOF_SEEN | _IO_ERR_SEEN);
    fp->_flags &= ~refilled;
    /* (After its failed refill glibc's call reads and pushes back nothing
     * more, so the stream is not in its push-back area; if it ever were,
     * the result stands.) */
    if (refilled != 0 && !(fp->_flags & CAP__IOF_IN_BACKUP)) {
        fp->_IO_read_base = read_base;
        fp->_IO_read_ptr = read_ptr;
        fp->_IO_read_end = read_end;
        errno = err;
        r = -2;
    }
    cap__stdio_unlock(fp, locking);
    return r;
}

struct source {
    FILE *fp;
    bool locking;
};

/* The private stream's read: what fp's buffer holds (refilled first,
 * parking, if empty). 0 at EOF; -1 with errno on an error (EINTR from a
 * handler without SA_RESTART: fp's error flag is set too). */
static ssize_t source_read(void *cookie, char *buf, size_t n)
{
    struct source *src = cookie;
    FILE *fp = src->fp;
    cap__stdio_lock(fp, src->locking);
    ssize_t r;
    if (fp->_IO_read_ptr >= fp->_IO_read_end) {
        int c = cap__stdio_refill(fp, src->locking);
        if (c == EOF) {
            r = (fp->_flags & _IO_ERR_SEEN) ? -1 : 0;
            cap__stdio_unlock(fp, src->locking);
            return r;
        }
        if (fp->_IO_read_ptr > fp->_IO_read_base &&
            (unsigned char)fp->_IO_read_ptr[-1] == (unsigned char)c) {
            fp->_IO_read_ptr--; /* in place, just behind the read pointer: from there */
        } else {
            buf[0] = (char)c; /* (never seen) */
            cap__stdio_unlock(fp, src->locking);
            return 1;
        }
    }
    size_t have = (size_t)(fp->_IO_read_end - fp->_IO_read_ptr);
    size_t take = have < n ? have : n;
    if (take > SOURCE_BUF)
        take = SOURCE_BUF; /* (n is the buffer's size) */
    memcpy(buf, fp->_IO_read_ptr, take);
    fp->_IO_read_ptr += take;
    cap__stdio_unlock(fp, src->locking);
    return (ssize_t)take;
}

/* Gives the n bytes at p, which the private stream did not use, back to
 * fp: they are the last n its reads took. Called with fp locked. */
static void give_back(FILE *fp, const char *p, size_t n)
{
    if ((size_t)(fp->_IO_read_ptr - fp->_IO_read_base) >= n &&
        memcmp(fp->_IO_read_ptr - n, p, n) == 0) {
        fp->_IO_read_ptr -= n;
        return;
    }
    while (n > 0) /* not in place (never seen): glibc's push-back area */
        ungetc((unsigned char)p[--n], fp);
}

/* glibc's vfscanf on a private stream reading fp (see the top). -2 if
 * the private stream could not be made. */
static int scan_parked(scanner f, FILE *fp, bool locking, const char *fmt, va_list ap)
{
    struct source src = { fp, locking };
    FILE *priv = fopencookie(&src, "r", (cookie_io_functions_t){ .read = source_read });
    if (priv == NULL)
        return -2;
    __fsetlocking(priv, FSETLOCKING_BYCALLER);
    char buf[SOURCE_BUF]; /* (glibc ignores a size given without a buffer) */
    if (setvbuf(priv, buf, _IOFBF, sizeof buf) != 0) {
        CAP__REAL(fclose)(priv);
        return -2;
    }
    int r = f(priv, fmt, ap), err = errno;
    /* What priv holds unread: its read-ahead, and the character scanf
     * pushed back (in place, or in priv's own push-back area). */
    char left[2 * SOURCE_BUF]; /* its buffer, and a push-back area scanf fills with one */
    size_t n = 0;
    while (n < sizeof left && cap__stdio_buffered(priv))
        left[n++] = (char)(priv->_IO_read_ptr < priv->_IO_read_end
                               ? (unsigned char)*priv->_IO_read_ptr++
                               : CAP__REAL(__uflow)(priv)); /* back to its main area */
    cap__stdio_lock(fp, locking);
    give_back(fp, left, n);
    cap__stdio_unlock(fp, locking);
    CAP__REAL(fclose)(priv);
    errno = err;
    return r;
}

static int scan(bool c99, FILE *fp, const char *fmt, va_list ap)
{
    scanner f = glibc_scanner(c99);
    if (!cap__stdio_may_read(fp)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(fp, true, &guard);
        int r = f(fp, fmt, ap);
        cap__stdio_unguard(&guard);
        return r;
    }
    bool locking = !(fp->_flags & _IO_USER_LOCK);
    struct cap__stdio_hold h;
    cap__stdio_turn_begin(fp, &h);
    int r = -2;
    if (!allocates(fmt)) {
        va_list copy;
        va_copy(copy, ap);
        r = scan_buffered(f, fp, locking, fmt, copy);
        va_end(copy);
    }
    if (r == -2)
        r = scan_parked(f, fp, locking, fmt, ap);
    if (r == -2)
        r = f(fp, fmt, ap); /* no memory for the private stream: glibc's, blocking */
    cap__stdio_turn_end(&h);
    return r;
}

int plain_vfscanf(FILE *fp, const char *fmt, va_list ap)
{
    return scan(false, fp, fmt, ap);
}

int plain_vscanf(const char *fmt, va_list ap)
{
    return plain_vfscanf(stdin, fmt, ap);
}

int plain_fscanf(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = plain_vfscanf(fp, fmt, ap);
    va_end(ap);
    return r;
}

int plain_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = plain_vfscanf(stdin, fmt, ap);
    va_end(ap);
    return r;
}

int __isoc99_vfscanf(FILE *fp, const char *fmt, va_list ap)
{
    return scan(true, fp, fmt, ap);
}

int __isoc99_vscanf(const char *fmt, va_list ap)
{
    return __isoc99_vfscanf(stdin, fmt, ap);
}

int __isoc99_fscanf(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = __isoc99_vfscanf(fp, fmt, ap);
    va_end(ap);
    return r;
}

int __isoc99_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = __isoc99_vfscanf(stdin, fmt, ap);
    va_end(ap);
    return r;
}
