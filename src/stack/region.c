/* SPDX-License-Identifier: MIT */
/*
 * Address space for stacks (pool.c) and linked-stack chunks (linked.c):
 * large regions reserved with MAP_NORESERVE, so that a million stacks
 * cost a few hundred mmap calls and no swap reservation, and carved by
 * the caller. Transparent huge pages are off in each: with THP "always",
 * a 2 MiB-aligned stretch of a large stack would be faulted in (and
 * zeroed) whole on first touch, and count in RSS whole; stacks are
 * touched sparsely, and 4 KiB pages keep RSS to what is used.
 *
 * A region is 1 GiB, or a sixteenth of the address-space limit
 * (RLIMIT_AS, `ulimit -v`) when that is less, so that a program run under
 * a limit of a few tens of MiB starts, as it does on NPTL, and the stacks
 * leave room for the rest (kernel threads' stacks, the heap). A mapping
 * that still does not fit (the limit nearly used up; strict overcommit,
 * which charges MAP_NORESERVE too) is asked again at half the size, down
 * to what the one request needs.
 *
 * linked.c calls this on its link path, where no vector register may
 * change (see its header): so this file is compiled as it is, with
 * -mgeneral-regs-only (cmake/linked.cmake), and makes raw system calls
 * only.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "arch/syscall.h"
#include "stack/internal.h"

#define REGION_MAX ((size_t)1 << 30)
#define REGION_ALIGN ((size_t)1 << 16) /* a whole number of pages */
enum { LIMIT_SHARE = 16 };

static size_t region_bytes(void)
{
    struct rlimit rl;
    if (cap__sys6(SYS_prlimit64, 0, RLIMIT_AS, 0, (long)&rl, 0, 0) != 0 ||
        rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / LIMIT_SHARE >= REGION_MAX)
        return REGION_MAX;
    return (size_t)(rl.rlim_cur / LIMIT_SHARE) & ~(REGION_ALIGN - 1);
}

void *cap__stack_region_map(size_t need, size_t *len)
{
    size_t want = region_bytes();
    for (;;) {
        size_t bytes = want > need ? want : need;
        long p = cap__sys6(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (p < 0 && p >= -4095) { /* -errno */
            if (p != -ENOMEM || bytes == need)
                return NULL;
            want /= 2;
            continue;
        }
        cap__sys6(SYS_madvise, p, (long)bytes, MADV_NOHUGEPAGE, 0, 0, 0);
        *len = bytes;
        return (void *)p;
    }
}
