/* SPDX-License-Identifier: MIT */
/* Description: a recycled stack whose thread went deeper than the trim
 * threshold gives the pages beyond it back to the kernel (RSS falls, the
 * stats count a trim), also when the deep frames left the probed word zero
 * (the sampled mincore check); a stack reused by shallow threads keeps its
 * top pages: no trims and (almost) no page faults per reuse. */
#include <capriccio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"

enum { STACK = 2 << 20, DEEP = 1 << 20 };

/* What RSS may keep after the deep pages went back: the trim threshold's
 * pages and the process's own noise; under ASan also the shadow of the
 * deep frames (an eighth of them, not given back), whose resident part
 * moves by ~50 KiB with the layout (196 or 244 KiB measured). Either way
 * far below the 1 MiB a missing trim would keep. */
#ifdef __SANITIZE_ADDRESS__
enum { RSS_SLACK_KIB = 512 };
#else
enum { RSS_SLACK_KIB = 256 };
#endif

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    CHECK(f != NULL);
    CHECK_EQ(fscanf(f, "%ld %ld", &pages, &res), 2);
    fclose(f);
    return res * 4;
}

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* Uses about DEEP bytes of stack, filled with `fill`. */
static __attribute__((noinline)) void *deep(void *arg)
{
    int fill = (int)(long)arg;
    volatile char buf[DEEP];
    memset((char *)buf, fill, sizeof buf);
    /* The memset is not a volatile access: clang keeps only the byte read
     * below unless the whole buffer may be read. */
    __asm__ volatile("" : : "r"(buf) : "memory");
    return (void *)(long)buf[12345];
}

static void *shallow(void *arg)
{
    volatile char buf[1024];
    memset((char *)buf, 1, sizeof buf);
    __asm__ volatile("" : : "r"(buf) : "memory"); /* as in deep() */
    return (void *)(long)buf[3];
}

static void run(void *(*fn)(void *), void *arg, const cap_thread_attr_t *attr)
{
    cap_thread_t t;
    CHECK_EQ(cap_thread_create(&t, attr, fn, arg), 0);
    CHECK_EQ(cap_thread_join(t, NULL), 0);
}

static uint64_t trims(void)
{
    cap_stack_stats_t st;
    CHECK_EQ(cap_stack_stats(&st), 0);
    return st.trims;
}

int main(void)
{
    /* A stack size no other thread uses: the size class holds only the
     * stack these threads share, LIFO (one worker, tests.cmake: with two,
     * each worker's TCB cache could keep a stack of this size, and a
     * second stack's pages and ASan shadow would blur the RSS checks). */
    cap_thread_attr_t attr;
    cap_thread_attr_init(&attr);
    CHECK_EQ(cap_thread_attr_setstacksize(&attr, STACK), 0);

    /* Shallow reuse: after the first run, no trims and no faults. */
    run(shallow, NULL, &attr);
    uint64_t t0 = trims();
    long f0 = minor_faults();
    for (int i = 0; i < 1000; i++)
        run(shallow, NULL, &attr);
    long faults = minor_faults() - f0;
    CHECK_EQ(trims(), t0);
    CHECK_LT(faults, 100); /* 1000 reuses; a fault per reuse would be >= 1000 */

    /* Deep, non-zero frames: trimmed on the spot. */
    long before = rss_kib();
    run(deep, (void *)1L, &attr);
    long after = rss_kib();
    CHECK_EQ(trims(), t0 + 1);
    fprintf(stderr, "RSS before %ld KiB, after the deep thread exited %ld KiB\n", before,
            after);
    CHECK_LT(after, before + RSS_SLACK_KIB); /* the 1 MiB it touched went back */

    /* Deep frames of zeros: the probe word reads zero; the sampled
     * mincore check (1 free or keep in 256) finds the pages within one
     * sampling period of reuses. */
    run(deep, (void *)0L, &attr);
    for (int i = 0; i < 600 && trims() == t0 + 1; i++)
        run(shallow, NULL, &attr);
    CHECK_EQ(trims(), t0 + 2);
    CHECK_LT(rss_kib(), before + RSS_SLACK_KIB);
    return 0;
}
