/* SPDX-License-Identifier: MIT */
/*
 * libc calls that close descriptors through glibc's internal close, which
 * no interposition sees: fclose, freopen, fcloseall, pclose, closedir.
 * Each ends the life of the number in the descriptor table first (waiters
 * woken with EBADF, no stale event after reuse), as close() does.
 *  - fcloseall closes streams we cannot name beforehand: afterwards every
 *    known number that is no longer open is forgotten. On a user thread
 *    it writes them out first as fflush(NULL) does, parking.
 *  - pclose also waits for the child: on a user thread that wait runs on
 *    the offload pool, so only the caller waits. So does freopen of a
 *    FIFO, whose open waits for the other end.
 * fclose and freopen (with a path) of a socket that lingers (SO_LINGER)
 * wait as close() does (intercept/linger.c): parked, or glibc's call
 * made on the pool.
 * fclose and pclose also drop the stream's turn entry (stdio_turn.c);
 * fclose and freopen write out buffered output first (stdout.c), parking
 * where glibc's flush would block the worker. fclose and pclose take the
 * stream out of glibc's list first, once no flush of every stream is
 * writing it (stream_unlist; freopen keeps its FILE, fcloseall frees
 * none).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>

#include "intercept/intercept.h"
#include "io/io.h"

/* The stream's descriptor, or -1; and stream_closing, the first step of
 * a close (io/fd.h): the descriptor, for stream_closed after the call,
 * or -1. fileno sets errno to EBADF for a stream with no
 * descriptor (fmemopen, open_memstream, fopencookie), which glibc's
 * fclose of one leaves alone: so errno is kept (the library's own
 * fmemopen probe, stdio_turn.c, clobbered the program's errno in its
 * first printf). */
static int stream_fd(FILE *stream)
{
    int err = cap__ic_errno();
    int fd = stream != NULL ? fileno(stream) : -1;
    if (fd < 0)
        cap__ic_set_errno(err);
    return fd;
}

static int stream_closing(FILE *stream)
{
    int fd = stream_fd(stream);
    if (fd >= 0)
        cap__fd_closing(fd);
    return fd;
}

static void stream_closed(int fd)
{
    if (fd >= 0)
        cap__fd_closed(fd);
}

/* glibc's, exported: takes a stream out of its list of streams (under
 * the list's lock and the stream's); nothing for one no longer there. */
extern void _IO_un_link(void *fp);

/* Takes stream out of glibc's list once no flush of every stream that
 * named it is writing it (intercept.h: cap__stream_end_begin), so no
 * such flush can reach it while glibc's call frees it. glibc's fclose
 * unlinks first too; its own unlink then does nothing. Only the unlink
 * waits for the walks, not glibc's close and frees (pclose's wait for its
 * child: a walk writing to that child's pipe must go on meanwhile). */
static void stream_unlist(FILE *stream)
{
    bool took = cap__stream_end_begin();
    _IO_un_link(stream);
    cap__stream_end_end(took);
}

/* glibc's fclose of a stream whose descriptor's close waits in the
 * kernel for SO_LINGER's timeout, made on the offload pool (its buffer
 * was written out before, parking). */
struct fclose_call {
    FILE *stream;
    int result, err;
};

static void run_fclose(void *arg)
{
    struct fclose_call *c = arg;
    c->result = CAP__REAL(fclose)(c->stream);
    c->err = errno;
}

int fclose(FILE *stream)
{
    /* Out of line: the forget and the close below may park (errno's
     * address from before a park is another worker's). */
    int flushed = cap__stdio_flush_before_close(stream), err = cap__ic_errno();
    if (stream != NULL) {
        cap__stream_turn_forget(stream);
        stream_unlist(stream); /* before the close mark: a walk's write ends first */
    }
    bool on_pool = cap__ic_linger_first(stream_fd(stream)); /* SO_LINGER's wait (linger.c) */
    int fd = stream_closing(stream);
    struct fclose_call c = { stream, 0, 0 };
    if (!on_pool || cap__offload_wait(run_fclose, &c) != 0)
        c.result = CAP__REAL(fclose)(stream);
    else if (c.result != 0)
        cap__ic_set_errno(c.err);
    int r = c.result;
    stream_closed(fd);
    if (flushed == EOF && r == 0) {
        cap__ic_set_errno(err);
        return EOF;
    }
    return r;
}

struct freopen_call {
    const char *path, *mode;
    FILE *stream, *result;
    int err;
};

static void run_freopen(void *arg)
{
    struct freopen_call *c = arg;
    c->result = CAP__REAL(freopen)(c->path, c->mode, c->stream);
    c->err = errno;
}

FILE *freopen(const char *path, const char *mode, FILE *stream)
{
    if (stream != NULL)
        cap__stdio_flush_before_close(stream); /* (glibc's flush would block) */
    /* glibc's close of the old descriptor may wait for SO_LINGER (linger.c). */
    bool lingers = path != NULL && cap__ic_linger_first(stream_fd(stream));
    int fd = stream_closing(stream);
    struct freopen_call c = { path, mode, stream, NULL, 0 };
    if (path != NULL && cap__ic_user() && (lingers || cap__ic_is_fifo(path)) &&
        cap__offload_wait(run_freopen, &c) == 0) { /* the open waits for the other end */
        if (c.result == NULL)
            cap__ic_set_errno(c.err);
    } else {
        c.result = CAP__REAL(freopen)(path, mode, stream);
    }
    stream_closed(fd);
    if (c.result != NULL && fileno(c.result) >= 0) /* a fresh life for whatever it opened */
        cap__fd_created(fileno(c.result), CAP__FD_UNKNOWN, 0);
    return c.result;
}

FILE *freopen64(const char *path, const char *mode, FILE *stream)
    __attribute__((alias("freopen")));

int fcloseall(void)
{
    /* glibc's writes every stream out with its blocking write under its
     * list lock, then unbuffers them (it frees none). On a user thread
     * fflush(NULL) writes them first, parking (stdout.c); glibc's then
     * finds nothing left but what another thread buffered meanwhile. */
    int flushed = cap__ic_user() ? fflush(NULL) : 0;
    int r = CAP__REAL(fcloseall)();
    cap__fd_forget_closed();
    return flushed != 0 ? EOF : r;
}

struct pclose_call {
    FILE *stream;
    int result, err;
    bool sigpipe; /* its flush raised SIGPIPE on the pool thread */
};

static void run_pclose(void *arg)
{
    struct pclose_call *c = arg;
    c->result = CAP__REAL(pclose)(c->stream);
    c->err = errno;
    /* A flush to a command that has closed its input: EPIPE, and the
     * kernel's SIGPIPE, which belongs to the caller. */
    c->sigpipe = c->err == EPIPE && cap__offload_took(SIGPIPE);
}

int pclose(FILE *stream)
{
    if (stream != NULL) {
        cap__stream_turn_forget(stream);
        stream_unlist(stream); /* before the close mark: a walk's write ends first */
    }
    int fd = stream_closing(stream);
    struct pclose_call c = { .stream = stream };
    if (!cap__ic_user() || cap__offload_wait(run_pclose, &c) != 0) {
        c.result = CAP__REAL(pclose)(stream);
        c.err = errno;
    }
    stream_closed(fd);
    if (c.sigpipe)
        raise(SIGPIPE); /* intercept/sigsend.c: to this user thread */
    cap__sig_take_jump(); /* a handler's jump into this thread, if any */
    if (c.result < 0)
        errno = c.err;
    return c.result;
}

int closedir(DIR *d)
{
    int fd = dirfd(d);
    if (fd >= 0)
        cap__fd_closing(fd);
    int r = CAP__REAL(closedir)(d);
    if (fd >= 0)
        cap__fd_closed(fd);
    return r;
}
