/* SPDX-License-Identifier: MIT */
/*
 * Finding libc's definitions of the names we interpose, checking at
 * start-up that ours come first, and giving threads we do not run the
 * blocking behaviour they expect from the sockets we made non-blocking.
 */
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "intercept/intercept.h"
#include "io/io.h"
#include "runtime/config.h"
#include "util/clock.h"
#include "util/compiler.h"
#include "util/die.h"
#include "util/sigctx.h"

void *cap__real_sym(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (p == NULL)
        cap__die("cannot find libc's %s: %s\n", name, dlerror());
    return p;
}

/* The object that defines the code at addr (NULL if none). */
static struct link_map *object_of(void *addr)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (addr == NULL || dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP) == 0)
        return NULL;
    return map;
}

/* The library interposes only if it comes before libc in the global
 * search order. It comes after libc when the program reaches it only
 * through another library (the program links libfoo.so, which links
 * libcapriccio.so), when the linker dropped a -lcapriccio given before
 * the objects that use it (--as-needed), and when it was dlopen()ed:
 * then every call the library wraps goes straight to libc. Running the
 * runtime then would be worse than not: main would be a user thread
 * whose blocking calls block a worker and every user thread on it, and
 * the workers' signal masks would meet the program's own, unmanaged (a
 * program built on APR with the library second was killed by the SIGHUP
 * its signal thread waited for). So start-up refuses, with how to link
 * instead (runtime/init.c), unless CAP_AFTER_LIBC=native asks to leave
 * the program to libc altogether (a test suite's helper programs that
 * link only a library built on ours). The test is where the program's
 * `read` resolves: in libc only then. Linked into the program
 * (libcapriccio.a) ours is the program's, exported because libc defines
 * the name too; another interposer that comes first (a sanitizer's
 * runtime, another preload) forwards to the next definition. */
bool cap__ic_interposed(void)
{
    struct link_map *libc = object_of((void *)&gnu_get_libc_version);
    return libc == NULL || object_of(dlsym(RTLD_DEFAULT, "read")) != libc;
}

_Noreturn void cap__ic_order_refuse(const char *what)
{
    struct link_map *ours = object_of((void *)&cap__ic_order_refuse);
    const char *name = ours != NULL && ours->l_name[0] != '\0' ? ours->l_name : "libcapriccio.so";
    cap__say("capriccio: %s comes after libc in this program's symbol search order, so "
             "the calls it wraps (read, accept, poll, sleep, ...) would go to libc and "
             "block its workers; %s. Link the program itself with the library, with "
             "-lcapriccio after the program's objects (and -Wl,--no-as-needed before it "
             "if the linker drops it), or start it with LD_PRELOAD=%s%s\n",
             name, what, name,
             cap__cfg.after_libc_native ? ""
                                        : "; CAP_AFTER_LIBC=native runs it on libc's "
                                          "threads instead, without the library");
    _exit(2);
}

CAP__OPAQUE_CALL void cap__ic_set_errno(int e)
{
    errno = e;
}

CAP__OPAQUE_CALL int cap__ic_errno(void)
{
    return errno;
}

bool cap__ic_emulated(int fd)
{
    cap__fd *f = cap__fd_peek(fd);
    return f != NULL &&
           (atomic_load(&f->flags) & (CAP__FDF_OWNED | CAP__FDF_APP_NONBLOCK)) == CAP__FDF_OWNED;
}

int cap__ic_lifted_poll(struct pollfd *fds, nfds_t n, uint64_t deadline, bool *lifted)
{
    struct cap__sig_lift lift;
    *lifted = cap__sig_lift(&lift);
    if (!*lifted)
        return 0;
    int r = cap__io_poll(fds, n, deadline, NULL);
    cap__sig_unlift(&lift);
    return r;
}

/* The handlers run on this kernel thread that interrupt a wait with this
 * deadline: without SA_RESTART, or any when a timeout is set, which
 * Linux's socket calls are not restarted over (signal(7)). */
static unsigned long breaks_for(uint64_t deadline)
{
    return deadline == CAP__FOREVER ? cap__handler_breaks : cap__handler_runs;
}

int cap__ic_foreign_wait(int fd, int dir)
{
    cap__fd *f = cap__fd_peek(fd);
    uint64_t deadline = f != NULL ? cap__io_deadline(f, dir) : CAP__FOREVER;
    unsigned long breaks = breaks_for(deadline);
    struct pollfd p = { .fd = fd, .events = dir == CAP__IO_READ ? POLLIN : POLLOUT };
    /* A handler its thread delivered to itself waits as that thread, not
     * blocking the worker's others, one of which may be what it waits
     * for (util/sigctx.h). */
    bool lifted;
    int r = cap__ic_lifted_poll(&p, 1, deadline, &lifted);
    if (lifted)
        return r == 0 ? -EAGAIN : 0;
    for (;;) {
        /* A handler that interrupts the call the kernel would have made
         * (not a SA_RESTART one of a restartable call) ran since the wait
         * began: EINTR, as from that call, which found nothing. */
        if (breaks_for(deadline) != breaks)
            return -EINTR;
        struct timespec ts, *tsp = NULL;
        if (deadline != CAP__FOREVER) {
            uint64_t now = cap__now();
            if (now >= deadline)
                return -EAGAIN;
            ts = cap__ns_to_timespec(deadline - now);
            tsp = &ts;
        }
        /* Raw: errno stays as it was (the call that follows may succeed,
         * and a successful call leaves errno alone). */
        long r = cap__sys6(SYS_ppoll, (long)&p, 1, (long)tsp, 0, 0, 0);
        if (r > 0)
            return 0;
        if (r == 0)
            return -EAGAIN;
        if (r != -EINTR)
            return 0; /* let the call itself report the problem */
    }
}
