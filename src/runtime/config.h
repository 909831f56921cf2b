/* SPDX-License-Identifier: MIT */
/*
 * Settings, read once from the environment before main(). An invalid
 * value stops the program with a message that lists the valid ones; there
 * is never a silent default for a value that was given.
 *
 *   CAP_WORKERS     number of worker kernel threads, 1..1024 (default:
 *                   the CPUs in the process's affinity mask)
 *   CAP_STACK_SIZE  default thread stack: bytes, or with a K/M/G suffix,
 *                   CAP_STACK_MIN..CAP_STACK_MAX (default 256K)
 *   CAP_SCHED       fifo (default); resource and cohort are reserved
 *   CAP_MIGRATE     0 (default): a started thread stays on its worker;
 *                   1: idle workers may steal any runnable thread (see the
 *                   README for the TLS caveat)
 *   CAP_POOL_THREADS  the most kernel threads of the offload pool,
 *                   1..65536 (default 4096); bounded work uses at most 64
 *                   of them (io/offload.c)
 *   CAP_AFTER_LIBC  what to do when the library comes after libc in the
 *                   program's symbol search order, so that none of its
 *                   wrappers is reached (intercept/real.c): refuse
 *                   (default: stop with exit status 2 and how to link) or
 *                   native (start no runtime: the program runs on libc's
 *                   threads and calls, as its search order asks)
 *   CAP_STACK_*, CAP_LINKED_*: stack settings, parsed by
 *                   src/stack/settings.c (documented in docs/stacks.md)
 */
#ifndef CAP_RUNTIME_CONFIG_H
#define CAP_RUNTIME_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* CAP_WORKERS' bound, also the size of per-worker tables (io/idle.c,
 * io/diskstats.h). */
enum { CAP__MAX_WORKERS = 1024 };

typedef struct cap__config {
    int workers;
    size_t stack_size;
    const char *sched;
    bool migrate;
    int pool_threads;
    bool after_libc_native;
} cap__config;

extern __attribute__((visibility("hidden"))) cap__config cap__cfg;

/* Parses the environment into cap__cfg, or prints why and exits(2). */
void cap__config_load(void);

/* Helpers for the areas that parse their own settings (src/stack): a
 * decimal number with an optional K/M/G suffix, and the exit(2) message
 * that names the variable, the bad value and the valid ones. */
bool cap__config_parse_size(const char *s, unsigned long long *out);
_Noreturn void cap__config_bad(const char *var, const char *value, const char *valid);
/* A two-valued setting: var unset leaves *out alone; `off` sets it false,
 * `on` true, anything else stops the program listing `valid`. */
void cap__config_flag(const char *var, const char *off, const char *on, const char *valid,
                      bool *out);

#endif /* CAP_RUNTIME_CONFIG_H */
