/* SPDX-License-Identifier: MIT */
/*
 * Whether a futex word can be reached from this process only.
 *
 * The kernel keys a futex by the word's page: for a page of private
 * anonymous memory (the heap, stacks, .data and .bss, a private mapping
 * once written) by this process's address space and the address, even
 * when the call is a "shared" one (no FUTEX_PRIVATE_FLAG); otherwise (a
 * MAP_SHARED mapping, shm_open or memfd memory, an unwritten private
 * mapping of a file) by the page itself, which other processes may map.
 * So a shared futex wait on private anonymous memory can only be woken by
 * this process, exactly as a private one: libstdc++ 12 makes every
 * std::atomic::wait, std::latch and std::counting_semaphore wait shared,
 * and intercept/syscall.c parks such waits as private ones when this
 * says so, instead of holding an offload-pool thread each.
 *
 * The answer comes from /proc/self/pagemap (one 8-byte read, a page-table
 * walk in the kernel: about 250 ns here): bit 63 (present) or 62
 * (swapped), and not bit 61 (a file page or shared anonymous memory). A
 * page absent from the page tables, or no pagemap (no /proc), answers
 * no: the caller then waits in the kernel, as before.
 *
 * The descriptor is opened at start-up at a number the application does
 * not see (io/ownfd.h). It stands for the address space that opened it,
 * so a fork's child opens its own (cap__futex_key_forked).
 *
 * The answer holds while the page stays mapped; a program that unmaps
 * memory a thread waits on has undefined behaviour in the kernel too.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/syscall.h"
#include "io/ownfd.h"
#include "sync/sync.h"

#define PAGEMAP_PRESENT (UINT64_C(1) << 63)
#define PAGEMAP_SWAPPED (UINT64_C(1) << 62)
#define PAGEMAP_FILE_OR_SHARED (UINT64_C(1) << 61)

static int pagemap_fd = -1; /* -1: not open, every answer is no */
static uintptr_t page_size = 4096;

static int open_pagemap(void)
{
    return (int)cap__sys6(SYS_openat, AT_FDCWD, (long)"/proc/self/pagemap",
                          O_RDONLY | O_CLOEXEC, 0, 0, 0);
}

void cap__futex_key_init(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    if (ps > 0)
        page_size = (uintptr_t)ps;
    int fd = open_pagemap();
    if (fd >= 0)
        pagemap_fd = cap__ownfd_adopt(fd);
}

void cap__futex_key_forked(void)
{
    /* The parent's address space behind the same number: the child's
     * instead (only the forking thread runs, so the short-lived low
     * number is safe, as in sched/deadlock.c). */
    if (pagemap_fd < 0)
        return;
    int fd = open_pagemap();
    if (fd < 0) {
        cap__sys6(SYS_close, pagemap_fd, 0, 0, 0, 0, 0);
        pagemap_fd = -1;
        return;
    }
    if (fd != pagemap_fd) {
        cap__sys6(SYS_dup3, fd, pagemap_fd, O_CLOEXEC, 0, 0, 0);
        cap__sys6(SYS_close, fd, 0, 0, 0, 0, 0);
    }
}

bool cap__futex_key_local(const void *word)
{
    if (pagemap_fd < 0)
        return false;
    uint64_t entry = 0;
    long off = (long)((uintptr_t)word / page_size * sizeof entry);
    if (cap__sys6(SYS_pread64, pagemap_fd, (long)&entry, sizeof entry, off, 0, 0) !=
        (long)sizeof entry)
        return false;
    return (entry & (PAGEMAP_PRESENT | PAGEMAP_SWAPPED)) != 0 &&
           (entry & PAGEMAP_FILE_OR_SHARED) == 0;
}
