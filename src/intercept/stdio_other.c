/* SPDX-License-Identifier: MIT */
/*
 * The stdio calls on a stream that never wait here but must still keep
 * out of another user thread's flockfile (stdio_turn.h): positioning,
 * ungetc, ungetwc, fwide, the flag tests, setvbuf and the setbuf family,
 * __fpurge. Each is glibc's, called with the
 * stream locked (cap__stdio_guard) while some user thread holds a stream
 * by flockfile, and a stream with no descriptor held (a cookie's seek may
 * park); otherwise straight through, for two loads.
 *
 * POSIX wants every call on a FILE (but the _unlocked ones) to act as if
 * it took the stream's lock; glibc's lock alone cannot do that here,
 * since a holder lets it go while it is parked (sched/held.h).
 * (getw and putw are in stdin.c and stdout.c.)
 *
 * Positioning (fseek and its kin, rewind, fsetpos) writes out buffered
 * output first, in glibc through its internal write, which would block
 * the worker on a full pipe, socket or terminal (whose seek then fails
 * with ESPIPE): that output is written first here, parking
 * (flush_output_first), and glibc's call finds nothing left to write.
 */
#define _FILE_OFFSET_BITS 32 /* the 32-bit names are defined here as such */
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <wchar.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"

/* Writes out what fp buffers, parking where glibc's flush would block
 * (stdout.c); a failure stays on fp for glibc's call to meet again. */
static void flush_output_first(FILE *fp)
{
    if (fp != NULL && (fp->_IO_write_ptr > fp->_IO_write_base || cap__stdio_wide_pending(fp))) {
        int err = cap__ic_errno(); /* out of line: the flush may park */
        cap__stdio_flush_before_close(fp);
        cap__ic_set_errno(err);
    }
}

int fseek(FILE *fp, long off, int whence)
{
    flush_output_first(fp);
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(fseek)(fp, off, whence);
    cap__stdio_unguard(&guard);
    return r;
}

int fseeko(FILE *fp, off_t off, int whence)
{
    flush_output_first(fp);
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(fseeko)(fp, off, whence);
    cap__stdio_unguard(&guard);
    return r;
}

int fseeko64(FILE *fp, off64_t off, int whence)
{
    flush_output_first(fp);
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(fseeko64)(fp, off, whence);
    cap__stdio_unguard(&guard);
    return r;
}

long ftell(FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    long r = CAP__REAL(ftell)(fp);
    cap__stdio_unguard(&guard);
    return r;
}

off_t ftello(FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    off_t r = CAP__REAL(ftello)(fp);
    cap__stdio_unguard(&guard);
    return r;
}

off64_t ftello64(FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    off64_t r = CAP__REAL(ftello64)(fp);
    cap__stdio_unguard(&guard);
    return r;
}

void rewind(FILE *fp)
{
    flush_output_first(fp);
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    CAP__REAL(rewind)(fp);
    cap__stdio_unguard(&guard);
}

int fgetpos(FILE *fp, fpos_t *pos)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(fgetpos)(fp, pos);
    cap__stdio_unguard(&guard);
    return r;
}

int fgetpos64(FILE *fp, fpos64_t *pos)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(fgetpos64)(fp, pos);
    cap__stdio_unguard(&guard);
    return r;
}

int fsetpos(FILE *fp, const fpos_t *pos)
{
    flush_output_first(fp);
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(fsetpos)(fp, pos);
    cap__stdio_unguard(&guard);
    return r;
}

int fsetpos64(FILE *fp, const fpos64_t *pos)
{
    flush_output_first(fp);
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(fsetpos64)(fp, pos);
    cap__stdio_unguard(&guard);
    return r;
}

int ungetc(int c, FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(ungetc)(c, fp);
    cap__stdio_unguard(&guard);
    return r;
}

int feof(FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(feof)(fp);
    cap__stdio_unguard(&guard);
    return r;
}

int ferror(FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(ferror)(fp);
    cap__stdio_unguard(&guard);
    return r;
}

void clearerr(FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    CAP__REAL(clearerr)(fp);
    cap__stdio_unguard(&guard);
}

int setvbuf(FILE *fp, char *buf, int mode, size_t size)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(setvbuf)(fp, buf, mode, size);
    cap__stdio_unguard(&guard);
    return r;
}

wint_t ungetwc(wint_t wc, FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    wint_t r = CAP__REAL(ungetwc)(wc, fp);
    cap__stdio_unguard(&guard);
    return r;
}

int fwide(FILE *fp, int mode)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    int r = CAP__REAL(fwide)(fp, mode);
    cap__stdio_unguard(&guard);
    return r;
}

void setbuf(FILE *fp, char *buf)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    CAP__REAL(setbuf)(fp, buf);
    cap__stdio_unguard(&guard);
}

void setbuffer(FILE *fp, char *buf, size_t size)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    CAP__REAL(setbuffer)(fp, buf, size);
    cap__stdio_unguard(&guard);
}

void setlinebuf(FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    CAP__REAL(setlinebuf)(fp);
    cap__stdio_unguard(&guard);
}

void __fpurge(FILE *fp)
{
    struct cap__stdio_guard guard;
    cap__stdio_guard(fp, true, &guard);
    CAP__REAL(__fpurge)(fp);
    cap__stdio_unguard(&guard);
}
