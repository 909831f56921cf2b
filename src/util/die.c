/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics without stdio: vsnprintf into a stack buffer, then write(2).
 * vsnprintf takes no locks, so this cannot deadlock against a FILE lock
 * held by the interrupted code. The write is a raw system call: the
 * library interposes `write` (src/intercept), and a fatal report from a
 * user thread must not park in the I/O layer, where the process could end
 * before the message is out.
 */
#include "util/die.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void vsay(const char *prefix, const char *fmt, va_list ap)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%s", prefix);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    for (size_t off = 0; off < len;) {
        ssize_t w = syscall(SYS_write, 2, buf + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

void cap__say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay("", fmt, ap);
    va_end(ap);
}

void cap__die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay("capriccio: fatal: ", fmt, ap);
    va_end(ap);
    abort();
}
