/* SPDX-License-Identifier: MIT */
/*
 * fopen (fopen64) of a FIFO on a user thread. glibc opens through its
 * internal open, which no wrapper sees, and opening a FIFO waits in the
 * kernel until its other end is opened: the worker and every thread
 * queued on it waited with it. Here a FIFO (a stat of the path, as the
 * open wrapper makes: fd.c) is opened through the open wrapper, which
 * waits on the offload pool so that only the caller waits, and the
 * descriptor becomes a stream with fdopen, with the flags fopen's mode
 * asks for. Anything else, and a mode glibc's parser would treat
 * specially (",ccs=" for a wide stream), is glibc's fopen as before.
 *
 * Invariant: on failure no descriptor stays open, and errno is the
 * failing step's (open's, or fdopen's; EINVAL for a bad mode, as glibc).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "intercept/intercept.h"

/* open's flags for fopen's mode (glibc's reading of it: a first letter
 * r, w or a, then up to six letters among which + x e b m count and any
 * other is ignored, as "t" in "rt"); -1 if the mode is not one this file
 * handles. */
static int mode_flags(const char *mode)
{
    int flags;
    switch (mode[0]) {
    case 'r':
        flags = O_RDONLY;
        break;
    case 'w':
        flags = O_WRONLY | O_CREAT | O_TRUNC;
        break;
    case 'a':
        flags = O_WRONLY | O_CREAT | O_APPEND;
        break;
    default:
        return -1;
    }
    if (strchr(mode, ',') != NULL)
        return -1; /* ",ccs=...": a wide stream, glibc's */
    for (const char *p = mode + 1; *p != '\0' && p < mode + 7; p++) {
        switch (*p) {
        case '+':
            flags = (flags & ~(O_RDONLY | O_WRONLY)) | O_RDWR;
            break;
        case 'x':
            flags |= O_EXCL;
            break;
        case 'e':
            flags |= O_CLOEXEC;
            break;
        case 'b':
        case 'm': /* (no mapping of a FIFO) */
            break;
        case 'c':
            return -1; /* a stream whose calls are no cancellation points */
        default:
            break; /* ignored by glibc's fopen and fdopen alike */
        }
    }
    return flags;
}

bool cap__ic_is_fifo(const char *path)
{
    struct stat st;
    return syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0 && S_ISFIFO(st.st_mode);
}

FILE *fopen(const char *path, const char *mode)
{
    int flags;
    if (path == NULL || mode == NULL || !cap__ic_user() || (flags = mode_flags(mode)) < 0 ||
        !cap__ic_is_fifo(path))
        return CAP__REAL(fopen)(path, mode);
    int fd = open(path, flags, 0666); /* the wrapper: waits on the pool */
    if (fd < 0)
        return NULL;
    FILE *fp = fdopen(fd, mode); /* the wrapper */
    if (fp == NULL) {
        int err = errno;
        close(fd);
        cap__ic_set_errno(err); /* (close may have yielded) */
    }
    return fp;
}

FILE *fopen64(const char *path, const char *mode) __attribute__((alias("fopen")));
