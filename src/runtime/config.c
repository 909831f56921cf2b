/* SPDX-License-Identifier: MIT */
/*
 * Reads the CAP_* environment variables once, before main(). See config.h
 * for the table of settings. Errors exit with status 2 and a message that
 * names the variable, the bad value and what would have been valid.
 */
#include "runtime/config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capriccio.h"
#include "stack/stack.h"
#include "util/die.h"

enum { MAX_POOL_THREADS = 65536 };
#define DEFAULT_STACK_SIZE ((size_t)256 * 1024)

cap__config cap__cfg = {
    .workers = 1,
    .stack_size = DEFAULT_STACK_SIZE,
    .sched = "fifo",
    .migrate = false,
    .pool_threads = 4096,
};

static _Noreturn void bad_setting(const char *var, const char *value, const char *valid)
{
    cap__say("capriccio: invalid %s=\"%s\"; valid values: %s\n", var, value, valid);
    _exit(2);
}

/* Parses a whole decimal number with an optional K/M/G suffix. */
static bool parse_size(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v > (ULLONG_MAX >> shift))
        return false;
    *out = v << shift;
    return true;
}

/* The CPUs the process may run on: its affinity mask (taskset, a cpuset),
 * else the online count (a mask too large for cpu_set_t). More workers
 * than that share CPUs: a worker with threads to run then waits for the
 * kernel to schedule its kernel thread, up to a tick (HTTP hello under
 * taskset -c 1 with two workers: p99 4.0 ms against 0.14 ms with one,
 * and 40% fewer requests/s). Go's GOMAXPROCS default counts the same. */
static long usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN);
}

static void load_workers(void)
{
    long cpus = usable_cpus();
    cap__cfg.workers = cpus < 1 ? 1 : cpus > CAP__MAX_WORKERS ? CAP__MAX_WORKERS : (int)cpus;

    const char *s = getenv("CAP_WORKERS");
    if (s == NULL)
        return;
    unsigned long long v;
    if (!parse_size(s, &v) || strpbrk(s, "kKmMgG") != NULL || v < 1 || v > CAP__MAX_WORKERS)
        bad_setting("CAP_WORKERS", s, "a whole number from 1 to 1024");
    cap__cfg.workers = (int)v;
}

static void load_stack_size(void)
{
    const char *s = getenv("CAP_STACK_SIZE");
    if (s == NULL)
        return;
    unsigned long long v;
    if (!parse_size(s, &v) || v < CAP_STACK_MIN || v > CAP_STACK_MAX)
        bad_setting("CAP_STACK_SIZE", s,
                    "bytes from 16384 to 1073741824, optionally with a K, M or G suffix "
                    "(for example 64K or 1M)");
    cap__cfg.stack_size = (size_t)v;
}

static void load_sched(void)
{
    const char *s = getenv("CAP_SCHED");
    if (s == NULL)
        return;
    if (strcmp(s, "fifo") == 0) {
        cap__cfg.sched = "fifo";
        return;
    }
    if (strcmp(s, "resource") == 0 || strcmp(s, "cohort") == 0) {
        cap__say("capriccio: CAP_SCHED=%s is reserved for a scheduler that is not "
                 "implemented yet; valid values: fifo\n", s);
        _exit(2);
    }
    bad_setting("CAP_SCHED", s, "fifo (resource and cohort are reserved)");
}

void cap__config_flag(const char *var, const char *off, const char *on, const char *valid,
                      bool *out)
{
    const char *s = getenv(var);
    if (s == NULL)
        return;
    if (strcmp(s, off) == 0)
        *out = false;
    else if (strcmp(s, on) == 0)
        *out = true;
    else
        bad_setting(var, s, valid);
}

static void load_migrate(void)
{
    cap__config_flag("CAP_MIGRATE", "0", "1",
                     "0 (threads stay on their worker) or 1 (full migration)", &cap__cfg.migrate);
}

static void load_after_libc(void)
{
    cap__config_flag("CAP_AFTER_LIBC", "refuse", "native",
                     "refuse (stop the program) or native (leave it to libc's threads)",
                     &cap__cfg.after_libc_native);
}

static void load_pool_threads(void)
{
    const char *s = getenv("CAP_POOL_THREADS");
    if (s == NULL)
        return;
    unsigned long long v;
    if (!parse_size(s, &v) || strpbrk(s, "kKmMgG") != NULL || v < 1 || v > MAX_POOL_THREADS)
        bad_setting("CAP_POOL_THREADS", s, "a whole number from 1 to 65536");
    cap__cfg.pool_threads = (int)v;
}

void cap__config_load(void)
{
    load_workers();
    load_stack_size();
    load_sched();
    load_migrate();
    load_pool_threads();
    load_after_libc();
    cap__stack_config_load(); /* CAP_STACK_* and linked-stack settings */
}

/* For the per-area loaders (src/stack/settings.c): same syntax, same
 * messages. */
bool cap__config_parse_size(const char *s, unsigned long long *out)
{
    return parse_size(s, out);
}

void cap__config_bad(const char *var, const char *value, const char *valid)
{
    bad_setting(var, value, valid);
}
