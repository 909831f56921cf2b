/* SPDX-License-Identifier: MIT */
/*
 * Private open file descriptions of terminals and FIFOs (see ttyfile.h):
 * a small table of (descriptor number, life) -> private descriptor, under
 * one spin lock that no system call is made under.
 *
 * An entry is free (app_fd < 0), live, or dead: its life ended while a
 * write held it, and the last release closes it. A record whose terminal
 * or FIFO gets none is marked CAP__FDF_TTY_POOL for the rest of its life,
 * so the refused open is not tried again on every transfer.
 *
 * Only raw system calls: open and close are this library's own wrappers.
 */
#include "io/ttyfile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "arch/syscall.h"
#include "io/fd.h"
#include "io/netio.h"
#include "io/ownfd.h"
#include "util/ownspin.h"

enum { TTYFILE_MAX = 16 };

struct cap__ttyfile {
    int app_fd;   /* the application's descriptor; -1: free */
    uint32_t gen; /* the life of app_fd this one belongs to */
    int fd;       /* the private description; -1: none (free) */
    dev_t rdev;   /* the terminal */
    int refs;     /* writes using fd now */
    bool dead;    /* app_fd's life ended: close at the last release */
    bool writing; /* a write holds the terminal (cap__ttyfile_trylock) */
    bool contended; /*   and another found it held: its unlock posts events */
};

static cap__ttyfile table[TTYFILE_MAX] = {
    [0 ... TTYFILE_MAX - 1] = { .app_fd = -1, .fd = -1 },
};
static cap__ownspin lock = CAP__OWNSPIN_INIT;

/* A description no write holds and whose life ended: closed, its slot
 * freed. Outside the lock. */
static void close_private(int fd)
{
    cap__ownfd_remove(fd);
    cap__sys6(SYS_close, fd, 0, 0, 0, 0, 0);
}

/* Takes e out of the table, its lock held: the descriptor to close now,
 * or -1 if a write still holds it (the last release closes it then). */
static int end_locked(cap__ttyfile *e)
{
    e->app_fd = -1;
    if (e->refs > 0) {
        e->dead = true;
        return -1;
    }
    int fd = e->fd;
    e->fd = -1;
    return fd;
}

/* /proc/self/fd/<fd> opened with flags, at a high number, if it is still
 * the file st describes; else -1. */
static int reopen(int fd, int flags, const struct stat *st)
{
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    long priv = cap__sys6(SYS_openat, AT_FDCWD, (long)path, flags | O_NONBLOCK | O_CLOEXEC, 0,
                          0, 0);
    if (priv < 0)
        return -1;
    struct stat ps;
    if (cap__sys6(SYS_fstat, priv, (long)&ps, 0, 0, 0, 0) != 0 || ps.st_dev != st->st_dev ||
        ps.st_ino != st->st_ino || ps.st_rdev != st->st_rdev) {
        cap__sys6(SYS_close, priv, 0, 0, 0, 0, 0);
        return -1;
    }
    return cap__ownfd_adopt((int)priv);
}

/* A FIFO opened again with the access of fd's description (a write-only
 * one fails with ENXIO while the FIFO has no reader: the plain path then
 * meets the missing reader itself); -1 for O_PATH. */
static int open_fifo_private(int fd, const struct stat *st)
{
    long fl = cap__sys6(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
    if (fl < 0 || (fl & O_PATH))
        return -1;
    return reopen(fd, (int)(fl & O_ACCMODE), st);
}

/* fd, if it is a pseudo-terminal's slave that is still there (not hung
 * up), opened again for writing, or a FIFO opened again as fd is;
 * non-blocking, close-on-exec, at a high number; else -1. rdev: the
 * terminal (0 for a FIFO). */
static int open_private(int fd, dev_t *rdev)
{
    struct stat st;
    if (cap__sys6(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) != 0)
        return -1;
    if (S_ISFIFO(st.st_mode))
        return open_fifo_private(fd, &st);
    if (!S_ISCHR(st.st_mode))
        return -1;
    unsigned maj = major(st.st_rdev);
    if (maj < 136 || maj > 143)
        return -1;
    /* A descriptor not open for writing: the kernel's write says EBADF,
     * which a description of our own would not. */
    long fl = cap__sys6(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0);
    if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_RDONLY)
        return -1;
    /* After a hang-up the path may name a new terminal of someone else's:
     * the application's write says EIO on its own (the pool's path). */
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    if (cap__sys6(SYS_poll, (long)&p, 1, 0, 0, 0, 0) < 0 || (p.revents & (POLLHUP | POLLERR)))
        return -1;
    int priv = reopen(fd, O_WRONLY | O_NOCTTY, &st);
    if (priv >= 0)
        *rdev = st.st_rdev;
    return priv;
}

static cap__ttyfile *find_locked(int fd, uint32_t gen)
{
    for (int i = 0; i < TTYFILE_MAX; i++)
        if (table[i].app_fd == fd && table[i].gen == gen)
            return &table[i];
    return NULL;
}

/* A free slot, its lock held; entries whose life ended unseen (a number
 * reused behind a raw close) are ended first. NULL if all are taken. */
static cap__ttyfile *free_slot_locked(int *closing, int *n)
{
    cap__ttyfile *free = NULL;
    for (int i = 0; i < TTYFILE_MAX; i++) {
        cap__ttyfile *e = &table[i];
        if (e->app_fd >= 0) {
            cap__fd *f = cap__fd_peek(e->app_fd);
            if (f != NULL && atomic_load(&f->gen) == e->gen)
                continue;
            int c = end_locked(e);
            if (c >= 0)
                closing[(*n)++] = c;
        }
        if (free == NULL && e->app_fd < 0 && e->fd < 0)
            free = e;
    }
    return free;
}

/* ttyfile.h. */
cap__ttyfile *cap__ttyfile_hold(int fd, uint32_t gen)
{
    cap__fd *f = cap__fd_peek(fd);
    if (f == NULL || cap__fd_has(f, CAP__FDF_TTY_POOL))
        return NULL;
    cap__ownspin_lock(&lock);
    cap__ttyfile *e = find_locked(fd, gen);
    if (e != NULL)
        e->refs++;
    cap__ownspin_unlock(&lock);
    if (e != NULL)
        return e;

    dev_t rdev = 0;
    int priv = open_private(fd, &rdev);
    int closing[TTYFILE_MAX + 1];
    int n = 0;
    cap__ownspin_lock(&lock);
    e = find_locked(fd, gen); /* another writer's open came first */
    if (e == NULL && priv >= 0 && atomic_load(&f->gen) == gen) {
        e = free_slot_locked(closing, &n);
        if (e != NULL) {
            *e = (cap__ttyfile){ .app_fd = fd, .gen = gen, .fd = priv, .rdev = rdev };
            priv = -1;
        }
    }
    if (e != NULL)
        e->refs++;
    else if (atomic_load(&f->gen) == gen)
        cap__fd_set(f, CAP__FDF_TTY_POOL); /* refused, or the table is full */
    cap__ownspin_unlock(&lock);
    if (priv >= 0) /* opened, not kept */
        closing[n++] = priv;
    for (int i = 0; i < n; i++)
        close_private(closing[i]);
    return e;
}

/* ttyfile.h. */
int cap__ttyfile_fd(const cap__ttyfile *t)
{
    return t->fd;
}

/* ttyfile.h. */
void cap__ttyfile_release(cap__ttyfile *t)
{
    int fd = -1;
    cap__ownspin_lock(&lock);
    if (--t->refs == 0 && t->dead) {
        fd = t->fd;
        t->fd = -1;
        t->dead = false;
    }
    cap__ownspin_unlock(&lock);
    if (fd >= 0)
        close_private(fd);
}

/* ttyfile.h. */
bool cap__ttyfile_trylock(cap__ttyfile *t)
{
    bool taken = true;
    cap__ownspin_lock(&lock);
    for (int i = 0; i < TTYFILE_MAX && taken; i++) {
        if (table[i].fd >= 0 && table[i].rdev == t->rdev && table[i].writing) {
            table[i].contended = true;
            taken = false;
        }
    }
    if (taken)
        t->writing = true;
    cap__ownspin_unlock(&lock);
    return taken;
}

/* ttyfile.h. The writers that found the terminal taken wait on their
 * descriptors for an event: each descriptor of the terminal gets one. */
void cap__ttyfile_unlock(cap__ttyfile *t)
{
    int fds[TTYFILE_MAX];
    uint32_t gens[TTYFILE_MAX];
    int n = 0;
    cap__ownspin_lock(&lock);
    t->writing = false;
    bool contended = t->contended;
    t->contended = false;
    for (int i = 0; i < TTYFILE_MAX && contended; i++) {
        if (table[i].app_fd >= 0 && table[i].rdev == t->rdev) {
            fds[n] = table[i].app_fd;
            gens[n++] = table[i].gen;
        }
    }
    cap__ownspin_unlock(&lock);
    for (int i = 0; i < n; i++)
        cap__io_ready(fds[i], gens[i], CAP__IO_WBIT);
}

/* ttyfile.h. */
void cap__ttyfile_forget(int fd)
{
    int closing[TTYFILE_MAX];
    int n = 0;
    cap__ownspin_lock(&lock);
    for (int i = 0; i < TTYFILE_MAX; i++) {
        if (table[i].app_fd != fd)
            continue;
        int c = end_locked(&table[i]);
        if (c >= 0)
            closing[n++] = c;
    }
    cap__ownspin_unlock(&lock);
    for (int i = 0; i < n; i++)
        close_private(closing[i]);
}

/* ttyfile.h. */
bool cap__ttyfile_fork_hold(void)
{
    return cap__ownspin_lock_unless_mine(&lock);
}

/* ttyfile.h. A write held by a thread the child does not have ends here:
 * the child's only thread is the forking one. Not when the code a
 * handler that forked interrupted holds the lock: it is in the middle of
 * the table, and goes on in the child if the handler returns. */
void cap__ttyfile_fork_release(bool child, bool held)
{
    if (!held)
        return;
    int closing[TTYFILE_MAX];
    int n = 0;
    if (child) {
        for (int i = 0; i < TTYFILE_MAX; i++) {
            table[i].refs = 0;
            table[i].writing = false;
            table[i].contended = false;
            if (table[i].dead) {
                table[i].dead = false;
                closing[n++] = table[i].fd;
                table[i].fd = -1;
            }
        }
    }
    cap__ownspin_unlock(&lock);
    for (int i = 0; i < n; i++)
        close_private(closing[i]);
}
