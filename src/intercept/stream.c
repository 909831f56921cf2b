/* SPDX-License-Identifier: MIT */
/*
 * libc calls that close descriptors through glibc's internal close, which
 * no interposition sees: fclose, freopen, fcloseall, pclose, closedir.
 * Each ends the life of the number in the descriptor table first (waiters
 * woken with EBADF, no stale event after reuse), as close() does.
 *  - fcloseall closes streams we cannot name beforehand: afterwards every
 *    known number that is no longer open is forgotten.
 *  - pclose also waits for the child: on a user thread that wait runs on
 *    the offload pool, so only the caller waits. So does freopen of a
 *    FIFO, whose open waits for the other end.
 * fclose and pclose also drop the stream's turn entry (stdio_turn.c);
 * fclose and freopen write out buffered output first (stdout.c), parking
 * where glibc's flush would block the worker. fclose, fcloseall and
 * pclose free streams inside cap__stream_end_begin/_end (intercept.h):
 * not while the flush of every stream writes them (freopen keeps its
 * FILE).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>

#include "intercept/intercept.h"
#include "io/io.h"

/* The first step of a close (io/fd.h); the descriptor, for stream_closed
 * after the call, or -1. */
static int stream_closing(FILE *stream)
{
    int fd = stream != NULL ? fileno(stream) : -1;
    if (fd >= 0)
        cap__fd_closing(fd);
    return fd;
}

static void stream_closed(int fd)
{
    if (fd >= 0)
        cap__fd_closed(fd);
}

int fclose(FILE *stream)
{
    int flushed = cap__stdio_flush_before_close(stream), err = errno;
    if (stream != NULL)
        cap__stream_turn_forget(stream);
    int fd = stream_closing(stream);
    cap__stream_end_begin();
    int r = CAP__REAL(fclose)(stream);
    cap__stream_end_end();
    stream_closed(fd);
    if (flushed == EOF && r == 0) {
        errno = err;
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
    int fd = stream_closing(stream);
    struct freopen_call c = { path, mode, stream, NULL, 0 };
    if (path != NULL && cap__ic_user() && cap__ic_is_fifo(path) &&
        cap__offload(run_freopen, &c) == 0) { /* the open waits for the other end */
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
    cap__stream_end_begin();
    int r = CAP__REAL(fcloseall)();
    cap__stream_end_end();
    cap__fd_forget_closed();
    return r;
}

struct pclose_call {
    FILE *stream;
    int result, err;
};

static void run_pclose(void *arg)
{
    struct pclose_call *c = arg;
    c->result = CAP__REAL(pclose)(c->stream);
    c->err = errno;
}

int pclose(FILE *stream)
{
    if (stream != NULL)
        cap__stream_turn_forget(stream);
    int fd = stream_closing(stream);
    struct pclose_call c = { .stream = stream };
    cap__stream_end_begin(); /* for the child's life too: glibc frees the stream last */
    if (!cap__ic_user() || cap__offload(run_pclose, &c) != 0) {
        c.result = CAP__REAL(pclose)(stream);
        c.err = errno;
    }
    cap__stream_end_end();
    stream_closed(fd);
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
