/* SPDX-License-Identifier: MIT */
/*
 * The error reporters that write to stderr: perror, and the err/warn
 * family (warn, warnx, vwarn, vwarnx, err, errx, verr, verrx). glibc
 * writes them through its internal calls, so on a full pipe they blocked
 * the worker; here, on a user thread, the message is made in memory and
 * written as one call through the stdio output path (stdout.c), which
 * parks. The text is glibc's: "prog: " (the short program name), the
 * caller's format, and for perror/warn/err ": " and strerror(errno),
 * then a newline.
 *
 * Invariants:
 *  - errno on return is what it was on entry (the reporters are called
 *    to report it);
 *  - perror on a stream with no orientation leaves it so, as glibc does
 *    (which writes through a private stream on a duplicate of stderr's
 *    descriptor): the message goes straight to the descriptor through the
 *    write wrapper, past stderr's buffer; on a byte stream it is a call
 *    on stderr; on a wide one, or where output may not park, glibc's.
 */
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"

/* Sets errno from a function that read it before it parked: glibc's
 * __errno_location is declared const, so a compiler may keep the address
 * it returned then, the errno of the worker the thread ran on before. A
 * function of its own (noipa: not inlined nor analysed into its callers)
 * asks again. */
__attribute__((noipa)) static void set_errno(int e)
{
    errno = e;
}

/* "prog: " + formatted text (if fmt) + ": " strerror(err) (if with_errno)
 * + newline, in a malloc'd string (NULL if memory ran out). */
static char *compose(const char *fmt, va_list ap, bool with_errno, int err, size_t *len)
{
    char *body = NULL;
    if (fmt != NULL && vasprintf(&body, fmt, ap) < 0)
        return NULL;
    char msg[128], reason[160] = "";
    if (with_errno)
        snprintf(reason, sizeof reason, "%s%s", fmt != NULL ? ": " : "",
                 strerror_r(err, msg, sizeof msg));
    char *text = NULL;
    int n = asprintf(&text, "%s: %s%s\n", program_invocation_short_name,
                     body != NULL ? body : "", reason);
    free(body);
    if (n < 0)
        return NULL;
    *len = (size_t)n;
    return text;
}

/* The report on stderr; false if it is glibc's to make (see the top). */
static bool report(const char *fmt, va_list ap, bool with_errno, int err)
{
    if (!cap__stdio_may_put(stderr) || stderr->_mode > 0)
        return false;
    va_list copy;
    va_copy(copy, ap);
    size_t len;
    char *text = compose(fmt, copy, with_errno, err, &len);
    va_end(copy);
    if (text == NULL)
        return false;
    cap__stdio_put(stderr, text, len);
    free(text);
    return true;
}

void vwarn(const char *fmt, va_list ap)
{
    int err = errno;
    if (!report(fmt, ap, true, err)) {
        set_errno(err);
        CAP__REAL(vwarn)(fmt, ap);
    }
    set_errno(err);
}

void vwarnx(const char *fmt, va_list ap)
{
    int err = errno;
    if (!report(fmt, ap, false, err)) {
        set_errno(err);
        CAP__REAL(vwarnx)(fmt, ap);
    }
    set_errno(err);
}

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

void warnx(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarnx(fmt, ap);
    va_end(ap);
}

void verr(int status, const char *fmt, va_list ap)
{
    vwarn(fmt, ap);
    exit(status);
}

void verrx(int status, const char *fmt, va_list ap)
{
    vwarnx(fmt, ap);
    exit(status);
}

void err(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verr(status, fmt, ap);
}

void errx(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verrx(status, fmt, ap);
}

void perror(const char *s)
{
    int err = errno;
    FILE *fp = stderr;
    if (!cap__stdio_may_put(fp) || fp->_mode > 0) {
        CAP__REAL(perror)(s);
        set_errno(err);
        return;
    }
    char reason[128];
    char *text = NULL;
    int n = asprintf(&text, "%s%s%s\n", s != NULL && *s ? s : "", s != NULL && *s ? ": " : "",
                     strerror_r(err, reason, sizeof reason));
    if (n < 0) {
        set_errno(err);
        CAP__REAL(perror)(s);
        set_errno(err);
        return;
    }
    if (fp->_mode < 0) {
        cap__stdio_put(fp, text, (size_t)n);
    } else { /* no orientation: straight to the descriptor, as glibc */
        for (size_t done = 0; done < (size_t)n;) {
            ssize_t r = write(fileno(fp), text + done, (size_t)n - done); /* the wrapper */
            if (r <= 0) {
                fp->_flags |= _IO_ERR_SEEN;
                break;
            }
            done += (size_t)r;
        }
    }
    free(text);
    set_errno(err);
}
