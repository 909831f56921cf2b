/* SPDX-License-Identifier: MIT */
/*
 * The error reporters that write to stderr: perror, psignal, psiginfo,
 * the err/warn family (warn, warnx, vwarn, vwarnx, err, errx, verr,
 * verrx) and error(3) (error, error_at_line). glibc writes them through
 * its internal calls, so on a full pipe they blocked the worker; here, on
 * a user thread, the message is made in memory and written as one call
 * through the stdio output path (stdout.c), which parks (psiginfo: glibc's
 * call, on the offload pool). The text is glibc's: "prog: " (the short program name; error(3)
 * the full one, or what error_print_progname prints), error_at_line's
 * "file:line: ", the caller's format, and for perror/warn/err (error(3):
 * a nonzero errnum) ": " and the error's string, then a newline.
 *
 * Invariants:
 *  - errno on return is what it was on entry (the reporters are called
 *    to report it);
 *  - perror on a stream with no orientation leaves it so, as glibc does
 *    (which writes through a private stream on a duplicate of stderr's
 *    descriptor): the message goes straight to the descriptor through the
 *    write wrapper, past stderr's buffer; on a byte stream it is a call
 *    on stderr, as all the others are; on a wide one, or where output may
 *    not park, glibc's.
 */
#include <err.h>
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "intercept/stdio_turn.h"
#include "io/io.h"

/* Whether a report on stderr is made here: output on it may park, and it
 * is not a wide stream (those are glibc's). */
static bool stderr_here(void)
{
    return cap__stdio_may_put(stderr) && stderr->_mode <= 0;
}

/* head, the text fmt makes (if fmt), ": " and the string of err (if
 * with_err; without the ": " when there is no fmt), and a newline, in a
 * malloc'd string (NULL if memory ran out). */
static char *compose(const char *head, const char *fmt, va_list ap, bool with_err, int err,
                     size_t *len)
{
    char *body = NULL;
    if (fmt != NULL && vasprintf(&body, fmt, ap) < 0)
        return NULL;
    char msg[128], reason[160] = "";
    if (with_err)
        snprintf(reason, sizeof reason, "%s%s", fmt != NULL ? ": " : "",
                 strerror_r(err, msg, sizeof msg));
    char *text = NULL;
    int n = asprintf(&text, "%s%s%s\n", head, body != NULL ? body : "", reason);
    free(body);
    if (n < 0)
        return NULL;
    *len = (size_t)n;
    return text;
}

/* The report on stderr; false if it is glibc's to make (see the top). */
static bool report(const char *fmt, va_list ap, bool with_errno, int err)
{
    if (!stderr_here())
        return false;
    char head[256];
    snprintf(head, sizeof head, "%s: ", program_invocation_short_name);
    va_list copy;
    va_copy(copy, ap);
    size_t len;
    char *text = compose(head, fmt, copy, with_errno, err, &len);
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
        struct cap__stdio_guard guard;
        cap__stdio_guard(stderr, true, &guard);
        cap__ic_set_errno(err);
        CAP__REAL(vwarn)(fmt, ap);
        cap__stdio_unguard(&guard);
    }
    cap__ic_set_errno(err);
}

void vwarnx(const char *fmt, va_list ap)
{
    int err = errno;
    if (!report(fmt, ap, false, err)) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(stderr, true, &guard);
        cap__ic_set_errno(err);
        CAP__REAL(vwarnx)(fmt, ap);
        cap__stdio_unguard(&guard);
    }
    cap__ic_set_errno(err);
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

/* perror's and psignal's message: "s: " (if s is not empty) then what,
 * then a newline; straight to the descriptor if stderr has no
 * orientation and straight (perror: see the top), else a call on it. */
static void report_line(const char *s, const char *what, bool straight)
{
    FILE *fp = stderr;
    char *text = NULL;
    int n = asprintf(&text, "%s%s%s\n", s != NULL && *s ? s : "", s != NULL && *s ? ": " : "",
                     what);
    if (n < 0)
        return;
    if (fp->_mode < 0 || !straight) {
        cap__stdio_put(fp, text, (size_t)n);
    } else {
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
}

void psignal(int sig, const char *s)
{
    int err = errno;
    if (!stderr_here()) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(stderr, true, &guard);
        CAP__REAL(psignal)(sig, s);
        cap__stdio_unguard(&guard);
        cap__ic_set_errno(err);
        return;
    }
    const char *desc = sigdescr_np(sig);
    char unknown[48];
    if (desc == NULL) {
        snprintf(unknown, sizeof unknown, "Unknown signal %d", sig);
        desc = unknown;
    }
    report_line(s, desc, false);
    cap__ic_set_errno(err);
}

/* psiginfo: glibc's text has a case for every signal and code, so
 * glibc's call makes it, on a kernel thread of the offload pool (its one
 * write to a full stderr pipe then blocks that thread, not the worker),
 * in stderr's turn (a flockfile holder keeps it out). */
struct psiginfo_call {
    const siginfo_t *info;
    const char *s;
    bool sigpipe; /* its write raised SIGPIPE on the pool thread */
};

static void run_psiginfo(void *arg)
{
    struct psiginfo_call *c = arg;
    errno = 0;
    CAP__REAL(psiginfo)(c->info, c->s);
    /* stderr a pipe whose reader is gone: the kernel's SIGPIPE is the
     * caller's. */
    c->sigpipe = errno == EPIPE && cap__offload_took(SIGPIPE);
}

void psiginfo(const siginfo_t *info, const char *s)
{
    int err = errno;
    struct psiginfo_call c = { .info = info, .s = s };
    if (stderr_here()) {
        struct cap__stdio_hold h;
        cap__stdio_turn_begin(stderr, &h);
        int rc = cap__offload_wait(run_psiginfo, &c); /* stderr may be a full pipe */
        cap__stdio_turn_end(&h);
        if (rc == 0) {
            if (c.sigpipe)
                raise(SIGPIPE); /* intercept/sigsend.c: to this user thread */
            cap__ic_set_errno(err);
            return;
        }
    }
    struct cap__stdio_guard guard;
    cap__stdio_guard(stderr, true, &guard);
    CAP__REAL(psiginfo)(info, s);
    cap__stdio_unguard(&guard);
    cap__ic_set_errno(err);
}

void perror(const char *s)
{
    int err = errno;
    if (!stderr_here()) {
        struct cap__stdio_guard guard;
        cap__stdio_guard(stderr, true, &guard);
        cap__ic_set_errno(err); /* (the guard may have parked) */
        CAP__REAL(perror)(s);
        cap__stdio_unguard(&guard);
        cap__ic_set_errno(err);
        return;
    }
    char reason[128];
    report_line(s, strerror_r(err, reason, sizeof reason), true);
    cap__ic_set_errno(err);
}

/* ---- error(3) ------------------------------------------------------------ */

/* glibc flushes stdout first if its descriptor is open. */
static void flush_stdout(void)
{
    int fd = fileno(stdout);
    if (fd >= 0 && fcntl(fd, F_GETFL) >= 0)
        fflush(stdout);
}

/* The report of error and error_at_line: the program's name (or what
 * error_print_progname prints, first), then where (error_at_line's
 * "file:line: "), the text and errnum's string, as one call; then stdout
 * is flushed first and stderr after, and a nonzero status exits. */
static void error_report(int status, int errnum, const char *where, const char *fmt,
                         va_list ap)
{
    flush_stdout();
    char *head = NULL;
    if (error_print_progname != NULL) {
        error_print_progname();
        head = strdup(where);
    } else if (asprintf(&head, "%s: %s", program_invocation_name, where) < 0) {
        head = NULL;
    }
    size_t len;
    char *text = head != NULL ? compose(head, fmt, ap, errnum != 0, errnum, &len) : NULL;
    if (text != NULL)
        cap__stdio_put(stderr, text, len);
    free(text);
    free(head);
    error_message_count++;
    fflush(stderr);
    if (status != 0)
        exit(status);
}

void error(int status, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!stderr_here()) {
        char *text = NULL; /* glibc's error has no va_list form: format here */
        if (vasprintf(&text, fmt, ap) < 0)
            text = NULL;
        va_end(ap);
        CAP__REAL(error)(status, errnum, "%s", text != NULL ? text : fmt);
        free(text);
        return;
    }
    error_report(status, errnum, "", fmt, ap);
    va_end(ap);
}

void error_at_line(int status, int errnum, const char *file, unsigned int line, const char *fmt,
                   ...)
{
    static const char *last_file;
    static unsigned int last_line;
    if (error_one_per_line) {
        if (line == last_line &&
            (file == last_file || (file != NULL && last_file != NULL && strcmp(file, last_file) == 0)))
            return; /* glibc: once per line */
        last_file = file;
        last_line = line;
    }
    va_list ap;
    va_start(ap, fmt);
    if (!stderr_here()) {
        char *text = NULL;
        if (vasprintf(&text, fmt, ap) < 0)
            text = NULL;
        va_end(ap);
        int saved = error_one_per_line;
        error_one_per_line = 0; /* checked above */
        CAP__REAL(error_at_line)(status, errnum, file, line, "%s", text != NULL ? text : fmt);
        error_one_per_line = saved;
        free(text);
        return;
    }
    char *where = NULL;
    if (file == NULL || asprintf(&where, "%s:%u: ", file, line) < 0)
        where = NULL;
    error_report(status, errnum, where != NULL ? where : " ", fmt, ap);
    free(where); /* (not reached when error_report exits) */
    va_end(ap);
}
