/* SPDX-License-Identifier: MIT */
/*
 * Fatal errors and diagnostics. These write straight to file descriptor 2
 * with write(2): no stdio lock is taken, so they are safe on any stack,
 * on a worker's scheduler context, and inside a signal handler.
 */
#ifndef CAP_UTIL_DIE_H
#define CAP_UTIL_DIE_H

/* Formats (printf subset: %s %d %u %lu %llu %x %lx %p %%) to stderr. */
void cap__say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "capriccio: fatal: ..." and aborts. */
_Noreturn void cap__die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CAP_UTIL_DIE_H */
