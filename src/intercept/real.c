/* SPDX-License-Identifier: MIT */
/*
 * Finding libc's definitions of the names we interpose, and giving
 * threads we do not run the blocking behaviour they expect from the
 * sockets we made non-blocking.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "intercept/intercept.h"
#include "io/io.h"
#include "util/clock.h"
#include "util/die.h"

void *cap__real_sym(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (p == NULL)
        cap__die("cannot find libc's %s: %s\n", name, dlerror());
    return p;
}

__attribute__((noipa)) void cap__ic_set_errno(int e)
{
    errno = e;
}

__attribute__((noipa)) int cap__ic_errno(void)
{
    return errno;
}

bool cap__ic_emulated(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    return f != NULL &&
           (atomic_load(&f->flags) & (CAP__FDF_OWNED | CAP__FDF_APP_NONBLOCK)) == CAP__FDF_OWNED;
}

int cap__ic_foreign_wait(int fd, int dir)
{
    cap__fd *f = cap__fd_peek(fd);
    uint64_t deadline = f != NULL ? cap__io_deadline(f, dir) : CAP__FOREVER;
    struct pollfd p = { .fd = fd, .events = dir == CAP__IO_READ ? POLLIN : POLLOUT };
    for (;;) {
        struct timespec ts, *tsp = NULL;
        if (deadline != CAP__FOREVER) {
            uint64_t now = cap__now();
            if (now >= deadline)
                return -EAGAIN;
            ts = cap__ns_to_timespec(deadline - now);
            tsp = &ts;
        }
        long r = syscall(SYS_ppoll, &p, 1, tsp, NULL, 0);
        if (r > 0)
            return 0;
        if (r == 0)
            return -EAGAIN;
        if (errno != EINTR)
            return 0; /* let the call itself report the problem */
    }
}
