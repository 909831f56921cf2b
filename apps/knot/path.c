/* SPDX-License-Identifier: MIT */
/*
 * Confinement to the document root, in two independent layers:
 *  1. path_from_target works on the URL alone: it percent-decodes first and
 *     normalises after, so "%2e%2e", "%2F" and ".." are all seen as the
 *     segments they decode to, and a ".." that would climb above the root is
 *     refused. No decoded NUL ever reaches the file system.
 *  2. path_open lets the kernel resolve the result beneath the root's
 *     directory fd with openat2(RESOLVE_BENEATH), which refuses any symlink
 *     (or ".." inside one) that leads outside, atomically with the open.
 *     Kernels without openat2 get the fallback: open, then compare the
 *     opened file's real path with the root's. openat2 refuses every
 *     absolute symlink too, even one that leads back inside, so after its
 *     refusal (EXDEV) the fallback decides.
 * Every file descriptor opened here uses O_NONBLOCK so that a FIFO planted
 * in the root cannot block the open; the caller serves regular files only.
 */
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "knot.h"

static int root_fd = -1;
static char root_real[PATH_MAX]; /* for the fallback check */
static size_t root_real_len;

int path_init(const char *root)
{
    root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0)
        return -errno;
    if (!realpath(root, root_real))
        return -errno;
    root_real_len = strlen(root_real);
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int path_from_target(const char *target, char *out, size_t outsz, bool *dir_form)
{
    const char *p = target;
    if (*p != '/' && (!strncasecmp(p, "http://", 7) || !strncasecmp(p, "https://", 8))) {
        p = strchr(p, ':') + 3;
        p += strcspn(p, "/?#");
        if (*p != '/')
            p = "/"; /* "http://host" or "http://host?q" names the root */
    }
    if (*p != '/')
        return 400;

    /* One pass: each byte is percent-decoded, then joins the current
     * segment; a '/' (plain or encoded) ends the segment, which is then
     * kept, dropped ("" and ".") or pops the one before (".."). out holds
     * the kept segments joined by '/' and, tentatively, the current one,
     * starting at seg. The output never grows beyond the decoded bytes (n,
     * bounded by outsz), so w < n. A ".." above the root is reported only
     * at the end, so that a bad escape or an overlong path after it gets
     * its own status, as when decoding came first. */
    if (outsz < 2)
        return 414; /* not even room for "" after the leading '/' */
    size_t n = 1, w = 0, seg = 0; /* n: decoded bytes, the leading '/' too */
    bool dir = true, above = false;
    for (p++;; p++) {
        char c = *p;
        bool end = !c || c == '?' || c == '#';
        if (!end && c == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (lo < 0)
                return 400;
            c = (char)(hi * 16 + lo);
            if (!c)
                return 400;
            p += 2;
        }
        if (!end && ++n >= outsz)
            return 414;
        if (!end && c != '/') {
            out[w++] = c;
            continue;
        }
        /* The segment out[seg, w) is complete. */
        size_t len = w - seg, mark = seg ? seg - 1 : 0; /* without its separator */
        if (len == 0 || (len == 1 && out[seg] == '.')) {
            w = mark;
            dir = true;
        } else if (len == 2 && out[seg] == '.' && out[seg + 1] == '.') {
            w = mark;
            if (w == 0)
                above = true; /* would climb above the root */
            while (w > 0 && out[w - 1] != '/')
                w--;
            if (w > 0)
                w--; /* and the separator */
            dir = true;
        } else {
            dir = false;
        }
        if (end)
            break;
        if (w > 0)
            out[w++] = '/';
        seg = w;
    }
    if (above)
        return 400;
    out[w] = '\0';
    *dir_form = dir;
    return 0;
}

int path_stat(const char *rel, struct stat *st)
{
    return fstatat(root_fd, *rel ? rel : ".", st, 0) ? -errno : 0;
}

/* The fallback check: is the opened fd's real path inside the root? */
static bool fd_inside_root(int fd)
{
    char link[64], real[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, real, sizeof real - 1);
    if (n < 0)
        return false;
    real[n] = '\0';
    if (strncmp(real, root_real, root_real_len))
        return false;
    return real[root_real_len] == '/' || real[root_real_len] == '\0' ||
           (root_real_len == 1 && root_real[0] == '/');
}

int path_open(const char *rel)
{
    const char *name = *rel ? rel : ".";
    int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    if (knot_config.follow_symlinks) {
        int fd = openat(root_fd, name, flags);
        return fd < 0 ? -errno : fd;
    }
    static atomic_bool no_openat2; /* set once, by whoever sees ENOSYS first */
    if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
        struct open_how how = {
            .flags = (unsigned long long)flags,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
        };
        long fd = syscall(SYS_openat2, root_fd, name, &how, sizeof how);
        if (fd >= 0)
            return (int)fd;
        if (errno == EXDEV) {
            /* Out, or an absolute link: where the file really is decides
             * (an outside path that does not exist is refused alike). */
            int fd = openat(root_fd, name, flags);
            if (fd < 0)
                return -EXDEV;
            if (fd_inside_root(fd))
                return fd;
            close(fd);
            return -EXDEV;
        }
        if (errno != ENOSYS && errno != EPERM) /* EPERM: seccomp filters */
            return -errno;
        atomic_store_explicit(&no_openat2, true, memory_order_relaxed);
    }
    int fd = openat(root_fd, name, flags);
    if (fd < 0)
        return -errno;
    if (!fd_inside_root(fd)) {
        close(fd);
        return -EXDEV;
    }
    return fd;
}
